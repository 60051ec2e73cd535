//! `needle in container` with Python's errors.
//!
//! MiniJinja answers `false` for `'a' in tools` when `tools` is the conversation's
//! `None`, fails with its own words for `'a' in none` or `'a' in 5`, and looks for
//! `str(1)` in `1 in 'abc'`. Python raises `TypeError: argument of type 'NoneType' is
//! not iterable` and `'in <string>' requires string as left operand, not int`. Every
//! `in` and `not in` whose container is not a literal list or tuple is rewritten
//! ([`super::rewrite`]) into a call to [`contains`], which answers as MiniJinja does
//! wherever Python answers at all.

use std::ops::Range;

use minijinja::machinery::ast::{BinOp, Expr};
use minijinja::value::{ObjectRepr, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind, State};

use super::data::PyDict;
use super::edits::operator_filter;
use super::helpers::Helpers;
use super::pyerror::raise;
use super::pytype::type_name;
use super::rewrite::Cx;

/// Registers the helper under this template's name.
pub(crate) fn register(env: &mut Environment<'static>, helpers: &Helpers) {
    env.add_filter(helpers.contains(), contains);
}

/// The rewrite: `needle in container` (`whole`) becomes
/// `contains((needle), (container), false)`, and `needle not in container` passes
/// `true`. Only the keywords are replaced, so the operands keep their own edits (and
/// parentheses).
pub(crate) fn rewrite(whole: &Expr, op: &BinOp, cx: &mut Cx) {
    let (start, end) = cx.extents.of(whole);
    let (_, left_end) = cx.extents.of(&op.left);
    let (right_start, _) = cx.extents.of(&op.right);
    let between = cx.source.get(left_end..right_start).unwrap_or_default();
    let Some((keywords, negated)) = keywords(between) else {
        return;
    };
    let (first, after) = (left_end + keywords.start, left_end + keywords.end);
    operator_filter(
        &mut cx.edits,
        start..end,
        first..after,
        &cx.helpers.contains(),
        &negated.to_string(),
    );
}

/// Where `in` (or `not in`) lies in the text between an `in` operator's operands, and
/// whether it is `not in`.
fn keywords(between: &str) -> Option<(Range<usize>, bool)> {
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut word_start = None;
    let ends = std::iter::once((between.len(), ' '));
    for (at, ch) in between.char_indices().chain(ends) {
        match (ch.is_alphanumeric() || ch == '_', word_start) {
            (true, None) => word_start = Some(at),
            (false, Some(start)) => {
                words.push((start, &between[start..at]));
                word_start = None;
            }
            _ => {}
        }
    }
    match words.as_slice() {
        [(at, "in")] => Some((*at..at + 2, false)),
        [(at, "not"), (last, "in")] => Some((*at..last + 2, true)),
        _ => None,
    }
}

/// `needle in container`, or `needle not in container` when `negated`.
fn contains(state: &State, needle: Value, container: Value, negated: bool) -> Result<Value, Error> {
    let found = python_contains(state, &needle, &container)?;
    Ok(Value::from(found != negated))
}

fn python_contains(state: &State, needle: &Value, container: &Value) -> Result<bool, Error> {
    // The containers templates search on every turn first, without working out the
    // Python type name (its namespace, loop and macro checks): a string is always `str`,
    // a sequence is never one of those objects, and our own dict is a `dict` (only a
    // list or dict needle needs the slow path's unhashable-key error).
    match container.kind() {
        // Jinja2's Undefined iterates as nothing.
        ValueKind::Undefined => return Ok(false),
        ValueKind::String => return in_string(needle, container),
        ValueKind::Seq => return in_container(state, needle, container),
        ValueKind::Map
            if container.downcast_object_ref::<PyDict>().is_some()
                && !matches!(
                    needle.kind(),
                    ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
                ) =>
        {
            return in_container(state, needle, container);
        }
        _ => {}
    }
    match type_name(container) {
        "NoneType" | "bool" | "int" | "float" | "TemplateNamespace" | "Macro" => Err(raise(
            "TypeError",
            format!(
                "argument of type '{}' is not iterable",
                type_name(container)
            ),
        )),
        "str" => in_string(needle, container),
        "dict" if matches!(type_name(needle), "list" | "dict") => Err(raise(
            "TypeError",
            format!("unhashable type: '{}'", type_name(needle)),
        )),
        _ => in_container(state, needle, container),
    }
}

