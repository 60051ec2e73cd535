//! Exact attribution: which message (or the preamble, the tool definitions block, the
//! generation prompt, the continued final message) produced each byte of a prompt.
//!
//! Computed from renders of every conversation prefix and their differences with the
//! prompt (see `prefixes` for the reasoning). That is one render per message, each as
//! long as its prefix: quadratic work, spread over all cores, for the cached per-message
//! view; [`super::query`] answers single questions with two or a logarithmic number of
//! renders.

use std::ops::Range;

use super::prefixes::{Bounds, PrefixOutcome, Shared};
use super::{Cancelled, InspectError};
use chatplate_render::{CancelToken, CompiledTemplate, Conversation, RenderErrorKind};

/// A producer of prompt bytes, for ranges of possible producers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Before the first message.
    Preamble,
    /// Message `i`.
    Message(usize),
    /// After the last message.
    End,
}

/// Who produced a run of prompt bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// What the template prints before the first message.
    Preamble,
    /// The tool definitions block.
    Tools,
    /// Message `i`.
    Message(usize),
    /// The final message `i`, left open for the model to continue.
    Continuation(usize),
    /// The generation prompt (what follows the last message).
    GenerationPrompt,
    /// One of the parts from `from` to `to`: the template is not prefix-monotone here.
    Ambiguous {
        /// The earliest possible producer.
        from: Part,
        /// The latest possible producer.
        to: Part,
    },
    /// The prefix renders contradict each other here.
    Unattributed,
}

impl Source {
    /// The message this source belongs to, if exactly one.
    pub fn message(self) -> Option<usize> {
        match self {
            Source::Message(i) | Source::Continuation(i) => Some(i),
            _ => None,
        }
    }
}

/// A run of prompt bytes and its producer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Byte range in the prompt.
    pub range: Range<usize>,
    /// Who produced it.
    pub source: Source,
}

/// Where the tool definitions are in the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolsBlock {
    /// The conversation has no tools.
    NoTools,
    /// The prompt is the same without them.
    NotRendered,
    /// Found in these byte ranges (carved out of the preamble or a message).
    Located(Vec<Range<usize>>),
    /// They change the prompt in ways that are not one block inside one part.
    NotSeparable,
}

/// What a partial (on-screen-first) attribution covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partial {
    /// The messages in focus: exact.
    pub focus: Range<usize>,
    /// How many prefix renders the whole attribution would add.
    pub left_out: usize,
}

/// Every byte of a prompt with its producer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribution {
    /// Length of the prompt explained.
    pub prompt_len: usize,
    /// Number of messages.
    pub message_count: usize,
    /// Consecutive spans covering the whole prompt.
    pub spans: Vec<Span>,
    /// `prefixes[k]`: what rendering the first `k` messages showed (empty when
    /// [`Attribution::partial`]: only some were rendered).
    pub prefixes: Vec<PrefixOutcome>,
    /// For an on-screen-first attribution that rendered only the prefixes around some
    /// messages (see [`crate::inspect::attribute_focused`]), which: their bytes are
    /// exact, and the rest may be left as wider ambiguous runs than a whole attribution
    /// leaves. `None` for a whole one.
    pub partial: Option<Partial>,
    /// The tool definitions block.
    pub tools: ToolsBlock,
    /// How each ambiguous run was narrowed (reused by the next attribution after an
    /// edit).
    pub(crate) narrowed: Vec<super::refine::Narrowed>,
    /// A partial attribution's prefix outcomes, `(k, outcome of P(k))` ascending in `k`
    /// (a whole one's are [`Attribution::prefixes`]): reused by the next attribution
    /// after an edit as a whole one's are.
    pub(crate) known: Vec<(usize, PrefixOutcome)>,
}

impl Attribution {
    /// What rendering `P(k)` showed, when this attribution rendered (or predicted) it.
    pub(crate) fn prefix(&self, k: usize) -> Option<PrefixOutcome> {
        if self.partial.is_none() {
            self.prefixes.get(k).copied()
        } else {
            let found = self.known.binary_search_by_key(&k, |(count, _)| *count);
            found.ok().map(|i| self.known[i].1)
        }
    }

    /// Whether every prefix of one or more messages rendered as a prefix of the prompt
    /// (of a partial attribution: not known, and `true`).
    pub fn monotone(&self) -> bool {
        self.prefixes
            .iter()
            .skip(1)
            .all(|p| p.consistent_len().is_some())
    }

    /// Message counts `k` whose render is not a prefix of the prompt (or failed).
    pub fn breaks(&self) -> Vec<usize> {
        (1..self.prefixes.len())
            .filter(|&k| self.prefixes[k].consistent_len().is_none())
            .collect()
    }

    /// The producer of the byte at `offset`.
    pub fn source_at(&self, offset: usize) -> Option<Source> {
        let index = self.spans.partition_point(|s| s.range.end <= offset);
        self.spans
            .get(index)
            .filter(|s| s.range.contains(&offset))
            .map(|s| s.source)
    }

    /// The byte ranges message `index` produced exactly.
    pub fn ranges_of(&self, index: usize) -> Vec<Range<usize>> {
        self.spans
            .iter()
            .filter(|s| s.source.message() == Some(index))
            .map(|s| s.range.clone())
            .collect()
    }

    /// Bytes each message produced exactly (ambiguous bytes are not counted).
    pub fn message_bytes(&self) -> Vec<usize> {
        let mut bytes = vec![0; self.message_count];
        for span in &self.spans {
            if let Some(i) = span.source.message() {
                bytes[i] += span.range.len();
            }
        }
        bytes
    }

