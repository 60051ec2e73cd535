//! Text edits at byte ranges, applied in one pass: the machinery of the source
//! rewrites ([`super::rewrite`], [`super::lookups`]).
//!
//! Edits may nest (a wrap around an expression whose parts are edited too) but never
//! overlap otherwise; each records where it landed, so positions in the edited text lead
//! back to the original.

use std::ops::Range;

use super::offsets::OffsetMap;

/// Applies `edits` to `source`: the edited text, and where the edits landed.
pub(crate) fn apply(source: &str, mut edits: Vec<Edit>) -> (String, OffsetMap) {
    // Outer edits first where two start together, so a wrap encloses what it contains.
    edits.sort_by_key(|edit| (edit.start, std::cmp::Reverse(edit.end)));
    let mut map = OffsetMap::default();
    let text = apply_edits(
        source,
        0,
        source.len(),
        &mut edits.as_slice(),
        Some(&mut map),
    );
    (text, map)
}

/// One rewrite: the byte range it covers and how its new text is made.
pub(crate) struct Edit {
    /// Where the range starts.
    pub start: usize,
    /// Where it ends (equal to `start` for an insertion).
    pub end: usize,
    /// What becomes of it.
    pub kind: EditKind,
}

/// How an edit's new text is made.
#[derive(Clone)]
pub(crate) enum EditKind {
    /// Replace the range with this text.
    Replace(String),
    /// Wrap the range, with any edits inside it applied, in a call to this helper
    /// (filter form: `(((range))|helper)`, see [`super::helpers`]).
    Wrap(String),
    /// Put text before and after the range, with any edits inside it applied.
    Around(String, String),
}

/// The edits that make a binary operation (`whole`, its operator's text at `operator`)
/// a call: `{open}left{between}(right{close}`. Only the operator and the two ends are
/// edited, so the operands keep their own edits. A helper in filter form (see
/// [`super::helpers::OPEN`]) is `open` = `(((`, `between` = `))|helper(`, `close` =
/// `), more))`; in function form `helper((`, `), ` and `), more)`.
pub(crate) fn operator_call(
    edits: &mut Vec<Edit>,
    whole: Range<usize>,
    operator: Range<usize>,
    [open, between, close]: [String; 3],
) {
    edits.push(Edit {
        start: whole.start,
        end: operator.start,
        kind: EditKind::Around(open, String::new()),
    });
    edits.push(Edit {
        start: operator.start,
        end: operator.end,
        kind: EditKind::Replace(between),
    });
    edits.push(Edit {
        start: operator.end,
        end: whole.end,
        kind: EditKind::Around("(".into(), close),
    });
}

/// [`operator_call`] into a call of `helper` in filter form (see
/// [`super::helpers::OPEN`]): `(((left))|helper((right), more))`.
pub(crate) fn operator_filter(
    edits: &mut Vec<Edit>,
    whole: Range<usize>,
    operator: Range<usize>,
    helper: &str,
    more: &str,
) {
    operator_call(
        edits,
        whole,
        operator,
        [
            super::helpers::OPEN.into(),
            super::helpers::then_call(helper),
            format!("), {more}))"),
        ],
    );
}

/// Writes `source[start..end]` with the edits inside that range applied. `edits` is
/// sorted by start and consumed as it is used; nested edits are applied inside `Wrap`s.
/// Top-level edits are recorded in `map` when given.
fn apply_edits(
    source: &str,
    start: usize,
    end: usize,
    edits: &mut &[Edit],
    mut map: Option<&mut OffsetMap>,
) -> String {
    let mut out = String::with_capacity(end - start + 32);
    let mut cursor = start;
    while let Some((edit, rest)) = edits.split_first() {
        if edit.start >= end {
            break;
        }
        *edits = rest;
        if edit.start < cursor {
            continue; // overlaps an edit already made
        }
        out.push_str(&source[cursor..edit.start]);
        let new_start = start + out.len();
        let prefix = match &edit.kind {
            EditKind::Replace(text) => {
                out.push_str(text);
                None
            }
            // Pieces pushed one by one: `format!` cost more than the rest of the pass.
            EditKind::Wrap(helper) => {
                let inner = apply_edits(source, edit.start, edit.end, edits, None);
                for piece in [super::helpers::OPEN, &inner, "))|", helper.as_str(), ")"] {
                    out.push_str(piece);
                }
                unchanged_inside(&inner, edit).then_some(super::helpers::OPEN.len())
            }
            EditKind::Around(before, after) => {
                let inner = apply_edits(source, edit.start, edit.end, edits, None);
                for piece in [before.as_str(), &inner, after] {
                    out.push_str(piece);
                }
                unchanged_inside(&inner, edit).then_some(before.len())
            }
        };
        if let Some(map) = map.as_deref_mut() {
            map.record(
                (new_start, start + out.len()),
                (edit.start, edit.end),
                prefix,
            );
        }
        cursor = edit.end;
    }
    out.push_str(&source[cursor..end]);
    out
}

/// Whether the text inside a wrapping edit came out as long as it went in (no edit
/// nested in it changed its length): only then does an offset inside map to the same
/// offset in the original. Otherwise the whole edit maps to where it starts, the start
/// of the expression it wraps (an error raised by a nested helper, a filter named in the
/// middle of the rewritten text, points there, not at an unrelated column).
fn unchanged_inside(inner: &str, edit: &Edit) -> bool {
    inner.len() == edit.end - edit.start
}