/// `needle in text`: a substring test, for strings only.
fn in_string(needle: &Value, container: &Value) -> Result<bool, Error> {
    match (needle.as_str(), container.as_str()) {
        (Some(part), Some(text)) if needle.kind() == ValueKind::String => {
            Ok(has_substring(text, part))
        }
        _ => Err(raise(
            "TypeError",
            format!(
                "'in <string>' requires string as left operand, not {}",
                type_name(needle)
            ),
        )),
    }
}

/// Longest needle searched by a plain scan (at most this many comparisons per byte of
/// the text); longer ones go to the standard library's two-way search.
const SHORT_NEEDLE: usize = 16;

/// Whether `part` occurs in `text`. Templates test short markers (`'</think>' in
/// content`) on every message, where setting up the standard library's searcher costs
/// more than scanning the text. Byte positions are enough: UTF-8 text matches a UTF-8
/// needle only at character boundaries.
fn has_substring(text: &str, part: &str) -> bool {
    if part.len() > SHORT_NEEDLE {
        return text.contains(part);
    }
    let (text, part) = (text.as_bytes(), part.as_bytes());
    let Some((&first, rest)) = part.split_first() else {
        return true;
    };
    let Some(last_start) = text.len().checked_sub(part.len()) else {
        return false;
    };
    text[..=last_start]
        .iter()
        .enumerate()
        .any(|(at, &byte)| byte == first && text[at + 1..at + part.len()] == *rest)
}

/// MiniJinja's membership test for dicts, lists and other iterables: a key lookup, or
/// an equal item; `false` for other objects.
fn in_container(state: &State, needle: &Value, container: &Value) -> Result<bool, Error> {
    // Our dict answers without noting a miss: `in` makes no undefined value to explain.
    if let Some(dict) = container.downcast_object_ref::<PyDict>() {
        return Ok(dict.find(needle).is_some());
    }
    let Some(object) = container.as_object() else {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "cannot perform a containment check on this value",
        ));
    };
    match object.repr() {
        ObjectRepr::Map => Ok(object.get_value(needle).is_some()),
        ObjectRepr::Seq | ObjectRepr::Iterable => {
            let Some(items) = object.try_iter() else {
                return Ok(false);
            };
            for (visited, item) in items.enumerate() {
                if visited % 2 == 1 {
                    state.consume_fuel(1)?;
                }
                // Comparing one item can take long (two long strings): a stopped
                // render leaves at the next item.
                if super::scope::is_stopped() {
                    return super::scope::tick(Some(state)).map(|()| false);
                }
                if item == *needle {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        _ => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::{has_substring, keywords};

    #[test]
    fn finds_short_and_long_substrings_as_str_contains_does() {
        let long = "x".repeat(40);
        let text = format!("a</think>b é {long}y");
        for part in [
            "",
            "a",
            "</think>",
            "b é",
            "é",
            "</think>c",
            "y",
            &long,
            &format!("{long}y"),
            &format!("{long}z"),
        ] {
            assert_eq!(has_substring(&text, part), text.contains(part), "{part:?}");
        }
        assert!(!has_substring("ab", "abc"));
        assert!(has_substring("", ""));
    }

    #[test]
    fn finds_in_and_not_in_between_the_operands() {
        assert_eq!(keywords(" in "), Some((1..3, false)));
        // Parentheses around the operands, and whitespace of more than one byte.
        assert_eq!(keywords(") not\u{3000}in ("), Some((2..10, true)));
        assert_eq!(keywords(" is "), None);
    }
}