    /// Bytes whose producer is not exact.
    pub fn ambiguous_bytes(&self) -> usize {
        self.bytes_where(|source| matches!(source, Source::Ambiguous { .. } | Source::Unattributed))
    }

    /// Bytes `source` produced (the preamble, the generation prompt, ...).
    pub fn bytes_of(&self, source: Source) -> usize {
        self.bytes_where(|found| *found == source)
    }

    fn bytes_where(&self, wanted: impl Fn(&Source) -> bool) -> usize {
        self.spans
            .iter()
            .filter(|s| wanted(&s.source))
            .map(|s| s.range.len())
            .sum()
    }
}

/// Attributes every byte of `conversation`'s prompt.
pub fn attribute(
    template: &CompiledTemplate,
    conversation: &Conversation,
    cancel: &CancelToken,
) -> Result<Attribution, InspectError> {
    super::incremental::attribute_incremental(template, conversation, None, cancel)
}

/// What an attribution's renders showed.
pub(super) struct Renders {
    /// Every prefix's outcome, by message count.
    pub outcomes: Vec<(usize, PrefixOutcome)>,
    /// The conversation rendered without its tools (`tools_block::without_tools`).
    pub without_tools: Option<String>,
}

/// The attribution of `prompt` from what the renders showed.
pub(super) fn attribute_from(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    renders: Renders,
    reuse: super::refine::Reuse,
    how: super::refine::Narrowing,
    cancel: &CancelToken,
) -> Result<Attribution, InspectError> {
    let Renders {
        outcomes,
        without_tools,
    } = renders;
    let n = conversation.messages.len();
    let prompt = shared.prompt;
    let bounds = Bounds::new(&outcomes, n);
    let spans = spans_from(&bounds, prompt.len(), conversation);
    let (mut spans, narrowed) =
        super::refine::refine(template, conversation, shared, spans, reuse, how, cancel)?;
    if conversation.continue_final_message.field().is_some() {
        for span in &mut spans {
            if span.source == Source::Message(n - 1) {
                span.source = Source::Continuation(n - 1);
            }
        }
    }
    let tools = super::tools_block::locate(
        template,
        conversation,
        shared,
        without_tools,
        &bounds,
        &spans,
        cancel,
    )?;
    if let ToolsBlock::Located(ranges) = &tools {
        for range in ranges {
            spans = carve(spans, range.clone());
        }
    }
    let partial = shared.focus.partial();
    // A partial attribution's outcomes are not one per prefix: kept by count.
    let (prefixes, known) = match partial {
        Some(_) => (Vec::new(), outcomes),
        None => (outcomes.into_iter().map(|(_, o)| o).collect(), Vec::new()),
    };
    Ok(Attribution {
        prompt_len: prompt.len(),
        message_count: n,
        spans,
        prefixes,
        partial,
        tools,
        narrowed,
        known,
    })
}

/// The prompt itself; its failure is the inspection's.
pub(crate) fn render_full(
    template: &CompiledTemplate,
    conversation: &Conversation,
    cancel: &CancelToken,
) -> Result<String, InspectError> {
    template
        .render_cancellable(conversation, cancel)
        .map_err(|err| match err.kind {
            RenderErrorKind::Cancelled => InspectError::Cancelled(Cancelled),
            _ => InspectError::Render(err),
        })
}

/// Spans from slot bounds.
pub(crate) fn spans_from(bounds: &Bounds, len: usize, conversation: &Conversation) -> Vec<Span> {
    let n = conversation.messages.len();
    let continuing = conversation.continue_final_message.field().is_some();
    bounds
        .runs(len)
        .into_iter()
        .map(|(range, (lo, hi))| Span {
            range,
            source: source_of(lo, hi, n, continuing),
        })
        .collect()
}

pub(super) fn source_of(lo: usize, hi: usize, n: usize, continuing: bool) -> Source {
    let part = |slot: usize| match slot {
        0 => Part::Preamble,
        s if s <= n => Part::Message(s - 1),
        _ => Part::End,
    };
    match (lo, hi) {
        (lo, hi) if lo > hi => Source::Unattributed,
        (lo, hi) if lo < hi => Source::Ambiguous {
            from: part(lo),
            to: part(hi),
        },
        (0, _) => Source::Preamble,
        (slot, _) if slot == n && continuing => Source::Continuation(slot - 1),
        (slot, _) if slot <= n => Source::Message(slot - 1),
        _ => Source::GenerationPrompt,
    }
}

/// `spans` with the bytes of `range` made one `Tools` span.
fn carve(spans: Vec<Span>, range: Range<usize>) -> Vec<Span> {
    let mut carved = Vec::with_capacity(spans.len() + 2);
    for span in spans {
        let before = span.range.start..span.range.end.min(range.start);
        let after = span.range.start.max(range.end)..span.range.end;
        for part in [before, after] {
            if !part.is_empty() {
                carved.push(Span {
                    range: part,
                    source: span.source,
                });
            }
        }
    }
    carved.push(Span {
        range,
        source: Source::Tools,
    });
    carved.sort_by_key(|s| s.range.start);
    super::refine::merge(carved)
}

/// Whether `range` can be the tools block: inside one span of any kind, or covering
/// only the preamble and ambiguous runs (never parts of two messages).
pub(crate) fn carvable(spans: &[Span], range: &Range<usize>) -> bool {
    let touched: Vec<&Span> = spans
        .iter()
        .filter(|s| s.range.start < range.end && range.start < s.range.end)
        .collect();
    match touched.as_slice() {
        [] => false,
        [one] => one.source != Source::Unattributed,
        many => many
            .iter()
            .all(|s| matches!(s.source, Source::Preamble | Source::Ambiguous { .. })),
    }
}
