//! The assistant mask in character mode: where the template's `{% generation %}` blocks
//! land in the prompt, from one tracked render on the worker (nothing is rendered for a
//! template without such a block).

use std::ops::Range;
use std::sync::Arc;

use chatplate_render::{CancelToken, RenderControl, RenderError};

use super::snapshot::Snapshot;
use super::{Output, Template};

/// The prompt's bytes inside generation blocks, merged, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GenerationMarks {
    /// The prompt they mark (the app shows them only on this prompt).
    pub prompt: Arc<str>,
    /// Byte ranges inside `{% generation %}` blocks.
    pub spans: Vec<Range<usize>>,
}

/// The generation blocks of the worker's conversation rendered by `template`.
pub(super) fn mark(
    template: &Template,
    conversation: &Snapshot,
    cancel: &CancelToken,
) -> Result<Output, RenderError> {
    let compiled = template.compiled()?;
    // Any spelling of the tag: transformers records `{%+ generation %}` blocks too.
    if !compiled.has_generation_block() {
        return Ok(Output::GenerationMarks(Arc::default()));
    }
    let control = RenderControl::new(cancel.clone());
    let tracked = compiled.render_tracked(conversation.conversation(), &control)?;
    let chars = tracked.spans.iter().map(|span| span.start..span.end);
    let spans = merged(byte_ranges(&tracked.prompt, chars));
    Ok(Output::GenerationMarks(Arc::new(GenerationMarks {
        prompt: tracked.prompt.into(),
        spans,
    })))
}

/// Character ranges of `text` as byte ranges.
fn byte_ranges(text: &str, chars: impl Iterator<Item = Range<usize>>) -> Vec<Range<usize>> {
    let mut starts: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
    starts.push(text.len());
    let byte = |char_at: usize| starts[char_at.min(starts.len() - 1)];
    chars
        .map(|range| byte(range.start)..byte(range.end))
        .collect()
}

/// Sorted, with overlapping and touching ranges joined; empty ones dropped.
fn merged(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.retain(|range| range.start < range.end);
    ranges.sort_by_key(|range| range.start);
    let mut out: Vec<Range<usize>> = Vec::new();
    for range in ranges {
        match out.last_mut() {
            Some(last) if last.end >= range.start => last.end = last.end.max(range.end),
            _ => out.push(range),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn character_spans_become_byte_ranges_past_multibyte_text() {
        let ranges = byte_ranges("é ab", std::iter::once(2..4));
        assert_eq!(ranges, vec![Range { start: 3, end: 5 }]);
    }

    #[test]
    fn nested_and_touching_blocks_merge() {
        let all = merged(vec![4..6, 0..2, 1..3, 6..6, 3..4]);
        assert_eq!(all, vec![Range { start: 0, end: 6 }]);
    }
}
