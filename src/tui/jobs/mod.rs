//! The app's side of the render worker's background jobs (attribution, tokens, value
//! probes, capabilities, badges, opening): each state owns its bookkeeping and hands out
//! jobs; here they are submitted, and replies routed back to the state each belongs to.

pub mod attribution;
pub mod attribution_view;
pub mod generation_marks;
pub mod ignored;
pub mod round_trips;

use chatplate_core::worker::{JobKind, Reply};

use crate::tui::app::action::Effect;
use crate::tui::app::App;
use crate::tui::jobs::attribution::{InView, More};
use crate::tui::panes::messages::fields::Row;

impl App {
    /// Takes a background reply in; returns whether anything shown changed. File work
    /// a reply leads to (opening a session) goes to `effects`.
    pub(in crate::tui) fn receive_background(
        &mut self,
        reply: Reply,
        effects: &mut Vec<Effect>,
    ) -> bool {
        let shown = self.preview.generation;
        match reply.kind {
            JobKind::Attribute => {
                let changed = self.explanation.receive(reply, shown);
                self.request_more_attribution();
                changed
            }
            JobKind::Open if self.awaits_side() => self.receive_side_opened(reply),
            JobKind::Open => self.receive_opened(reply, effects),
            JobKind::ScanCache => self.receive_cached(reply),
            JobKind::Tokenize => self.receive_tokens(reply, shown),
            JobKind::Capabilities => self.templates.info.receive(reply),
            JobKind::Values => self.receive_values(reply),
            JobKind::Badges => self.receive_badges(reply),
            JobKind::Compare => self.receive_compared(reply),
            JobKind::Parse => self.receive_pasted(reply),
            JobKind::RoundTrips => self.receive_round_trips(reply),
            JobKind::GenerationMarks => self.receive_generation_marks(reply),
            JobKind::Render => false,
        }
    }

    /// Takes tokens in; a new reason why there are none (no tokenizer, a bad file) also
    /// goes to the status line, which has the width the prompt pane's title lacks.
    fn receive_tokens(&mut self, reply: Reply, shown: u64) -> bool {
        let before = self.token_mode.error.clone();
        let changed = self.token_mode.receive(reply, shown);
        match &self.token_mode.error {
            Some(error) if before.as_ref() != Some(error) => self.warn(error.clone()),
            _ => {}
        }
        changed
    }

    /// Whether a background result for the shown render is still on its way.
    pub fn background_pending(&self) -> bool {
        let shown = self.preview.generation;
        self.explanation.pending(shown)
            || self.open_pending()
            || self.token_mode.pending(shown)
            || self.templates.info.pending()
            || self.ignored.pending()
            || self.templates.badges.pending()
            || self.sides.pending()
            || self.paste_pending()
            || self.round_trips_pending()
            || self.generation_marks_pending()
    }

    /// Asks for what the screen shows next and the worker has not answered: the
    /// selection's unused values and the template list's badges (cheap when known).
    pub(in crate::tui) fn request_background(&mut self) {
        self.request_more_attribution();
        self.request_values();
        self.request_badges();
        self.request_sides();
    }

    /// After a render of the current session arrived: asks for its attribution, on
    /// screen first.
    pub(in crate::tui) fn request_attribution(&mut self) {
        let stale = self.is_stale();
        let in_view = self.in_view();
        if let Some((generation, job)) = self.explanation.request(&self.preview, stale, in_view) {
            self.submit_job(generation, job);
        }
    }

    /// While the shown attribution is partial: asks again on screen first when the view
    /// has moved past it, else for the whole attribution.
    fn request_more_attribution(&mut self) {
        // Runs after every action: finding the message in view scans the messages.
        if self.is_stale() || !self.explanation.partial(&self.preview) {
            return;
        }
        let in_view = self.in_view();
        match self.explanation.request_more(&self.preview, in_view) {
            Some(More::Ask(generation, job)) => self.submit_job(generation, job),
            Some(More::Declined(reason)) => self.notify(reason),
            None => {}
        }
    }

    /// What the user is looking at: the message under the prompt cursor, else at the
    /// top of a prompt view scrolled away from the selection (by the quick content
    /// search), else the selected one.
    fn in_view(&self) -> InView {
        InView::new(self.message_in_view(), self.screen.height)
    }

    fn message_in_view(&self) -> usize {
        let offset = self.prompt.cursor_offset(&self.preview).or_else(|| {
            let line = self.prompt.top?;
            self.preview.line_starts.get(line).copied()
        });
        let count = self.workspace.session.messages.len();
        let selected = self.messages.selected.min(count.saturating_sub(1));
        let Some(offset) = offset else {
            return selected;
        };
        (0..count)
            .rev()
            .find(|&i| {
                self.preview
                    .span(i)
                    .is_some_and(|span| span.start <= offset)
            })
            .unwrap_or(selected)
    }

    /// Turns token mode on or off; on, asks for the tokens of the shown prompt.
    pub(in crate::tui) fn toggle_tokens(&mut self) {
        self.token_mode.toggle();
        self.request_tokens();
    }

    /// After a render of the current session arrived: asks for its tokens (token mode).
    pub(in crate::tui) fn request_tokens(&mut self) {
        let stale = self.is_stale();
        let choice = || crate::tui::panes::prompt::tokens::tokenizer_choice(&self.workspace);
        if let Some((generation, job)) = self.token_mode.request(&self.preview, stale, choice) {
            self.submit_job(generation, job);
        }
    }

    /// Asks which values of the selected message and of the settings the template
    /// ignores, once the shown render is current and not an error.
    fn request_values(&mut self) {
        let message = match self.messages.row(&self.workspace.session) {
            Row::Message(index) => Some(index),
            Row::Settings => None,
        };
        let generation = self.generation();
        if let Some((id, job)) = self.ignored.request(&self.preview, generation, message) {
            self.submit_job(id, job);
        }
    }

    fn receive_values(&mut self, reply: Reply) -> bool {
        let Some(shown) = self.ignored.receive(reply, self.generation()) else {
            return false;
        };
        self.request_values();
        shown
    }

    /// With the info view open, asks about the selected template unless its answers are
    /// cached or on their way.
    pub(in crate::tui) fn request_info(&mut self) {
        if let Some((generation, job)) = self.templates.info_job() {
            self.submit_job(generation, job);
        }
    }

    /// Asks for the badges of the next template in the list's window that has none.
    fn request_badges(&mut self) {
        // The session's own template first: the conversation's warnings need it.
        let own = self.templates.badges.job_for(&self.workspace.template);
        if let Some((id, job)) = own.or_else(|| self.templates.badge_job(&self.screen)) {
            self.submit_job(id, job);
        }
    }

    fn receive_badges(&mut self, reply: Reply) -> bool {
        let Some(changed) = self.templates.badges.receive(reply) else {
            return false;
        };
        self.request_badges();
        changed
    }
}
