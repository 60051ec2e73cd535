//! Where `{% generation %}` blocks land in the prompt, recorded the way transformers'
//! `AssistantTracker` does for `return_assistant_tokens_mask=True`.
//!
//! transformers renders with `Template.generate()` and, when a generation block's body
//! has been rendered, records `(start, start + len(body))` where `start` is the length of
//! everything the generator has *yielded* so far. Only top-level output is yielded: a
//! block inside a macro, a call block, a `{% set %}` block, a `{% filter %}` or another
//! generation block (all buffered in Jinja2) is recorded at the position where that
//! enclosing construct's output begins, with its own body's length. Those quirks are
//! what training code gets, so they are reproduced, not corrected.
//!
//! MiniJinja writes top-level output straight to the render's writer and buffers the
//! same constructs, so the writer's length when the helper runs is transformers'
//! `start`. The writer publishes its length through [`Recording::counter`];
//! renders that do not track (every render of a template without the tag) pay nothing.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One `{% generation %}` block's range in the prompt, in characters (Unicode scalar
/// values, as Python's `str` counts them), end exclusive: transformers'
/// `generation_indices`. Blocks are listed in the order their bodies finished, so a
/// nested block comes before the block around it, and `end` can pass the prompt's
/// end for a block whose output was discarded (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenerationSpan {
    /// First character.
    pub start: usize,
    /// One past the last character.
    pub end: usize,
}

/// A prompt with its generation spans.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrackedRender {
    /// The prompt, as [`super::CompiledTemplate::render`] gives it.
    pub prompt: String,
    /// The `{% generation %}` blocks rendered, in transformers' order.
    pub spans: Vec<GenerationSpan>,
    /// Whether transformers' test finds the tag ([`has_generation_tag`]). It only logs
    /// a warning when the test fails: a block it misses (`{%+ generation %}`) is still
    /// recorded and still makes the mask.
    pub has_generation_tag: bool,
    /// Whether the template has a generation block in any spelling
    /// ([`has_generation_block`]): without one there are no spans, and transformers'
    /// mask is all zeros.
    pub has_generation_block: bool,
}

impl TrackedRender {
    /// A prompt that was not rendered from a template (text tokenized as it is): no
    /// tag, no spans.
    pub fn untracked(prompt: String) -> Self {
        TrackedRender {
            prompt,
            spans: Vec::new(),
            has_generation_tag: false,
            has_generation_block: false,
        }
    }
}

/// A block as recorded during the render: where top-level output stood (bytes) and the
/// body's length (characters).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawSpan {
    written_bytes: usize,
    body_chars: usize,
}

struct Log {
    written: Arc<AtomicUsize>,
    spans: Vec<RawSpan>,
}

thread_local! {
    static LOG: RefCell<Option<Log>> = const { RefCell::new(None) };
}

/// Recording on this thread, from [`Recording::start`] until it is finished or dropped
/// (render threads are reused, so a failed render must not leave it on).
pub(crate) struct Recording {
    written: Arc<AtomicUsize>,
}

impl Recording {
    /// Starts recording on this thread, reading top-level output's length from `written`
    /// when the render already publishes it (a traced render), else from a new counter.
    pub(crate) fn start(written: Option<Arc<AtomicUsize>>) -> Self {
        let written = written.unwrap_or_default();
        let log = Log {
            written: Arc::clone(&written),
            spans: Vec::new(),
        };
        LOG.with(|slot| *slot.borrow_mut() = Some(log));
        Recording { written }
    }

    /// The counter the writer keeps at the number of top-level bytes written.
    pub(crate) fn counter(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.written)
    }

    /// Stops recording and returns what was recorded.
    pub(crate) fn finish(self) -> Vec<RawSpan> {
        LOG.with(|slot| slot.borrow_mut().take())
            .map(|log| log.spans)
            .unwrap_or_default()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        LOG.with(|slot| slot.borrow_mut().take());
    }
}

