//! Jinja2's wording for runtime errors.
//!
//! Users debug templates by the messages transformers shows them, which are Python's and
//! Jinja2's. The compatibility layer raises its own errors as `"Class: message"` (see
//! [`raise`]); MiniJinja's own errors are translated here by what they mean: a failed
//! operation on an undefined value becomes Jinja2's `UndefinedError` with the hint
//! Jinja2 builds from how the value was looked up, a `+` on mismatched types becomes
//! Python's `TypeError`, and so on. Anything without a known counterpart keeps
//! MiniJinja's text and no Python class.

use minijinja::{Error, ErrorKind};

use super::pyrepr::write_str_repr;
use super::undefined;

/// The Python exception classes the layer raises or translates to.
const CLASSES: [&str; 16] = [
    "TypeError",
    "ValueError",
    "KeyError",
    "IndexError",
    "AttributeError",
    "ZeroDivisionError",
    "OverflowError",
    "RuntimeError",
    "LookupError",
    "UnicodeEncodeError",
    "UnicodeDecodeError",
    "UndefinedError",
    "SecurityError",
    "TemplateError",
    "TemplateRuntimeError",
    "TemplateAssertionError",
];

/// A runtime error as Python would report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyError {
    /// The exception class, when the failure has a Python counterpart.
    pub class: Option<&'static str>,
    /// `str(exception)`.
    pub message: String,
}

/// An error the compatibility layer raises, written the way Python would report it.
pub(crate) fn raise(class: &'static str, message: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("{class}: {message}"))
}

/// Translates a runtime error; `detail` is its message with chained causes.
pub(crate) fn translate(kind: ErrorKind, detail: &str) -> PyError {
    if detail.starts_with("can only assign to namespaces") {
        // Jinja2 checks the target's type, undefined or not.
        return runtime("cannot assign attribute on non-namespace object".into());
    }
    // An operation on an undefined value is Jinja2's UndefinedError, whatever failed.
    if let Some(expr) = undefined_expression(detail) {
        return PyError {
            class: Some("UndefinedError"),
            message: undefined::hint(expr),
        };
    }
    if let Some(found) = own_error(detail) {
        return found;
    }
    let translated = match kind {
        ErrorKind::UnknownFilter => named_after("filter ", " is unknown", detail).map(|name| {
            if super::assertions::is_jinja2_filter(name) {
                // Jinja2 has it; chatplate does not (see COMPATIBILITY.md).
                return PyError {
                    class: None,
                    message: format!("the {} filter is not supported by chatplate", repr(name)),
                };
            }
            runtime(format!("No filter named {} found.", repr(name)))
        }),
        ErrorKind::UnknownTest => named_after("test ", " is unknown", detail)
            .map(|name| runtime(format!("No test named {} found.", repr(name)))),
        ErrorKind::UnknownFunction => named_after("", " is unknown", detail).map(|name| PyError {
            class: Some("UndefinedError"),
            message: format!("{} is undefined", repr(name)),
        }),
        ErrorKind::CannotUnpack => unpack(detail),
        // transformers' environment has no loader: include, import and extends fail.
        ErrorKind::TemplateNotFound | ErrorKind::BadInclude => {
            type_error("no loader for this environment specified".into())
        }
        ErrorKind::InvalidOperation => invalid_operation(detail),
        _ => None,
    };
    translated.unwrap_or_else(|| PyError {
        class: None,
        message: detail.to_string(),
    })
}

/// `"TypeError: ..."` from this layer (possibly after MiniJinja's own context).
fn own_error(detail: &str) -> Option<PyError> {
    CLASSES.iter().find_map(|class| {
        let at = detail.find(&format!("{class}: "))?;
        let before = &detail[..at];
        // Only at the start, or after a chained cause's `": "`.
        (at == 0 || before.ends_with(": ")).then(|| PyError {
            class: Some(class),
            message: detail[at + class.len() + 2..].to_string(),
        })
    })
}

/// The expression MiniJinja names when an undefined value caused the error:
/// "... (`message.content` is undefined, from line 3)" or "`x` is undefined".
pub(crate) fn undefined_expression(detail: &str) -> Option<&str> {
    let end = detail.rfind("` is undefined")?;
    let start = detail[..end].rfind('`')? + 1;
    Some(&detail[start..end])
}

fn named_after<'a>(prefix: &str, suffix: &str, detail: &'a str) -> Option<&'a str> {
    detail.strip_prefix(prefix)?.strip_suffix(suffix)
}

fn runtime(message: String) -> PyError {
    PyError {
        class: Some("TemplateRuntimeError"),
        message,
    }
}

fn type_error(message: String) -> Option<PyError> {
    Some(PyError {
        class: Some("TypeError"),
        message,
    })
}

/// Python's `repr()` of a name.
pub(crate) fn repr(text: &str) -> String {
    let mut out = String::new();
    write_str_repr(&mut out, text);
    out
}

