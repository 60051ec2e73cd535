//! Reading the app's state, for the views and tests: its parts, and what combines
//! several of them (the shown render, the selection, the worker's attribution, tokens
//! and value probes), computed on demand so it can never disagree with its parts. Also
//! the few changes made from outside the keys (loading a session, saving, the periodic
//! file work).

use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use chatplate_core::catalog::TemplateSource;
use chatplate_core::compare::EngineSetup;
use chatplate_core::inspect::Source;
use chatplate_core::session::Session;
use chatplate_core::worker::inspection::Attributed;
use chatplate_core::worker::tokenizing::TokenizedPrompt;

use super::{preview_for, App};
use crate::tui::action::Pane;
use crate::tui::compare::OtherSide;
use crate::tui::compare::Sides;
use crate::tui::context::Effect;
use crate::tui::dialogs::Overlay;
use crate::tui::files::disk::Job;
use crate::tui::files::workspace::Workspace;
use crate::tui::files::FileRequest;
use crate::tui::files::FileWork;
use crate::tui::jobs::attribution::AttributionState;
use crate::tui::jobs::attribution::Explanation;
use crate::tui::panes::messages::editor::FieldEditor;
use crate::tui::panes::messages::fields::Field;
use crate::tui::panes::messages::fields::Row;
use crate::tui::panes::messages::MessagesPane;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::panes::templates::TemplatesPane;
use crate::tui::preview::Preview;
use crate::tui::screen::Screen;
use crate::tui::screen::Status;
use crate::tui::theme::Theme;

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

    /// What the status line said this run.
    pub fn log(&self) -> &crate::tui::dialogs::log::MessageLog {
        &self.log
    }

    /// lint's double-bos warning on the shown prompt: it starts with the BOS token while
    /// the tokenizer config or the GGUF says the tokenizer adds one too.
    pub fn double_bos(&self) -> Option<String> {
        let (session, template) = (&self.workspace.session, &self.workspace.template);
        // As the render gets it: the session's (set from the template when opened),
        // under its variables.
        let bos = match session.variables.get("bos_token") {
            Some(value) => value.as_str(),
            None => session.bos_token.as_deref(),
        };
        let prompt = self.preview.output.as_deref().ok()?;
        chatplate_core::lint::double_bos::warning(template, bos, prompt)
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
        self.opening.candidates(&self.templates.catalog, "")
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
        match self.jobs.explanation.state(&self.preview) {
            AttributionState::Pending | AttributionState::OnScreen if self.work_stopped() => {
                AttributionState::Stopped
            }
            state => state,
        }
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

    /// The turn-cost column's cell of message `index` (`↻123t`), when shown.
    pub fn turn_cost_cell(&self, index: usize) -> Option<String> {
        self.jobs.turn_cost.cell(index)
    }

    /// The turn-cost sum for the Messages title, while the column is shown.
    pub fn turn_cost_title(&self) -> Option<String> {
        self.jobs.turn_cost.title(self.generation())
    }

    /// The settings' Knobs section as the messages pane holds it.
    pub fn knob_rows(&self) -> &[crate::tui::jobs::knobs::KnobRow] {
        &self.messages.knobs
    }

    /// The failed round trip of message `index`, for its detail.
    pub fn round_trip_note(&self, index: usize) -> Vec<String> {
        self.jobs.round_trips.note(index)
    }

    /// The byte ranges of the shown prompt inside `{% generation %}` blocks.
    pub fn generation_spans(&self) -> &[std::ops::Range<usize>] {
        self.jobs.generation_marks.spans(&self.preview)
    }

    /// The compare view and the template preview.
    pub fn sides(&self) -> &Sides {
        &self.jobs.sides
    }

    /// The side shown beside the session's render (the preview, else the compare view).
    pub fn other_side(&self) -> Option<&OtherSide> {
        self.jobs.sides.shown()
    }

    /// Where the compare view finds the external engines (`python`, `hf-jinja`) and
    /// their bounds; by default `$CHATPLATE_PYTHON` and `node` on the PATH.
    pub fn set_engines(&mut self, setup: EngineSetup) {
        self.jobs.sides.set_engines(setup.clone());
        self.jobs.matrix.set_engines(setup);
    }

    /// Lists the config file's plug-in engines in the engine matrix.
    pub fn add_plugin_engines(&mut self, plugins: Vec<chatplate_core::compare::Engine>) {
        self.jobs.matrix.add_plugins(plugins);
    }

    /// The engine matrix: every engine's verdict on the session.
    pub fn matrix(&self) -> &crate::tui::jobs::matrix::EngineMatrix {
        &self.jobs.matrix
    }

    /// What to change in message `index` for the session's template.
    pub fn needs(&self, index: usize) -> Vec<String> {
        let badges = &self.templates.badges;
        crate::tui::panes::messages::needs::needs(&self.workspace, badges, index)
    }

    /// Replaces the workspace (after opening or restoring a session).
    pub fn load(&mut self, workspace: Workspace) {
        self.preview = preview_for(&workspace);
        if let Some(template) = workspace.current_template() {
            self.templates.remember(template);
        }
        self.workspace = workspace;
        // Steps recorded in the old session would splice its messages into this one.
        self.workbench.forget_history();
        self.editor = None;
        self.messages = MessagesPane::default();
        self.prompt.new_session();
        self.invalidate();
    }

    /// Saves to `path` (or the current file); asks for a name the first time. The event
    /// loop writes the file unless another program changed it since it was read, which
    /// brings up the question of what to do.
    pub fn save(&mut self, path: Option<PathBuf>) -> Option<Effect> {
        self.file(FileRequest::Save {
            path,
            then_quit: false,
        })
    }

    /// File work that is due at `now` (see [`FileWork::tick`]).
    pub fn tick(&mut self, now: Instant) -> Vec<Job> {
        let dialog_open = self.overlay.is_some();
        (self.file_work).tick(now, &mut self.workspace, dialog_open)
    }

    /// Notes whether a recovery write is under way elsewhere (see
    /// [`crate::tui::app::autosave`]): [`App::tick`] asks for no other meanwhile.
    pub fn recovery_in_flight(&mut self, writing: bool) {
        self.file_work.recovery_in_flight = writing;
    }

    /// This run's recovery file is `path` from now on (chosen before the write that
    /// makes it, see [`crate::tui::app::autosave`]).
    pub fn adopt_recovery(&mut self, path: std::path::PathBuf) {
        self.workspace.adopt_recovery(path);
    }

    /// When [`App::tick`] next has work to do.
    pub fn next_tick(&self, now: Instant) -> Instant {
        let files = self.file_work.next_tick(now, &self.workspace);
        self.next_work_tick(now)
            .map_or(files, |work| work.min(files))
    }

    /// The recovery file's job when the app is ending abnormally (`None`: nothing
    /// unsaved); see [`crate::tui::app::driver::emergency_save`].
    pub fn emergency_job(&mut self) -> Option<Job> {
        FileWork::emergency_job(&mut self.workspace)
    }

    /// Undo history, go-to and find.
    pub fn workbench(&self) -> &crate::tui::workbench::Workbench {
        &self.workbench
    }

    /// Whether the prompt pane shows tokens.
    pub fn token_mode_on(&self) -> bool {
        self.jobs.token_mode.enabled
    }
}
