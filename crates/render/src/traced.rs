//! Traced renders, for attributing a prompt from one render instead of one per message.
//!
//! A traced render renders every message of a conversation as a prefix (no generation
//! prompt, no continuation: the inspector's `P(n)`), with each message's dict noting
//! how many prompt bytes had been written when the template first looked at it (read a
//! key, iterated it, took its length, or a loop reached it). The output is the same as the plain prefix
//! render's: only the dicts carry a probe, and the writer publishes its length.
//!
//! Where a template writes each message's turn only once it has looked at that message,
//! and looks at messages in order, the first look at message `k` marks where the render
//! of the first `k` messages ends; the inspector checks that before relying on it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use minijinja::Value;

use super::{
    conversation, CancelToken, CompiledTemplate, Conversation, RenderControl, RenderError,
};

/// A traced render: the prompt and where the template first looked at each message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedRender {
    /// The render of every message, without generation prompt or continuation.
    pub text: String,
    /// `first_look[i]`: how many bytes of `text` had been written when the template
    /// first looked at message `i` (`None`: never).
    pub first_look: Vec<Option<usize>>,
    /// `last_reach[i]`: how many bytes had been written when a `for` loop last reached
    /// message `i` (`None`: no loop did), among the loops enclosed by the fewest other
    /// loops over messages. A template that scans the messages before its main loop
    /// (Qwen3 and Gemma 4 find the last user message) reaches each message last in that
    /// main loop; one that scans them from inside it (DeepSeek-V3.2 and Command R7B look
    /// up a tool result's call) reaches them there inside an enclosing loop, which does
    /// not count over the main loop's reach.
    pub last_reach: Vec<Option<usize>>,
}

/// The looks at a traced render's messages.
#[derive(Debug)]
struct Looks {
    /// The render's output length, which its writer publishes.
    written: Arc<AtomicUsize>,
    /// Per message: the output length at its first look (`usize::MAX`: none yet).
    first: Vec<AtomicUsize>,
    /// Per message: the output length when a loop last reached it (`usize::MAX`: never),
    /// of the loops with the fewest enclosing loops over messages.
    reached: Vec<AtomicUsize>,
    /// Per message: how many loops over messages enclosed the loop of `reached`.
    reached_depth: Vec<AtomicUsize>,
}

/// One message's link to its render's [`Looks`].
#[derive(Debug)]
pub(crate) struct Probe {
    looks: Arc<Looks>,
    index: usize,
}

impl Probe {
    /// Notes a look at the message (only the first one counts).
    pub(crate) fn touch(&self) {
        let slot = &self.looks.first[self.index];
        if slot.load(Ordering::Relaxed) == usize::MAX {
            slot.store(
                self.looks.written.load(Ordering::Relaxed),
                Ordering::Relaxed,
            );
        }
    }

    /// Notes that a `for` loop inside `enclosing` loops over messages reached the
    /// message (which is also a look); a reach by a more deeply enclosed loop than an
    /// earlier one is not noted.
    pub(crate) fn reach(&self, enclosing: usize) {
        self.touch();
        let depth = &self.looks.reached_depth[self.index];
        if enclosing > depth.load(Ordering::Relaxed) {
            return;
        }
        depth.store(enclosing, Ordering::Relaxed);
        let written = self.looks.written.load(Ordering::Relaxed);
        self.looks.reached[self.index].store(written, Ordering::Relaxed);
    }
}

