//! `text * n`: the repeated string charged against the render's byte budget before
//! MiniJinja builds it.
//!
//! MiniJinja's `*` builds `'x' * 50000000` (up to its own cap of 100 MB) in one
//! allocation, before any checkpoint can compare it with the budget. Every `*` whose
//! operands are not both plainly numbers is rewritten ([`super::rewrite`]) into
//! `check((a), (b)) * stashed()`: [`check`] reserves the bytes a string repeat will
//! need ([`super::scope::reserve`], which stops the render when they would take it over
//! its budget), keeps `b` aside and returns `a`; [`stashed`] gives `b` back, and
//! MiniJinja's own `*` does the rest, so every result and every error stay MiniJinja's.
//! The two calls always run back to back: nothing is evaluated between the left
//! operand of a `*` and its right one, here a call without arguments.

use std::cell::RefCell;

use minijinja::machinery::ast::{BinOp, BinOpKind, Expr};
use minijinja::value::Value;
use minijinja::{Environment, Error, State};

use super::edits::operator_call;
use super::helpers::Helpers;
use super::rewrite::Cx;

thread_local! {
    /// The right operands [`check`] kept for [`stashed`], innermost last.
    static STASH: RefCell<Vec<Value>> = const { RefCell::new(Vec::new()) };
}

/// Registers the helpers under this template's names.
pub(crate) fn register(env: &mut Environment<'static>, helpers: &Helpers) {
    env.add_function(helpers.repeat_check(), check);
    env.add_function(helpers.stashed(), stashed);
}

/// The rewrite of `left * right` (`whole`); an operator with anything but spaces
/// around it (parentheses) is left alone.
pub(crate) fn rewrite(whole: &Expr, op: &BinOp, cx: &mut Cx) {
    let (start, end) = cx.extents.of(whole);
    let (left_start, left_end) = cx.extents.of(&op.left);
    let (right_start, _) = cx.extents.of(&op.right);
    let between = cx.source.get(left_end..right_start).unwrap_or_default();
    if between.trim() != "*" || left_start != start {
        return;
    }
    operator_call(
        &mut cx.edits,
        start..end,
        left_end..right_start,
        // Function form: the `*` keeps its left operand a call, whose span the
        // diagnosis of a failed `*` (`diagnose`) finds the operation by.
        [
            format!("{}((", cx.helpers.repeat_check()),
            "), ".into(),
            format!(")) * {}()", cx.helpers.stashed()),
        ],
    );
}

/// Whether `op` is a `*` that may repeat a string: one whose operands are not both
/// plainly numbers.
pub(crate) fn wanted(op: &BinOp, whole: &Expr) -> bool {
    matches!(op.op, BinOpKind::Mul) && !super::rewrite::is_numeric(whole)
}

/// Reserves the bytes `left * right` will hold when it repeats a string, keeps `right`
/// for [`stashed`] and gives `left` back.
fn check(state: &State, left: Value, right: Value) -> Result<Value, Error> {
    let repeated = match (left.as_str(), right.as_str()) {
        (Some(text), None) => Some((text.len(), &right)),
        (None, Some(text)) => Some((text.len(), &left)),
        _ => None,
    };
    if let Some((len, count)) = repeated {
        // MiniJinja's own count: an integer, negative as none; anything else fails
        // there, with its own error.
        if let Ok(count) = i128::try_from(count.clone()) {
            let count = usize::try_from(count.max(0)).unwrap_or(usize::MAX);
            super::scope::reserve(Some(state), len.saturating_mul(count))?;
        }
    }
    STASH.with(|stash| stash.borrow_mut().push(right));
    Ok(left)
}

/// The right operand [`check`] kept.
fn stashed() -> Value {
    STASH
        .with(|stash| stash.borrow_mut().pop())
        .unwrap_or_default()
}
