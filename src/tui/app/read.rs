//! Reading the app's state, for the views and tests: its parts, and what combines
//! several of them (the shown render, the selection, the worker's attribution, tokens
//! and value probes), computed on demand so it can never disagree with its parts. Also
//! the few changes made from outside the keys.

use std::ops::Range;

use chatplate_core::catalog::TemplateSource;
use chatplate_core::inspect::Source;
use chatplate_core::session::Session;
use chatplate_core::worker::inspection::Attributed;
use chatplate_core::worker::tokenizing::TokenizedPrompt;

use super::App;
use crate::tui::app::action::Pane;
use crate::tui::app::preview::Preview;
use crate::tui::app::screen::{Screen, Status};
use crate::tui::dialogs::Overlay;
use crate::tui::files::workspace::Workspace;
use crate::tui::jobs::attribution::{AttributionState, Explanation};
use crate::tui::panes::messages::editor::FieldEditor;
use crate::tui::panes::messages::fields::{Field, Row};
use crate::tui::panes::messages::MessagesPane;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::panes::templates::TemplatesPane;
use crate::tui::terminal::theme::Theme;

impl App {
    /// The session and its files.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The shown render (or error).
    pub fn preview(&self) -> &Preview {
        &self.preview
    }

    /// The open field editor, if any.
    pub fn editor(&self) -> Option<&FieldEditor> {
        self.editor.as_ref()
    }

    /// Exact attribution of the shown prompt, as far as it has arrived.
    pub fn explanation(&self) -> &Explanation {
        &self.jobs.explanation
    }

    /// The template list, its filter and the source view.
    pub fn templates(&self) -> &TemplatesPane {
        &self.templates
    }

    /// The message list's selection.
    pub fn messages(&self) -> &MessagesPane {
        &self.messages
    }

    /// The prompt pane's scroll, toggles and search.
    pub fn prompt(&self) -> &PromptPane {
        &self.prompt
    }

    /// The dialog on top, if any.
    pub fn overlay(&self) -> Option<&Overlay> {
        self.overlay.as_ref()
    }

    /// Focus and terminal size.
    pub fn screen(&self) -> Screen {
        self.screen
    }

    /// The status line's message, if any.
    pub fn status(&self) -> Option<&Status> {
        self.status.as_ref()
    }

    /// Colours or modifiers only.
    pub fn theme(&self) -> Theme {
        self.theme
    }