/// Records a rendered block body, when this thread records.
pub(crate) fn record(body: &str) {
    LOG.with(|slot| {
        if let Some(log) = slot.borrow_mut().as_mut() {
            log.spans.push(RawSpan {
                written_bytes: log.written.load(Ordering::Relaxed),
                body_chars: body.chars().count(),
            });
        }
    });
}

/// The recorded blocks in characters of `prompt`, whose start every recorded byte
/// position is a prefix of. One pass over the prompt, however many blocks.
pub(crate) fn in_chars(prompt: &str, raw: &[RawSpan]) -> Vec<GenerationSpan> {
    let mut order: Vec<usize> = (0..raw.len()).collect();
    order.sort_by_key(|&i| raw[i].written_bytes);
    let mut starts = vec![0; raw.len()];
    let (mut byte, mut chars) = (0, 0);
    let mut rest = prompt.chars();
    for i in order {
        let target = raw[i].written_bytes.min(prompt.len());
        while byte < target {
            let Some(ch) = rest.next() else { break };
            byte += ch.len_utf8();
            chars += 1;
        }
        starts[i] = chars;
    }
    raw.iter()
        .zip(starts)
        .map(|(span, start)| GenerationSpan {
            start,
            end: start + span.body_chars,
        })
        .collect()
}

/// Whether transformers accepts `source` for an assistant mask: its test is the regular
/// expression `\{\%-?\s*generation\s*-?\%\}` on the template (so `{%+ generation %}`
/// does not count, although it renders and is recorded).
pub fn has_generation_tag(source: &str) -> bool {
    has_tag_with_markers(source, &['-'])
}

/// Whether `source` has a `{% generation %}` block in any spelling Jinja2 reads as one
/// (`{%+ generation %}`, `{% generation -%}`, ...): transformers' `AssistantTracker`
/// records every one of them, whatever [`has_generation_tag`] says.
pub fn has_generation_block(source: &str) -> bool {
    has_tag_with_markers(source, &['-', '+'])
}

/// A `{% generation %}` tag whose whitespace markers are among `markers`.
fn has_tag_with_markers(source: &str, markers: &[char]) -> bool {
    source.match_indices("{%").any(|(at, _)| {
        let rest = &source[at + 2..];
        let rest = rest.strip_prefix(markers).unwrap_or(rest);
        let Some(rest) = rest
            .trim_start_matches(is_python_space)
            .strip_prefix("generation")
        else {
            return false;
        };
        let rest = rest.trim_start_matches(is_python_space);
        let rest = rest.strip_prefix(markers).unwrap_or(rest);
        rest.starts_with("%}")
    })
}

/// Python `re`'s `\s` on `str` patterns: Unicode whitespace.
fn is_python_space(ch: char) -> bool {
    ch.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&ch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_positions_become_character_positions() {
        let raw = [
            RawSpan {
                written_bytes: 3,
                body_chars: 2,
            },
            RawSpan {
                written_bytes: 0,
                body_chars: 1,
            },
        ];
        let spans = in_chars("éxyz", &raw);
        assert_eq!(
            spans,
            [
                GenerationSpan { start: 2, end: 4 },
                GenerationSpan { start: 0, end: 1 }
            ]
        );
    }

    #[test]
    fn the_tag_test_is_transformers_regex() {
        assert!(has_generation_tag("a{% generation %}b"));
        assert!(has_generation_tag("{%-generation-%}"));
        assert!(has_generation_tag("{%-\n generation\t-%}"));
        assert!(!has_generation_tag("{%+ generation %}"));
        assert!(!has_generation_tag("{% generation +%}"));
        assert!(!has_generation_tag("{% endgeneration %}"));
        assert!(!has_generation_tag("{% if add_generation_prompt %}"));
    }

    #[test]
    fn a_block_is_any_spelling_jinja2_reads() {
        for tag in [
            "{% generation %}",
            "{%+ generation %}",
            "{%- generation +%}",
            "{% generation -%}",
        ] {
            assert!(has_generation_block(tag), "{tag}");
        }
        assert!(!has_generation_block("{% endgeneration %}"));
        assert!(!has_generation_block("{% if add_generation_prompt %}"));
        assert!(!has_generation_block("{%+- generation %}"));
    }
}
