//! Jinja2's HTML filters with markupsafe's semantics: `escape` (`e`), `forceescape`,
//! `striptags` and `xmlattr`. transformers renders with autoescape off, so their
//! results are plain strings except `escape` and `forceescape`, which return Markup.
//! Escaping can make a text five times longer in one call; it is charged to the
//! render's byte budget before it is built.

use std::borrow::Cow;

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, State};

use super::markup::escape_charged;
use super::none::is_python_none;
use super::pyerror::{raise, repr};
use super::pyrepr::{to_str, to_str_in};
use super::strmethods::is_space;

/// Registers the filters.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    env.add_filter("escape", escape);
    env.add_filter("e", escape);
    env.add_filter("forceescape", forceescape);
    env.add_filter("striptags", |value: Value| striptags(&to_str(&value)));
    env.add_filter("xmlattr", xmlattr);
}

/// markupsafe's `escape(value)`: Markup as it is, anything else as `str(value)` with
/// `& < > ' "` escaped (MiniJinja's own filter also escapes `/` and uses other entities).
fn escape(state: &State, value: Value) -> Result<Value, Error> {
    if value.is_safe() {
        return Ok(value);
    }
    forceescape(state, value)
}

/// Jinja2's `forceescape`: `str(value)` escaped, even when it is Markup.
fn forceescape(state: &State, value: Value) -> Result<Value, Error> {
    super::scope::tick(Some(state))?;
    let text = match value.as_str() {
        Some(text) if value.kind() == ValueKind::String => Cow::Borrowed(text),
        _ => Cow::Owned(to_str_in(Some(state), &value)?),
    };
    Ok(Value::from_safe_string(escape_charged(Some(state), &text)?))
}

/// markupsafe's `Markup.striptags`: comments and tags removed (an unclosed one ends
/// the search), whitespace runs collapsed to one space, then HTML entities decoded.
fn striptags(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut pos = 0;
    while let Some(found) = text[pos..].find('<') {
        let start = pos + found;
        let (closer, from) = if text[start..].starts_with("<!--") {
            ("-->", start + 4)
        } else {
            (">", start)
        };
        let Some(end) = text[from..].find(closer) else {
            break;
        };
        kept.push_str(&text[pos..start]);
        pos = from + end + closer.len();
    }
    kept.push_str(&text[pos..]);
    let collapsed = kept
        .split(is_space)
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    htmlize::unescape(collapsed).into_owned()
}

/// Jinja2's `xmlattr(d, autospace=True)`: `key="value"` pairs, values (and keys)
/// HTML-escaped, `None` and undefined values left out, keys with whitespace, `/`, `>`
/// or `=` refused.
fn xmlattr(state: &State, value: Value, autospace: Option<bool>) -> Result<String, Error> {
    super::scope::tick(Some(state))?;
    if value.kind() != ValueKind::Map {
        return Err(raise(
            "AttributeError",
            format!(
                "{} object has no attribute 'items'",
                repr(super::pytype::type_name(&value))
            ),
        ));
    }
    let mut out = String::new();
    for key in value.try_iter()? {
        let item = value.get_item(&key)?;
        if item.is_undefined() || is_python_none(&item) {
            continue;
        }
        let key = to_str_in(Some(state), &key)?;
        if key.contains(|c: char| c.is_ascii_whitespace() || "/>=\u{b}".contains(c)) {
            return Err(raise(
                "ValueError",
                format!("Invalid character in attribute name: {}", repr(&key)),
            ));
        }
        // Each value escaped (up to five times its length, charged first) and appended
        // to the result, which is charged before it grows.
        let item = to_str_in(Some(state), &item)?;
        let separator = if out.is_empty() && !autospace.unwrap_or(true) {
            ""
        } else {
            " "
        };
        let pair = format!(
            "{separator}{}=\"{}\"",
            escape_charged(Some(state), &key)?,
            escape_charged(Some(state), &item)?
        );
        super::scope::push_charged(Some(state), &mut out, &pair)?;
    }
    // Becoming a template value copies it.
    super::scope::reserve(Some(state), out.len())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::striptags;

    // markupsafe 3.0.4: Markup('<p>Hi &amp; <b>you</b></p>  <!-- c -->  &nbsp;x &copy
    // &#39; &unknown;').striptags() == "Hi & you \xa0x © ' &unknown;"
    #[test]
    fn strips_like_markupsafe() {
        assert_eq!(
            striptags("<p>Hi &amp; <b>you</b></p>  <!-- c -->  &nbsp;x &copy &#39; &unknown;"),
            "Hi & you \u{a0}x © ' &unknown;"
        );
        assert_eq!(striptags("a <b unclosed"), "a <b unclosed");
    }
}
