//! The worker's copy of the conversation, shared with running jobs without copying it.
//!
//! A running job (and a finished attribution, which the caller keeps to reuse) holds
//! the conversation it answers. When the next edit arrived while one was held, the
//! whole conversation was copied before the edit could be applied (`Arc::make_mut`),
//! on the way to the next render. Here each message is
//! shared on its own (`Arc<Json>`): an edit copies the list of pointers, never the
//! messages, and the one job that needs a whole [`Conversation`] (attribution) builds
//! it on its own thread, in the background.

use std::sync::Arc;

use serde_json::Value as Json;

use super::{MessageUpdate, Update};
use chatplate_render::Conversation;

/// Settings and messages, each shared.
#[derive(Debug, Clone, Default)]
pub(super) struct Snapshot {
    /// Everything but the messages (its `messages` is empty).
    pub(crate) settings: Arc<Conversation>,
    /// The messages.
    pub(crate) messages: Arc<Vec<Arc<Json>>>,
}

impl Snapshot {
    /// Applies `update`; copies pointers at most, never a message that did not change.
    pub(crate) fn apply(&mut self, update: Update) {
        if let Some(mut settings) = update.settings {
            settings.messages = Vec::new();
            self.settings = Arc::new(settings);
        }
        match update.messages {
            MessageUpdate::Unchanged => {}
            MessageUpdate::All(messages) => {
                self.messages = Arc::new(messages.into_iter().map(Arc::new).collect());
            }
            MessageUpdate::Some(changed) => {
                let messages = Arc::make_mut(&mut self.messages);
                for (index, message) in changed {
                    if let Some(slot) = messages.get_mut(index) {
                        *slot = Arc::new(message);
                    }
                }
            }
        }
    }

    /// The whole conversation, as the engine's inspection functions take it (a copy
    /// of every message: only for jobs that need one).
    pub(super) fn conversation(&self) -> Conversation {
        let mut conversation = Conversation::clone(&self.settings);
        conversation.messages = self.messages.iter().map(|m| Json::clone(m)).collect();
        conversation
    }

    /// The number of items a render walks (messages, tools, documents).
    pub(crate) fn items(&self) -> usize {
        self.messages.len()
            + self.settings.tools.as_ref().map_or(0, Vec::len)
            + self.settings.documents.as_ref().map_or(0, Vec::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_while_a_job_holds_the_conversation_copies_no_other_message() {
        let mut snapshot = Snapshot::default();
        snapshot.apply(Update {
            settings: None,
            messages: MessageUpdate::All((0..3).map(|i| json!({"content": i})).collect()),
        });
        let held = snapshot.clone();
        snapshot.apply(Update {
            settings: None,
            messages: MessageUpdate::Some(vec![(1, json!({"content": "edited"}))]),
        });
        // The job's snapshot is untouched; the messages not edited are the same ones.
        assert_eq!(*held.messages[1], json!({"content": 1}));
        assert_eq!(*snapshot.messages[1], json!({"content": "edited"}));
        assert!(Arc::ptr_eq(&held.messages[0], &snapshot.messages[0]));
        assert!(Arc::ptr_eq(&held.messages[2], &snapshot.messages[2]));
        assert_eq!(snapshot.conversation().messages.len(), 3);
    }
}
