//! Python's `str.split`, `str.rsplit` and `str.splitlines`, with their lists charged to
//! the render's byte budget before they are built.
//!
//! Each call turns one string into a list in a single native call, without a
//! checkpoint: a 20 MB string of one-letter words makes ten million values. The pieces
//! are counted first (a pass over the text, as cheap as the split itself) and the list's
//! size, every value and every string that does not fit inside one, is checked against
//! the budget; only then is the list built, at its final capacity and without copying
//! any piece twice.

use std::borrow::Cow;

use minijinja::value::{from_args, Kwargs, Value, ValueKind};
use minijinja::{Error, State};

use super::filters::{text_value_bytes, ITEM_BYTES};
use super::none::is_python_none;
use super::pyerror::raise;
use super::pystr::Lines;
use super::scope;
use super::strmethods::is_space;

/// `str.split(sep=None, maxsplit=-1)`, or `rsplit` when `from_right`.
pub(crate) fn split(
    state: Option<&State>,
    text: &str,
    args: &[Value],
    from_right: bool,
) -> Result<Value, Error> {
    let (sep, maxsplit) = split_arguments(args)?;
    let limit = maxsplit.unwrap_or(usize::MAX);
    let mut list = collect(state, |visit| {
        each_piece(text, sep.as_deref(), limit, from_right, visit);
    })?;
    if from_right {
        list.reverse();
    }
    Ok(Value::from(list))
}

/// `str.splitlines(keepends=False)`.
pub(crate) fn splitlines(
    state: Option<&State>,
    text: &str,
    args: &[Value],
) -> Result<Value, Error> {
    let (keepends, kwargs): (Option<bool>, Kwargs) = from_args(args)?;
    let keepends = kwargs
        .get::<Option<bool>>("keepends")?
        .or(keepends)
        .unwrap_or(false);
    kwargs.assert_all_used()?;
    let list = collect(state, |visit| {
        for line in Lines::new(text) {
            visit(if keepends { line.with_break } else { line.text });
        }
    })?;
    Ok(Value::from(list))
}

/// Pieces kept aside on the first pass, so a split into few pieces (the common case:
/// `content.split('</think>')`) searches its text once.
const FEW_PIECES: usize = 16;