impl CompiledTemplate {
    /// Renders all of `conversation`'s messages as a prefix (as
    /// [`CompiledTemplate::render_prefix`] does with every message), noting where the
    /// template first looked at each message.
    pub fn render_traced_prefix(
        &self,
        conversation: &Conversation,
        cancel: &CancelToken,
    ) -> Result<TracedRender, RenderError> {
        let count = conversation.messages.len();
        let written = Arc::new(AtomicUsize::new(0));
        let looks = Arc::new(Looks {
            written: Arc::clone(&written),
            first: (0..count).map(|_| AtomicUsize::new(usize::MAX)).collect(),
            reached: (0..count).map(|_| AtomicUsize::new(usize::MAX)).collect(),
            reached_depth: (0..count).map(|_| AtomicUsize::new(usize::MAX)).collect(),
        });
        let messages: Vec<Value> = conversation
            .messages
            .iter()
            .enumerate()
            .map(
                |(index, message)| match conversation::message_entries(message) {
                    Ok(entries) => super::data::probed_dict(
                        entries,
                        Probe {
                            looks: Arc::clone(&looks),
                            index,
                        },
                    ),
                    Err(value) => value,
                },
            )
            .collect();
        let mut control = RenderControl::new(cancel.clone()).without_deadline();
        control.written = Some(written);
        let text = self.render_values_controlled(
            conversation,
            (Value::from(messages), count),
            false,
            &control,
        )?;
        let noted = |slots: &[AtomicUsize]| {
            slots
                .iter()
                .map(|at| Some(at.load(Ordering::Relaxed)).filter(|&at| at != usize::MAX))
                .collect()
        };
        Ok(TracedRender {
            text,
            first_look: noted(&looks.first),
            last_reach: noted(&looks.reached),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;
    use serde_json::json;

    fn conversation() -> Conversation {
        Conversation::new(vec![
            json!({"role": "system", "content": "s"}),
            json!({"role": "user", "content": "u"}),
            json!({"role": "assistant", "content": "a"}),
        ])
    }

    /// `source`'s traced render of [`conversation`].
    fn traced(source: &str) -> TracedRender {
        CompiledTemplate::compile(source, Limits::default())
            .unwrap()
            .render_traced_prefix(&conversation(), &CancelToken::new())
            .unwrap()
    }

    #[test]
    fn notes_where_each_message_is_first_looked_at() {
        let template = CompiledTemplate::compile(
            "[{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}]",
            Limits::default(),
        )
        .unwrap();
        let conversation = conversation();
        let traced = template
            .render_traced_prefix(&conversation, &CancelToken::new())
            .unwrap();
        let plain = template
            .render_prefix(&conversation, 3, &CancelToken::new())
            .unwrap();
        assert_eq!(traced.text, plain);
        assert_eq!(traced.text, "[<system>s<user>u<assistant>a]");
        // A loop reaching a message is a look, before its body writes anything.
        assert_eq!(traced.first_look, vec![Some(1), Some(10), Some(17)]);
    }

    #[test]
    fn a_look_ahead_is_noted_where_it_happens() {
        let traced =
            traced("{{ messages[2].content }}|{% for m in messages %}{{ m.content }}{% endfor %}");
        assert_eq!(traced.text, "a|sua");
        assert_eq!(traced.first_look, vec![Some(2), Some(3), Some(0)]);
        assert_eq!(traced.last_reach, vec![Some(2), Some(3), Some(4)]);
    }

    #[test]
    fn a_scan_before_the_main_loop_is_not_its_last_reach() {
        let traced = traced(
            "{% for m in messages|reverse %}{% endfor %}-{% for m in messages %}{{ m.content }}{% endfor %}",
        );
        assert_eq!(traced.first_look, vec![Some(0), Some(0), Some(0)]);
        assert_eq!(traced.last_reach, vec![Some(1), Some(2), Some(3)]);
    }

    #[test]
    fn a_scan_from_inside_the_main_loop_is_not_its_last_reach() {
        // Like DeepSeek-V3.2 looking up a tool result's call: every turn scans all the
        // messages, the last one after everything was written.
        let traced = traced(
            "{% for m in messages %}{{ m.content }}\
             {% for other in messages %}{% if other.role == 'x' %}!{% endif %}{% endfor %}\
             {% endfor %}",
        );
        assert_eq!(traced.text, "sua");
        assert_eq!(traced.last_reach, vec![Some(0), Some(1), Some(2)]);
    }
}
