//! Jinja tests (`is string`, `is none`, ...) with Python's answers.
//!
//! MiniJinja's built-ins disagree with Jinja2 on a few that chat templates lean on:
//! Jinja2's `sequence` and `iterable` accept strings and dicts, `undefined is iterable`
//! is true, and `None` (including the input-data [`super::none::PyNone`]) is neither.

use minijinja::value::{Value, ValueKind};

use super::none::is_python_none;

/// MiniJinja's tests that Jinja2 does not have: a template must not see them.
const NOT_IN_JINJA2: [&str; 4] = ["safe", "int", "startingwith", "endingwith"];

/// Registers every overriding test on `env`, and removes MiniJinja's extras.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    for name in NOT_IN_JINJA2 {
        env.remove_test(name);
    }
    env.add_test("none", |v: Value| is_python_none(&v));
    env.add_test("iterable", is_iterable);
    env.add_test("sequence", is_sequence);
    env.add_test("mapping", |v: Value| v.kind() == ValueKind::Map);
    env.add_test("string", |v: Value| v.kind() == ValueKind::String);
    env.add_test("boolean", |v: Value| v.kind() == ValueKind::Bool);
    env.add_test("true", |v: Value| {
        v.kind() == ValueKind::Bool && v.is_true()
    });
    env.add_test("false", |v: Value| {
        v.kind() == ValueKind::Bool && !v.is_true()
    });
    // Python's bool is an int subclass, so `true is number` holds (but not `is integer`).
    env.add_test("number", |v: Value| {
        matches!(v.kind(), ValueKind::Number | ValueKind::Bool)
    });
    env.add_test("integer", |v: Value| v.is_integer());
    env.add_test("float", |v: Value| {
        v.kind() == ValueKind::Number && !v.is_integer()
    });
    env.add_test("callable", is_callable);
}

/// Python's `callable()`: functions, macros, `loop` and Jinja's Undefined (which has a
/// `__call__` that raises) are; data, `None` and namespaces are not.
fn is_callable(value: Value) -> bool {
    match value.kind() {
        ValueKind::Undefined => true,
        ValueKind::Plain => !is_python_none(&value),
        // MiniJinja's macros are map-like objects with exactly these three keys.
        ValueKind::Map if value.len() == Some(3) => value.to_string().starts_with("<macro "),
        _ => false,
    }
}

/// Python `iter(x)` succeeds: strings, lists, dicts, generators, and Jinja's Undefined.
fn is_iterable(value: Value) -> bool {
    if is_python_none(&value) {
        return false;
    }
    matches!(
        value.kind(),
        ValueKind::Undefined
            | ValueKind::String
            | ValueKind::Bytes
            | ValueKind::Seq
            | ValueKind::Map
            | ValueKind::Iterable
    )
}

/// Jinja2's `sequence`: has `len()` and `__getitem__` (strings, lists, tuples, dicts,
/// and Jinja's Undefined).
fn is_sequence(value: Value) -> bool {
    if is_python_none(&value) || super::generators::is_generator(&value) {
        return false;
    }
    if value.kind() == ValueKind::Iterable {
        // MiniJinja's lazy lists (`a + b`, slices) are Python lists.
        return true;
    }
    matches!(
        value.kind(),
        ValueKind::Undefined
            | ValueKind::String
            | ValueKind::Bytes
            | ValueKind::Seq
            | ValueKind::Map
    )
}
