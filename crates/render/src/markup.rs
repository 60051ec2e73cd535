//! Python's `Markup + str` at run time: the helper that [`super::rewrite`] routes
//! Markup `+` expressions to, with markupsafe's semantics.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

/// Registers the runtime helper under this template's name for it.
pub(crate) fn register(
    env: &mut minijinja::Environment<'static>,
    helpers: &super::helpers::Helpers,
) {
    env.add_filter(helpers.markup_add(), markup_add);
}

/// `left + right` with markupsafe semantics when one side is Markup.
fn markup_add(state: &State, left: Value, right: Value) -> Result<Value, Error> {
    super::scope::tick(Some(state))?;
    // Jinja2's `Undefined.__add__` and `__radd__` raise before any `str` or Markup
    // method decides (`Markup.__add__` returns NotImplemented for an Undefined), so an
    // undefined operand, the left one first, is the UndefinedError whatever the other is.
    if let Some(undefined) = [&left, &right].into_iter().find(|v| v.is_undefined()) {
        return Err(undefined_error(undefined));
    }
    let is_str = |v: &Value| v.kind() == ValueKind::String;
    if !(left.is_safe() || right.is_safe()) {
        return plain_add(state, left, right);
    }
    if !(is_str(&left) && is_str(&right)) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!(
                "TypeError: unsupported operand type(s) for +: '{}' and '{}'",
                markup_type_name(&left),
                markup_type_name(&right)
            ),
        ));
    }
    let sizes = [&left, &right].map(|v| v.as_str().map_or(0, str::len));
    // Escaping can grow text sixfold (`"` becomes `&#34;`).
    super::scope::reserve(Some(state), (sizes[0] + sizes[1]).saturating_mul(6))?;
    let escaped = |v: &Value| {
        let text = v.as_str().unwrap_or_default();
        if v.is_safe() {
            text.to_string()
        } else {
            escape_html(text)
        }
    };
    Ok(Value::from_safe_string(escaped(&left) + &escaped(&right)))
}

/// The error MiniJinja raises for an operation on `undefined`: it carries the value's
/// origin, which the render that examines a failure turns into the expression that made
/// it (`'nothing' is undefined`, `'dict object' has no attribute 'x'`).
pub(crate) fn undefined_error(undefined: &Value) -> Error {
    undefined
        .get_attr("__add__")
        .err()
        .unwrap_or_else(|| Error::new(ErrorKind::UndefinedError, "undefined value"))
}

/// Python's type name, with a `|safe` string called what it is there: `Markup`.
fn markup_type_name(value: &Value) -> &'static str {
    if value.is_safe() && value.kind() == ValueKind::String {
        "Markup"
    } else {
        super::pytype::type_name(value)
    }
}

/// Ordinary `+` for operands that turned out not to be Markup at run time.
fn plain_add(state: &State, left: Value, right: Value) -> Result<Value, Error> {
    let expr = state.env().compile_expression("__left + __right")?;
    let names = [&left, &right].map(super::pytype::type_name);
    expr.eval(Value::from_pairs([("__left", left), ("__right", right)]))
        .map_err(|err| {
            // Python's wording, as a failed `+` outside the helper gets it (`diagnose`).
            match super::pyerror::operator_error("+", names[0], names[1]) {
                Some(python) if err.kind() == ErrorKind::InvalidOperation => {
                    super::pyerror::raise("TypeError", python.message)
                }
                _ => err,
            }
        })
}

/// markupsafe's `escape`: `& < > ' "`.
pub(crate) fn escape_html(text: &str) -> String {
    escape_into(String::with_capacity(escaped_len(text)), text)
}

/// [`escape_html`], charged to the render's byte budget before anything is built: the
/// escaped text (up to five times the input) and its copy into a template value.
pub(crate) fn escape_charged(state: Option<&State>, text: &str) -> Result<String, Error> {
    let len = escaped_len(text);
    super::scope::reserve(state, len.saturating_mul(2))?;
    Ok(escape_into(String::with_capacity(len), text))
}

/// The length of `text` once escaped.
fn escaped_len(text: &str) -> usize {
    text.bytes().fold(0usize, |len, byte| {
        len.saturating_add(match byte {
            b'&' | b'\'' | b'"' => 5,
            b'<' | b'>' => 4,
            _ => 1,
        })
    })
}

fn escape_into(mut out: String, text: &str) -> String {
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&#39;"),
            '"' => out.push_str("&#34;"),
            c => out.push(c),
        }
    }
    out
}
