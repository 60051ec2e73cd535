//! Replies to background jobs (attribution, and the other inspection and tokenizing
//! jobs), routed to the state each belongs to.

use crate::worker::{JobKind, Reply};

use super::app::App;

impl App {
    /// Takes a background reply in; returns whether anything shown changed.
    pub(super) fn receive_background(&mut self, reply: Reply) -> bool {
        match reply.kind {
            JobKind::Attribute => self.receive_attribution(reply),
            JobKind::Open => self.receive_opened(reply),
            JobKind::ScanCache => self.receive_cached(reply),
            JobKind::Tokenize => self.receive_tokens(reply),
            JobKind::Capabilities => self.receive_info(reply),
            JobKind::Render => false,
        }
    }

    /// Whether a background result for the shown render is still on its way.
    pub fn background_pending(&self) -> bool {
        self.attribution_pending()
            || self.open_pending()
            || self.tokens_pending()
            || self.info_pending()
    }
}
