//! Replies to background jobs (attribution, and the other inspection and tokenizing
//! jobs), routed to the state each belongs to.

use chatplate_core::worker::{JobKind, Reply};

use super::action::Effect;
use super::app::App;

impl App {
    /// Takes a background reply in; returns whether anything shown changed. File work
    /// a reply leads to (opening a session) goes to `effects`.
    pub(super) fn receive_background(&mut self, reply: Reply, effects: &mut Vec<Effect>) -> bool {
        match reply.kind {
            JobKind::Attribute => self.receive_attribution(reply),
            JobKind::Open => self.receive_opened(reply, effects),
            JobKind::ScanCache => self.receive_cached(reply),
            JobKind::Tokenize => self.receive_tokens(reply),
            JobKind::Capabilities => self.templates.info.receive(reply),
            JobKind::Values => self.receive_values(reply),
            JobKind::Badges => self.receive_badges(reply),
            JobKind::Render => false,
        }
    }

    /// Whether a background result for the shown render is still on its way.
    pub fn background_pending(&self) -> bool {
        self.attribution_pending()
            || self.open_pending()
            || self.tokens_pending()
            || self.templates.info.pending()
            || self.values_pending()
            || self.templates.badges.pending()
    }

    /// Asks for what the screen shows next and the worker has not answered: the
    /// selection's unused values and the template list's badges (cheap when known).
    pub(super) fn request_background(&mut self) {
        self.request_values();
        self.request_badges();
    }

    /// With the info view open, asks about the selected template unless its answers are
    /// cached or on their way.
    pub(super) fn request_info(&mut self) {
        if let Some((generation, job)) = self.templates.info_job() {
            self.submit_job(generation, job);
        }
    }

    /// Asks for the badges of the next template in the list's window that has none.
    fn request_badges(&mut self) {
        if let Some((id, job)) = self.templates.badge_job(&self.screen) {
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