    /// Draws with `terminal::theme` from now on (the config file's palette, `NO_COLOR`).
    pub fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
    }

    /// The session and its files, taking the app apart (to open them in another app).
    pub fn into_workspace(self) -> Workspace {
        self.workspace
    }

    /// Changes the session from outside the keys, as one edit: unsaved, and rendered
    /// again.
    pub fn edit_session(&mut self, edit: impl FnOnce(&mut Session)) {
        edit(&mut self.workspace.session);
        self.edited();
    }

    /// Adds `template` to the template list (or refreshes it there) and selects it.
    pub fn add_template(&mut self, template: &TemplateSource) {
        self.templates.remember(template);
    }

    /// Asks the worker to scan the Hugging Face cache for the Templates pane (once the
    /// first render is on its way).
    pub fn scan_cache(&mut self) {
        self.opening.scan();
    }

    /// Whether an open is still on its way (tests wait for it).
    pub fn open_pending(&self) -> bool {
        self.opening.opening()
    }

    /// Everything the opener offers: this run's earlier opens first, then the files
    /// listed, the `--templates` folders' templates and the cached model ids.
    pub fn opener_candidates(&self) -> Vec<String> {
        self.opening.candidates(&self.templates.catalog)
    }

    /// The byte offset the prompt view follows: the selected message's span, or the
    /// nearest earlier message that was found in the prompt.
    pub fn prompt_anchor(&self) -> Option<usize> {
        if let Some(first) = self.selected_ranges().first() {
            return Some(first.start);
        }
        (0..=self.messages.selected)
            .rev()
            .take(self.preview.spans.len() + 1)
            .find_map(|index| self.preview.span(index).map(|r| r.start))
    }

    /// The prompt cursor's byte offset, kept inside the shown prompt and on a character
    /// boundary.
    pub fn cursor_offset(&self) -> Option<usize> {
        self.prompt.cursor_offset(&self.preview)
    }

    /// What the prompt cursor covers on screen: the token or character under it, while
    /// the prompt pane has the focus.
    pub fn cursor_range(&self) -> Option<Range<usize>> {
        if self.screen.focus != Pane::Prompt {
            return None;
        }
        self.prompt
            .cursor_range(&self.preview, &self.jobs.token_mode)
    }

    /// The attribution of the shown prompt, when it has arrived.
    pub fn attribution(&self) -> Option<&Attributed> {
        self.jobs.explanation.current(&self.preview)
    }

    /// How far attribution of the shown prompt has got.
    pub fn attribution_state(&self) -> AttributionState {
        self.jobs.explanation.state(&self.preview)
    }

    /// The prompt byte ranges the selected message produced: exact when attributed,
    /// else the quick search's guess.
    pub fn selected_ranges(&self) -> Vec<Range<usize>> {
        self.jobs
            .explanation
            .ranges(&self.preview, self.messages.selected)
    }

    /// From the start of the selected message's first range to the end of its last.
    pub fn selected_extent(&self) -> Option<Range<usize>> {
        let ranges = self.selected_ranges();
        Some(ranges.first()?.start..ranges.last()?.end)
    }

    /// Bytes each message produced exactly, per message, when attributed (`None` for a
    /// message a partial attribution has not reached).
    pub fn message_bytes(&self) -> Option<Vec<Option<usize>>> {
        self.jobs.explanation.message_bytes(&self.preview)
    }

    /// The producer of prompt byte `offset`, when attributed.
    pub fn source_at(&self, offset: usize) -> Option<Source> {
        self.jobs.explanation.source_at(&self.preview, offset)
    }

    /// The tokens of the shown prompt, in token mode, once they have arrived.
    pub fn shown_tokens(&self) -> Option<&TokenizedPrompt> {
        self.jobs.token_mode.shown(&self.preview)
    }

    /// Tokens per message (wholly inside its bytes), for the message list: exact with
    /// attribution, else from the quick content search. Only rows on screen ask.
    pub fn message_tokens(&self, index: usize) -> Option<usize> {
        let ranges = self.jobs.explanation.ranges(&self.preview, index);
        self.jobs.token_mode.count_in(&self.preview, &ranges)
    }

    /// The prompt title's token note: the total and the token under the cursor, or
    /// what the mode is waiting for.
    pub fn token_note(&self) -> String {
        self.jobs
            .token_mode
            .note(&self.preview, self.cursor_offset())
    }

    /// Whether message `index`'s content becomes a special token the model receives
    /// (token mode, once the tokens of the shown prompt have arrived).
    pub fn injected(&self, index: usize) -> bool {
        crate::tui::panes::prompt::injection::injected(self.shown_tokens(), index)
    }

    /// Why `field` of `row` is marked "not used by this template", if it is: `Some("")`
    /// when the whole value is unused, else which parts of it (`"part 2"`, `"x, y"`).
    pub fn unused_note(&self, row: Row, field: Field) -> Option<String> {
        let session = &self.workspace.session;
        self.jobs
            .ignored
            .note(session, self.generation(), row, field)
    }

    /// Why some values of `row` carry no "not used" mark: not checked, renders are slow.
    pub fn unchecked_note(&self, row: Row) -> Option<String> {
        self.jobs.ignored.unchecked_note(self.generation(), row)
    }

    /// Whether the verdicts on the selection's unused values are still on their way.
    pub fn values_pending(&self) -> bool {
        self.jobs.ignored.pending()
    }

    /// Whether assistant message `index` survives its round trip (`None`: no badge).
    pub fn round_trip_of(&self, index: usize) -> Option<bool> {
        self.jobs.round_trips.of(index)
    }

    /// The failed round trip of message `index`, for its detail.
    pub fn round_trip_note(&self, index: usize) -> Vec<String> {
        self.jobs.round_trips.note(index)
    }

    /// The byte ranges of the shown prompt inside `{% generation %}` blocks.
    pub fn generation_spans(&self) -> &[std::ops::Range<usize>] {
        self.jobs.generation_marks.spans(&self.preview)
    }

    /// What to change in message `index` for the session's template.
    pub fn needs(&self, index: usize) -> Vec<String> {
        let badges = &self.templates.badges;
        crate::tui::panes::messages::needs::needs(&self.workspace, badges, index)
    }
}
