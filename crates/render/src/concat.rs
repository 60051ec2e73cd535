//! `a ~ b ~ c`: a chain of string concatenations built in one allocation, charged
//! against the render's byte budget before it is made.
//!
//! MiniJinja evaluates `ns.out ~ a ~ b ~ c` pair by pair: `(ns.out ~ a)` is a new
//! string, then `(... ~ b)` another, and each is built in a `String` and copied again
//! into the value's shared buffer, so a template that appends three pieces to a 500 KB
//! prompt (Reka Edge builds its whole prompt so) copies it six times per append.
//! Jinja2 compiles the chain into one `str` join, one copy. Every chain of `~` whose
//! operators stand between its operands alone (no parentheses around a sub-chain) is
//! rewritten ([`super::rewrite`]) into a call to [`concat`], which writes every piece
//! once into the final buffer, after checking that the render may hold it
//! ([`super::scope::reserve`]): the bound is enforced before the allocation, not after.
//!
//! The result is the one MiniJinja gives: a string piece as it is, anything else as
//! MiniJinja's `~` prints it (its `Display`, Python's `str`), undefined as nothing
//! (chatplate's undefined is lenient), and a safe string only when every piece is one.
//! Chains inside `{% autoescape %}` blocks keep MiniJinja's own `~`, which escapes
//! there (the environment itself never autoescapes, as transformers).

use std::borrow::Cow;
use std::mem::MaybeUninit;
use std::sync::Arc;

use minijinja::machinery::ast::{BinOpKind, Expr};
use minijinja::value::{Rest, Value};
use minijinja::{Environment, Error, State};

use super::edits::{Edit, EditKind};
use super::helpers::Helpers;
use super::rewrite::Cx;

/// Registers the helper under this template's name.
pub(crate) fn register(env: &mut Environment<'static>, helpers: &Helpers) {
    env.add_filter(helpers.concat(), concat);
}

/// The pieces of the `~` chain `expr`, left to right, when it has at least two and
/// every operator stands alone between its operands (only spaces around it); `None`
/// otherwise (the chain keeps MiniJinja's `~`, its parts are still walked).
pub(crate) fn chain<'e, 'a>(expr: &'e Expr<'a>, cx: &mut Cx) -> Option<Vec<&'e Expr<'a>>> {
    let mut pieces = Vec::new();
    let mut current = expr;
    while let Expr::BinOp(b) = current {
        if pieces.len() + 1 == MAX_PIECES
            || !matches!(b.op, BinOpKind::Concat)
            || !bare_operator(&b.left, &b.right, cx)
        {
            break;
        }
        pieces.push(&b.right);
        current = &b.left;
    }
    pieces.push(current);
    if pieces.len() < 2 {
        return None;
    }
    // A leftmost piece that does not begin where the chain does sits in parentheses
    // the chain's extent does not show: leave it alone.
    if cx.extents.of(current).0 != cx.extents.of(expr).0 {
        return None;
    }
    pieces.reverse();
    Some(pieces)
}

/// The most pieces one call joins: MiniJinja refuses calls of more than 2,000
/// arguments. A longer chain's first piece is the rest of the chain, joined by a call
/// of its own.
const MAX_PIECES: usize = 1000;

/// Whether only `~` and spaces lie between `left` and `right`.
fn bare_operator(left: &Expr, right: &Expr, cx: &mut Cx) -> bool {
    let (_, left_end) = cx.extents.of(left);
    let (right_start, _) = cx.extents.of(right);
    cx.source
        .get(left_end..right_start)
        .is_some_and(|gap| gap.trim() == "~")
}

/// The rewrite of the chain `whole` made of `pieces`: `(((a))|helper(b, c))`. Only the
/// operators are replaced, so each piece keeps its own edits.
pub(crate) fn rewrite(whole: &Expr, pieces: &[&Expr], cx: &mut Cx) {
    let helper = cx.helpers.concat();
    rewrite_with(whole, pieces, &helper, cx);
}

/// [`rewrite`] into a call of `helper`.
pub(crate) fn rewrite_with(whole: &Expr, pieces: &[&Expr], helper: &str, cx: &mut Cx) {
    let (start, end) = cx.extents.of(whole);
    // Filter form (see `helpers::OPEN`): `(((a))|helper(b, c))`.
    cx.edits.push(Edit {
        start,
        end,
        kind: EditKind::Around(super::helpers::OPEN.into(), "))".into()),
    });
    for (at, pair) in pieces.windows(2).enumerate() {
        let (_, left_end) = cx.extents.of(pair[0]);
        let (right_start, _) = cx.extents.of(pair[1]);
        let between = match at {
            0 => super::helpers::then_call(helper),
            _ => ", ".into(),
        };
        cx.edits.push(Edit {
            start: left_end,
            end: right_start,
            kind: EditKind::Replace(between),
        });
    }
}

/// The helper: the pieces joined as MiniJinja's `~` joins them, in one allocation
/// checked against the byte budget first.
fn concat(state: &State, pieces: Rest<Value>) -> Result<Value, Error> {
    let texts: Vec<Cow<str>> = pieces
        .iter()
        .map(|piece| match piece.as_str() {
            Some(text) => Cow::Borrowed(text),
            None => Cow::Owned(piece.to_string()),
        })
        .collect();
    let total = texts
        .iter()
        .fold(0usize, |sum, text| sum.saturating_add(text.len()));
    super::scope::reserve(Some(state), total)?;
    if pieces.iter().all(Value::is_safe) {
        return Ok(Value::from_safe_string(texts.concat()));
    }
    // Short strings are stored inline by MiniJinja: let it choose.
    if total <= SHORT {
        return Ok(Value::from(texts.concat()));
    }
    Ok(Value::from(joined(&texts, total)))
}

/// Below this length a string is built the ordinary way (MiniJinja keeps short strings
/// inline, and the copy saved is small).
const SHORT: usize = 64;

/// `texts` joined straight into a shared string of `total` bytes: one copy of each
/// piece (a `String` converted to `Arc<str>` would be copied twice).
fn joined(texts: &[Cow<str>], total: usize) -> Arc<str> {
    let mut buffer: Arc<[MaybeUninit<u8>]> = Arc::new_uninit_slice(total);
    let slots = Arc::get_mut(&mut buffer).expect("a new Arc is not shared");
    let mut at = 0;
    for text in texts {
        let bytes = text.as_bytes();
        for (slot, byte) in slots[at..at + bytes.len()].iter_mut().zip(bytes) {
            slot.write(*byte);
        }
        at += bytes.len();
    }
    debug_assert_eq!(at, total);
    // SAFETY: the `total` bytes were all written above (the pieces' lengths sum to
    // `total`), so the slice is initialised; they are the concatenation of `str`s, so
    // valid UTF-8, and `str` has the layout of `[u8]`, so the pointer cast keeps the
    // allocation's layout and the reference counts.
    unsafe {
        let bytes: Arc<[u8]> = buffer.assume_init();
        Arc::from_raw(Arc::into_raw(bytes) as *const str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_pieces_make_one_string() {
        let texts = [
            Cow::Borrowed("ab"),
            Cow::Owned("cdé".to_string()),
            Cow::Borrowed(""),
        ];
        assert_eq!(&*joined(&texts, 6), "abcdé");
        assert_eq!(&*joined(&[], 0), "");
    }
}