/// `{% for a, b in ... %}` over items of the wrong length.
fn unpack(detail: &str) -> Option<PyError> {
    let counts = detail.strip_prefix("sequence of wrong length (expected ")?;
    let (expected, got) = counts.strip_suffix(')')?.split_once(", got ")?;
    let (expected, got): (usize, usize) = (expected.parse().ok()?, got.parse().ok()?);
    let message = if got > expected {
        format!("too many values to unpack (expected {expected})")
    } else {
        format!("not enough values to unpack (expected {expected}, got {got})")
    };
    Some(PyError {
        class: Some("ValueError"),
        message,
    })
}

fn invalid_operation(detail: &str) -> Option<PyError> {
    if let Some(types) = detail.strip_prefix("tried to use ") {
        let (op, types) = types.split_once(" operator on unsupported types ")?;
        let (left, right) = types.split_once(" and ")?;
        return match (python_type(left), python_type(right)) {
            (Some(left), Some(right)) => operator_error(op, left, right),
            // A number or an object whose Python type the kind does not decide.
            _ => type_error(detail.to_string()),
        };
    }
    if let Some(operation) = detail.strip_prefix("unable to calculate ") {
        return zero_division(operation);
    }
    None
}

/// `1 / 0` and friends: Python's `ZeroDivisionError`, worded by operator and by whether
/// a float is involved (MiniJinja prints floats with a decimal point).
fn zero_division(operation: &str) -> Option<PyError> {
    let mut parts = operation.split(' ');
    let (left, op, right) = (parts.next()?, parts.next()?, parts.next()?);
    if right.parse::<f64>().ok()? != 0.0 {
        return None;
    }
    // MiniJinja prints floats with a point or an exponent, booleans as words.
    let float = [left, right]
        .iter()
        .any(|n| !matches!(*n, "true" | "false" | "True" | "False") && n.parse::<i128>().is_err());
    let message = match (op, float) {
        ("/", false) => "division by zero",
        ("/", true) => "float division by zero",
        ("//", false) => "integer division or modulo by zero",
        ("//", true) => "float floor division by zero",
        ("%", false) => "integer modulo by zero",
        ("%", true) => "float modulo",
        _ => return None,
    };
    Some(PyError {
        class: Some("ZeroDivisionError"),
        message: message.to_string(),
    })
}

/// The Python type of a MiniJinja value kind, where the kind decides it. Numbers (int or
/// float) and plain objects (None, namespaces, macros, ...) are not decided.
fn python_type(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "string" => "str",
        "map" => "dict",
        "sequence" => "list",
        "bool" => "bool",
        "none" => "NoneType",
        "bytes" => "bytes",
        _ => return None,
    })
}

/// Python's `TypeError` text for `left op right`.
pub(super) fn operator_error(op: &str, left: &str, right: &str) -> Option<PyError> {
    let sequence = |t: &str| matches!(t, "str" | "list" | "tuple");
    match op {
        "+" if sequence(left) && left != right => type_error(format!(
            "can only concatenate {left} (not \"{right}\") to {left}"
        )),
        "*" if sequence(left) || sequence(right) => {
            let other = if sequence(left) { right } else { left };
            type_error(format!(
                "can't multiply sequence by non-int of type '{other}'"
            ))
        }
        "**" => type_error(format!(
            "unsupported operand type(s) for ** or pow(): '{left}' and '{right}'"
        )),
        _ => type_error(format!(
            "unsupported operand type(s) for {op}: '{left}' and '{right}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expectations: CPython 3.11 / Jinja2 3.1.6 for the same operations.
    #[test]
    fn translates_operator_errors_like_python() {
        let err = translate(
            ErrorKind::InvalidOperation,
            "tried to use + operator on unsupported types string and map",
        );
        assert_eq!(err.class, Some("TypeError"));
        assert_eq!(
            err.message,
            "can only concatenate str (not \"dict\") to str"
        );
        let err = translate(
            ErrorKind::InvalidOperation,
            "tried to use - operator on unsupported types string and sequence",
        );
        assert_eq!(
            err.message,
            "unsupported operand type(s) for -: 'str' and 'list'"
        );
    }

    #[test]
    fn keeps_own_errors_and_unknown_names() {
        let err = translate(
            ErrorKind::InvalidOperation,
            "TypeError: 'NoneType' object is not iterable",
        );
        assert_eq!(err.class, Some("TypeError"));
        assert_eq!(err.message, "'NoneType' object is not iterable");
        let err = translate(ErrorKind::UnknownFilter, "filter from_json is unknown");
        assert_eq!(err.message, "No filter named 'from_json' found.");
        let err = translate(ErrorKind::UnknownFunction, "functions is unknown");
        assert_eq!(err.message, "'functions' is undefined");
    }

    #[test]
    fn unpacking_counts_like_python() {
        let err = translate(
            ErrorKind::CannotUnpack,
            "sequence of wrong length (expected 2, got 3)",
        );
        assert_eq!(err.message, "too many values to unpack (expected 2)");
    }
}
