//! The worker's conversation as template values, kept in step with each [`Update`], so
//! a keystroke converts the one edited message instead of the whole conversation.
//!
//! Converting messages to template values was redone in full for every render (about a
//! fifth of a render's time at 1,000 messages). Here the values live beside the
//! worker's conversation: an edit of some messages converts only those (the others are
//! shared, not copied), and a new message list is converted once, when a job first
//! needs it.

use std::sync::Arc;

use super::snapshot::Snapshot;
use super::{MessageUpdate, Update};
use chatplate_render::PreparedMessages;

/// The converted messages, or nothing until a job needs them.
#[derive(Debug, Default)]
pub(super) struct MessageValues {
    prepared: Option<Arc<PreparedMessages>>,
}

impl MessageValues {
    /// Takes in `update` (before it is applied to the conversation).
    pub(crate) fn note(&mut self, update: &Update) {
        match &update.messages {
            MessageUpdate::Unchanged => {}
            MessageUpdate::All(_) => self.prepared = None,
            MessageUpdate::Some(changed) => {
                if let Some(prepared) = self.prepared.as_mut() {
                    // Copies the list of shared values only when a running job still
                    // holds the previous one.
                    let prepared = Arc::make_mut(prepared);
                    for (index, message) in changed {
                        prepared.set(*index, message);
                    }
                }
            }
        }
    }

    /// The values of `conversation`'s messages (converted now if a new list came).
    pub(crate) fn current(&mut self, conversation: &Snapshot) -> Arc<PreparedMessages> {
        Arc::clone(self.prepared.get_or_insert_with(|| {
            Arc::new(PreparedMessages::of_messages(
                conversation.messages.iter().map(|m| &**m),
            ))
        }))
    }
}
