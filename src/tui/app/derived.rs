//! What the app shows that combines several of its parts (the shown render, the
//! selection, the worker's attribution, tokens and value probes): read accessors for the
//! views and tests, computed on demand so they can never disagree with their parts.

use std::ops::Range;

use chatplate_core::inspect::Source;
use chatplate_core::worker::inspection::Attributed;
use chatplate_core::worker::tokenizing::TokenizedPrompt;

use super::App;
use crate::tui::attribution::AttributionState;
use crate::tui::fields::{Field, Row};

impl App {
    /// The attribution of the shown prompt, when it has arrived.
    pub fn attribution(&self) -> Option<&Attributed> {
        self.explanation.current(&self.preview)
    }

    /// How far attribution of the shown prompt has got.
    pub fn attribution_state(&self) -> AttributionState {
        self.explanation.state(&self.preview)
    }

    /// The prompt byte ranges the selected message produced: exact when attributed,
    /// else the quick search's guess.
    pub fn selected_ranges(&self) -> Vec<Range<usize>> {
        self.explanation
            .ranges(&self.preview, self.messages.selected)
    }

    /// From the start of the selected message's first range to the end of its last.
    pub fn selected_extent(&self) -> Option<Range<usize>> {
        let ranges = self.selected_ranges();
        Some(ranges.first()?.start..ranges.last()?.end)
    }

    /// Bytes each message produced exactly, when attributed.
    pub fn message_bytes(&self) -> Option<Vec<usize>> {
        self.attribution().map(|a| a.attribution.message_bytes())
    }

    /// The producer of prompt byte `offset`, when attributed.
    pub fn source_at(&self, offset: usize) -> Option<Source> {
        self.attribution()?.attribution.source_at(offset)
    }

    /// The tokens of the shown prompt, in token mode, once they have arrived.
    pub fn shown_tokens(&self) -> Option<&TokenizedPrompt> {
        self.token_mode.shown(&self.preview)
    }

    /// Tokens per message (wholly inside its bytes), for the message list: exact with
    /// attribution, else from the quick content search. Only rows on screen ask.
    pub fn message_tokens(&self, index: usize) -> Option<usize> {
        let ranges = match self.attribution() {
            Some(a) => a.attribution.ranges_of(index),
            None => self.preview.span(index).cloned().into_iter().collect(),
        };
        self.token_mode.count_in(&self.preview, &ranges)
    }

    /// The prompt title's token note: the total and the token under the cursor, or
    /// what the mode is waiting for.
    pub fn token_note(&self) -> String {
        self.token_mode.note(&self.preview, self.cursor_offset())
    }

    /// Whether message `index`'s content becomes a special token the model receives
    /// (token mode, once the tokens of the shown prompt have arrived).
    pub fn injected(&self, index: usize) -> bool {
        crate::tui::injection_view::injected(self.shown_tokens(), index)
    }

    /// Why `field` of `row` is marked "not used by this template", if it is: `Some("")`
    /// when the whole value is unused, else which parts of it (`"part 2"`, `"x, y"`).
    pub fn unused_note(&self, row: Row, field: Field) -> Option<String> {
        let session = &self.workspace.session;
        self.ignored.note(session, self.generation(), row, field)
    }

    /// Whether the verdicts on the selection's unused values are still on their way.
    pub fn values_pending(&self) -> bool {
        self.ignored.pending()
    }
}
