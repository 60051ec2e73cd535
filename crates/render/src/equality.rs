//! `a == b` and `a != b` on lists that a stopped render leaves at once.
//!
//! MiniJinja compares two lists item by item inside one instruction: no checkpoint
//! runs until the comparison ends, and a list repeated lazily (`[big] * 1000`) can
//! make that billions of item comparisons, which neither the deadline nor a cancel
//! could interrupt. Every `==` and `!=` whose operands are both more than a literal
//! or a plain scalar (a list may hide there) is rewritten ([`super::rewrite`]) into a
//! call to [`equal`], which compares lists as MiniJinja does (same kind, same length,
//! equal items in order, nested lists the same way) with a checkpoint
//! ([`super::scope::tick`]) every [`CHECK_EVERY`] items, and leaves everything else to
//! MiniJinja's own `==`.

use minijinja::machinery::ast::{BinOp, BinOpKind, Expr};
use minijinja::value::{ObjectRepr, Value};
use minijinja::{Environment, Error, State};

use super::edits::operator_filter;
use super::helpers::Helpers;
use super::rewrite::Cx;

/// Registers the helper under this template's name.
pub(crate) fn register(env: &mut Environment<'static>, helpers: &Helpers) {
    env.add_filter(helpers.equal(), equal);
}

/// Items compared between two checkpoints.
const CHECK_EVERY: usize = 256;

/// Whether `op` is a `==` or `!=` worth the helper: neither operand is a scalar by
/// its syntax (`x == 'user'` compares in O(1) whatever `x` is).
pub(crate) fn wanted(op: &BinOp) -> bool {
    matches!(op.op, BinOpKind::Eq | BinOpKind::Ne)
        && !super::scalars::is_plain_scalar(&op.left)
        && !super::scalars::is_plain_scalar(&op.right)
}

/// The rewrite: `left == right` (`whole`) becomes `equal((left), (right), false)`, and
/// `!=` passes `true`. Only the operator is replaced, so the operands keep their own
/// edits; an operator with anything but spaces around it (parentheses) is left alone.
pub(crate) fn rewrite(whole: &Expr, op: &BinOp, cx: &mut Cx) {
    let (start, end) = cx.extents.of(whole);
    let (_, left_end) = cx.extents.of(&op.left);
    let (right_start, _) = cx.extents.of(&op.right);
    let between = cx.source.get(left_end..right_start).unwrap_or_default();
    let negated = match between.trim() {
        "==" => false,
        "!=" => true,
        _ => return,
    };
    if cx.extents.of(&op.left).0 != start {
        return;
    }
    operator_filter(
        &mut cx.edits,
        start..end,
        left_end..right_start,
        &cx.helpers.equal(),
        &negated.to_string(),
    );
}

/// The helper: `left == right` (or `!=` when `negated`).
fn equal(state: &State, left: &Value, right: &Value, negated: bool) -> Result<bool, Error> {
    let mut compared = 0;
    Ok(equal_values(state, left, right, &mut compared)? != negated)
}

/// Whether `value` is a list MiniJinja compares item by item.
fn is_list(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| matches!(o.repr(), ObjectRepr::Seq | ObjectRepr::Iterable))
}

/// MiniJinja's `==`, with lists compared here (see the module docs); `compared` counts
/// the items compared so far, for the checkpoints.
fn equal_values(
    state: &State,
    left: &Value,
    right: &Value,
    compared: &mut usize,
) -> Result<bool, Error> {
    if !(is_list(left) && is_list(right)) || left.is_tuple() != right.is_tuple() {
        return Ok(left == right);
    }
    let (Ok(mut lefts), Ok(mut rights)) = (left.try_iter(), right.try_iter()) else {
        return Ok(left == right);
    };
    loop {
        *compared += 1;
        if compared.is_multiple_of(CHECK_EVERY) {
            super::scope::tick(Some(state))?;
        }
        match (lefts.next(), rights.next()) {
            (None, None) => return Ok(true),
            (Some(a), Some(b)) => {
                if !equal_values(state, &a, &b, compared)? {
                    return Ok(false);
                }
            }
            _ => return Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use minijinja::context;
    use minijinja::value::Value;

    use crate::scope::Shared;
    use crate::{CancelToken, CompiledTemplate, Limits, RenderErrorKind};

    /// A list of `len` equal items that counts the items it gives out.
    fn counted(len: usize, given: &Arc<AtomicUsize>) -> Value {
        let given = Arc::clone(given);
        Value::make_object_iterable((), move |()| {
            let given = Arc::clone(&given);
            Box::new((0..len).map(move |_| {
                given.fetch_add(1, Ordering::Relaxed);
                Value::from(1)
            }))
        })
    }

    #[test]
    fn a_stopped_render_leaves_a_long_list_comparison_at_once() {
        let given = Arc::new(AtomicUsize::new(0));
        let len = 10_000_000;
        let template = CompiledTemplate::compile("{{ a == b }}", Limits::default()).unwrap();
        let cancel = CancelToken::new();
        cancel.cancel();
        let context = context! { a => counted(len, &given), b => counted(len, &given) };
        let clock = jiff::civil::DateTime::default();
        let err = template
            .run(context, 1, clock, &cancel, &Arc::new(Shared::new(None)))
            .unwrap_err();
        assert_eq!(err.kind, RenderErrorKind::Cancelled, "{err}");
        // MiniJinja's own `==` walked both lists to the end (20,000,000 items).
        let walked = given.load(Ordering::Relaxed);
        assert!(walked <= 2 * super::CHECK_EVERY, "{walked} items walked");
    }

    #[test]
    fn lists_compare_as_minijinja_compares_them() {
        let template = CompiledTemplate::compile(
            "{% set a = [1, [2, 3]] %}{% set b = [1, [2, 3]] %}{% set t = (1, 2) %}\
             {% set u = [1, 2] %}{{ a == b }} {{ a != b }} {{ t == u }} {{ u != t }} \
             {{ u == [1, 2, 3] }} {{ a == a }}",
            Limits::default(),
        )
        .unwrap();
        let conversation =
            crate::Conversation::new(vec![serde_json::json!({"role": "user", "content": "x"})]);
        // Checked against transformers: True False False True False True.
        assert_eq!(
            template.render(&conversation).unwrap(),
            "True False False True False True"
        );
    }
}