/// The list of the pieces `pieces` visits, refused before anything is built when it
/// would take the render over its byte budget. The first pass sizes the list and keeps
/// up to [`FEW_PIECES`] pieces aside; only a longer list is visited a second time to
/// build it (its pieces are never held anywhere before they are charged).
fn collect<'t>(
    state: Option<&State>,
    pieces: impl Fn(&mut dyn FnMut(&'t str)),
) -> Result<Vec<Value>, Error> {
    let (mut count, mut bytes) = (0usize, 0usize);
    let mut few = [""; FEW_PIECES];
    pieces(&mut |piece| {
        if let Some(slot) = few.get_mut(count) {
            *slot = piece;
        }
        count += 1;
        bytes = bytes
            .saturating_add(ITEM_BYTES)
            .saturating_add(text_value_bytes(piece.len()));
    });
    scope::reserve(state, bytes)?;
    if let Some(kept) = few.get(..count) {
        return Ok(kept.iter().map(|piece| Value::from(*piece)).collect());
    }
    let mut list = Vec::with_capacity(count);
    pieces(&mut |piece| list.push(Value::from(piece)));
    Ok(list)
}

/// `sep` and `maxsplit`, positional or by keyword.
fn split_arguments(args: &[Value]) -> Result<(Option<Cow<'_, str>>, Option<usize>), Error> {
    // The common call, `text.split('sep')`, without parsing arguments or copying `sep`.
    if let [only] = args {
        if only.kind() == ValueKind::String {
            return match only.as_str() {
                Some("") => Err(raise("ValueError", "empty separator")),
                sep => Ok((sep.map(Cow::Borrowed), None)),
            };
        }
    }
    let (sep, maxsplit, kwargs): (Option<Value>, Option<Value>, Kwargs) = from_args(args)?;
    let sep = match kwargs.get::<Option<Value>>("sep")?.or(sep) {
        Some(value) if is_python_none(&value) => None,
        Some(value) => match value.as_str() {
            Some("") => return Err(raise("ValueError", "empty separator")),
            Some(sep) if value.kind() == ValueKind::String => Some(Cow::Owned(sep.to_string())),
            _ => {
                return Err(raise(
                    "TypeError",
                    format!(
                        "must be str or None, not {}",
                        super::pytype::type_name(&value)
                    ),
                ))
            }
        },
        None => None,
    };
    let maxsplit = kwargs
        .get::<Option<Value>>("maxsplit")?
        .or(maxsplit)
        .and_then(|v| v.as_i64())
        .and_then(|n| usize::try_from(n).ok());
    kwargs.assert_all_used()?;
    Ok((sep, maxsplit))
}

/// Visits the pieces of `text` split on `sep` (runs of whitespace when `None`) at most
/// `limit` times; from the right, in reverse order.
fn each_piece<'t>(
    text: &'t str,
    sep: Option<&str>,
    limit: usize,
    from_right: bool,
    visit: &mut dyn FnMut(&'t str),
) {
    let pieces = limit.saturating_add(1);
    match (sep, from_right) {
        (Some(sep), false) => text.splitn(pieces, sep).for_each(visit),
        (Some(sep), true) => text.rsplitn(pieces, sep).for_each(visit),
        (None, false) => split_whitespace(text, limit, visit),
        (None, true) => rsplit_whitespace(text, limit, visit),
    }
}

/// `str.split()` without a separator: runs of whitespace separate words; after `limit`
/// splits the rest is one piece, with its leading whitespace removed.
fn split_whitespace<'t>(text: &'t str, limit: usize, visit: &mut dyn FnMut(&'t str)) {
    let mut rest = text.trim_start_matches(is_space);
    let mut splits = 0;
    while !rest.is_empty() {
        if splits == limit {
            return visit(rest);
        }
        let end = rest.find(is_space).unwrap_or(rest.len());
        visit(&rest[..end]);
        splits += 1;
        rest = rest[end..].trim_start_matches(is_space);
    }
}

/// `str.rsplit()` without a separator: the mirror image of [`split_whitespace`], the
/// pieces visited from the last.
fn rsplit_whitespace<'t>(text: &'t str, limit: usize, visit: &mut dyn FnMut(&'t str)) {
    let mut rest = text.trim_end_matches(is_space);
    let mut splits = 0;
    while !rest.is_empty() {
        if splits == limit {
            return visit(rest);
        }
        let start = rest
            .char_indices()
            .rev()
            .find(|(_, ch)| is_space(*ch))
            .map_or(0, |(at, ch)| at + ch.len_utf8());
        visit(&rest[start..]);
        splits += 1;
        rest = rest[..start].trim_end_matches(is_space);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(value: Value) -> Vec<String> {
        value
            .try_iter()
            .unwrap()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }

    // Expectations: CPython 3.11 on the same strings.
    #[test]
    fn splits_like_python() {
        let kw = |k: &str, v: Value| Value::from(Kwargs::from_iter([(k.to_string(), v)]));
        let split = |text, args: &[Value], from_right| {
            strings(split(None, text, args, from_right).unwrap())
        };
        assert_eq!(
            split("  a b  c  ", &[Value::from(()), Value::from(1)], false),
            ["a", "b  c  "]
        );
        assert_eq!(
            split("  a b  c  ", &[kw("maxsplit", Value::from(1))], true),
            ["  a b", "c"]
        );
        assert_eq!(split("a\u{1c}b", &[], false), ["a", "b"]);
        assert_eq!(split("a b", &[], true), ["a", "b"]);
        assert_eq!(split(" é\u{3000}b\u{a0} ", &[], true), ["é", "b"]);
        assert_eq!(
            split("  a b  ", &[Value::from(()), Value::from(0)], true),
            ["  a b"]
        );
        assert_eq!(
            split("a,b,,c", &[Value::from(",")], true),
            ["a", "b", "", "c"]
        );
        assert_eq!(
            split("a,b,c", &[Value::from(","), Value::from(1)], true),
            ["a,b", "c"]
        );
        assert!(split(" \t ", &[], true).is_empty());
    }

    #[test]
    fn splits_lines_like_python() {
        let lines = |keepends: bool| {
            strings(splitlines(None, "a\r\nb\rc\n\nd", &[Value::from(keepends)]).unwrap())
        };
        assert_eq!(lines(false), ["a", "b", "c", "", "d"]);
        assert_eq!(lines(true), ["a\r\n", "b\r", "c\n", "\n", "d"]);
    }
}
