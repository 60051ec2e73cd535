//! Python type names for values, used in error messages that mirror Python's.

use minijinja::value::{Value, ValueKind};

use super::none::is_python_none;

/// The Python type a template value corresponds to (`str`, `dict`, `NoneType`, ...).
pub(crate) fn type_name(value: &Value) -> &'static str {
    if is_python_none(value) {
        return "NoneType";
    }
    if super::loops::is_namespace(value) {
        // transformers' sandbox creates namespaces from its own class of that name.
        return "TemplateNamespace";
    }
    if is_loop(value) {
        return "LoopContext";
    }
    if is_macro(value) {
        return "Macro";
    }
    match value.kind() {
        ValueKind::Undefined => "Undefined",
        ValueKind::None => "NoneType",
        ValueKind::Bool => "bool",
        ValueKind::Number if value.is_integer() => "int",
        ValueKind::Number => "float",
        ValueKind::String => "str",
        ValueKind::Bytes => "bytes",
        ValueKind::Seq if value.is_tuple() => "tuple",
        ValueKind::Seq => "list",
        ValueKind::Map => "dict",
        ValueKind::Iterable if super::generators::is_generator(value) => "generator",
        ValueKind::Iterable => "list",
        ValueKind::Plain if super::boundmethods::is_bound_method(value) => {
            "builtin_function_or_method"
        }
        _ => "object",
    }
}

/// Whether `value` is a `for` loop's `loop` variable (MiniJinja's loop object, known only
/// by its type name: the type is private).
pub(crate) fn is_loop(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|object| object.type_name().ends_with("::Loop"))
}

/// Whether `value` is a macro (MiniJinja's macro object, known by its type name).
pub(crate) fn is_macro(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|object| object.type_name().ends_with("::Macro"))
}
