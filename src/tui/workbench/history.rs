//! Undo history for the conversation, kept as differences.
//!
//! A whole-session snapshot per step cost a full deep copy of the conversation on the UI
//! thread for every list edit, and up to 200 copies in memory: gigabytes at 10,000
//! messages, since the expected prompt rides along. Instead the history keeps one copy of
//! the session as of the last recorded step (the shadow) and, per step, only the run of
//! messages that changed (found by comparing common prefix and suffix with the shadow)
//! plus the settings when those changed. Recording is a comparison, not a copy.

use serde_json::{Map, Value as Json};

use chatplate_core::session::{Message, Session};

/// How many steps can be undone.
const DEPTH: usize = 200;

/// What to put back to go one step through the history.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    /// Where the changed run of messages starts.
    start: usize,
    /// The messages to put back at `start`.
    messages: Vec<Message>,
    /// How many messages at `start` they replace.
    replaces: usize,
    /// Everything but the messages (tools, variables, settings), when that changed.
    settings: Option<Box<Session>>,
    /// The selected row to restore.
    selected: usize,
}

/// Undo and redo stacks over one session.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// The session as of the last [`History::sync`] or recorded step.
    shadow: Option<Session>,
    undo: Vec<Step>,
    redo: Vec<Step>,
}

impl History {
    /// Whether there is anything to undo.
    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    /// Forgets everything (another session was opened: its history is not this one's).
    pub fn clear(&mut self) {
        *self = History::default();
    }

    /// Takes `session` as the state the next step starts from, without recording what
    /// changed since the last step (a template switch made outside the lists stays when
    /// the next list edit is undone).
    pub fn sync(&mut self, session: &mut Session) {
        match &mut self.shadow {
            Some(shadow) => {
                let _ = difference(shadow, session, 0);
            }
            None => self.shadow = Some(session.clone()),
        }
    }

    /// Records what changed in `session` since the last sync as one step that undo
    /// reverses, selecting `selected` again. Returns whether anything changed.
    pub fn record(&mut self, session: &mut Session, selected: usize) -> bool {
        let Some(shadow) = &mut self.shadow else {
            self.shadow = Some(session.clone());
            return false;
        };
        let Some(step) = difference(shadow, session, selected) else {
            return false;
        };
        if self.undo.len() == DEPTH {
            self.undo.remove(0);
        }
        self.undo.push(step);
        self.redo.clear();
        true
    }

    /// Undoes the last step in `session`; returns the row to select, or `None` when there
    /// is nothing to undo.
    pub fn undo(&mut self, session: &mut Session, selected: usize) -> Option<usize> {
        self.travel(true, session, selected)
    }

    /// Redoes the last undone step; `None` when there is nothing to redo.
    pub fn redo(&mut self, session: &mut Session, selected: usize) -> Option<usize> {
        self.travel(false, session, selected)
    }

    /// One step back (undo) or forward (redo); the step that reverses it goes on the
    /// other stack.
    fn travel(&mut self, back: bool, session: &mut Session, selected: usize) -> Option<usize> {
        let (from, to) = if back {
            (&mut self.undo, &mut self.redo)
        } else {
            (&mut self.redo, &mut self.undo)
        };
        let (inverse, row) = apply(from.pop()?, session, selected);
        to.push(inverse);
        self.sync(session);
        Some(row)
    }
}

/// Puts `step` into `session`; returns the step that reverses it and the row to select.
fn apply(step: Step, session: &mut Session, selected: usize) -> (Step, usize) {
    let end = (step.start + step.replaces).min(session.messages.len());
    let start = step.start.min(end);
    let replaces = step.messages.len();
    let removed: Vec<Message> = session.messages.splice(start..end, step.messages).collect();
    let settings = step.settings.map(|mut settings| {
        let messages = std::mem::take(&mut session.messages);
        std::mem::swap(session, &mut settings);
        session.messages = messages;
        settings
    });
    let inverse = Step {
        start,
        messages: removed,
        replaces,
        settings,
        selected,
    };
    (inverse, step.selected)
}

/// Brings `shadow` up to `now` and returns the step that takes `now` back to the old
/// shadow, or `None` when they are equal. Only the changed run of messages is copied.
fn difference(shadow: &mut Session, now: &mut Session, selected: usize) -> Option<Step> {
    let settings = (!same_settings(shadow, now)).then(|| {
        let old = settings_of(shadow);
        let new = settings_of(now);
        let messages = std::mem::take(&mut shadow.messages);
        *shadow = new;
        shadow.messages = messages;
        Box::new(old)
    });
    let (old, new) = (&shadow.messages, &now.messages);
    let same = |(a, b): &(&Message, &Message)| same_map(&a.0, &b.0);
    let prefix = old.iter().zip(new).take_while(same).count();
    let room = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(same)
        .count();
    let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
    if settings.is_none() && prefix == old_end && prefix == new_end {
        return None;
    }
    let fresh = now.messages[prefix..new_end].to_vec();
    let messages = shadow.messages.splice(prefix..old_end, fresh).collect();
    Some(Step {
        start: prefix,
        messages,
        replaces: new_end - prefix,
        settings,
        selected,
    })
}

/// Whether two objects are equal key for key in order. Equality through the map (one hash
/// lookup per key) made comparing 10,000 messages cost several milliseconds; a reordered
/// key counts as a change here, which it is in the saved file.
fn same_map(a: &Map<String, Json>, b: &Map<String, Json>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
}

/// Whether two values are equal, objects compared in key order (see [`same_map`]).
fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Object(a), Json::Object(b)) => same_map(a, b),
        (Json::Array(a), Json::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        _ => a == b,
    }
}

/// Whether `a` and `b` agree on everything but their messages.
fn same_settings(a: &mut Session, b: &mut Session) -> bool {
    let (ma, mb) = (
        std::mem::take(&mut a.messages),
        std::mem::take(&mut b.messages),
    );
    let same = a == b;
    a.messages = ma;
    b.messages = mb;
    same
}

/// A copy of `session` without its messages.
fn settings_of(session: &mut Session) -> Session {
    let messages = std::mem::take(&mut session.messages);
    let copy = session.clone();
    session.messages = messages;
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn session(contents: &[&str]) -> Session {
        let messages: Vec<_> = contents
            .iter()
            .map(|c| json!({"role": "user", "content": c}))
            .collect();
        serde_json::from_value(json!({
            "version": 1,
            "template": {"path": "t.jinja"},
            "messages": messages,
        }))
        .expect("a valid session")
    }

    fn contents(session: &Session) -> Vec<String> {
        let text = |m: &Message| m.0["content"].as_str().unwrap_or_default().to_string();
        session.messages.iter().map(text).collect()
    }

    #[test]
    fn undo_and_redo_walk_every_kind_of_change() {
        let mut s = session(&["a", "b", "c"]);
        let mut history = History::default();
        history.sync(&mut s);
        s.messages.remove(1);
        assert!(history.record(&mut s, 1));
        s.messages.insert(0, session(&["z"]).messages.remove(0));
        assert!(history.record(&mut s, 0));
        s.add_generation_prompt = true;
        s.messages[2].0.insert("content".into(), json!("C"));
        assert!(history.record(&mut s, 2));
        assert_eq!(contents(&s), ["z", "a", "C"]);

        assert_eq!(history.undo(&mut s, 2), Some(2));
        assert_eq!(
            (contents(&s), s.add_generation_prompt),
            (vec!["z".into(), "a".into(), "c".into()], false)
        );
        assert_eq!(history.undo(&mut s, 2), Some(0));
        assert_eq!(contents(&s), ["a", "c"]);
        assert_eq!(history.undo(&mut s, 0), Some(1));
        assert_eq!(contents(&s), ["a", "b", "c"]);
        assert_eq!(history.undo(&mut s, 1), None);

        assert!(history.redo(&mut s, 1).is_some());
        assert!(history.redo(&mut s, 1).is_some());
        assert!(history.redo(&mut s, 1).is_some());
        assert_eq!(
            (contents(&s), s.add_generation_prompt),
            (vec!["z".into(), "a".into(), "C".into()], true)
        );
        assert_eq!(history.redo(&mut s, 1), None);
    }

    #[test]
    fn a_step_keeps_only_the_changed_run() {
        let many: Vec<String> = (0..1000).map(|i| format!("message {i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let mut s = session(&refs);
        let mut history = History::default();
        history.sync(&mut s);
        s.messages.swap(500, 501);
        assert!(history.record(&mut s, 500));
        let step = &history.undo[0];
        assert_eq!(
            (step.start, step.replaces, step.messages.len()),
            (500, 2, 2)
        );
        assert!(step.settings.is_none());
    }

    #[test]
    fn a_change_made_between_steps_is_not_undone_with_the_next_one() {
        let mut s = session(&["a", "b"]);
        let mut history = History::default();
        history.sync(&mut s);
        s.add_generation_prompt = true; // outside the lists: not recorded
        history.sync(&mut s);
        s.messages.pop();
        assert!(history.record(&mut s, 1));
        history.undo(&mut s, 0);
        assert_eq!(contents(&s), ["a", "b"]);
        assert!(s.add_generation_prompt);
    }

    #[test]
    fn duplicated_neighbours_are_one_insertion() {
        let mut s = session(&["a", "b", "b", "c"]);
        let mut history = History::default();
        history.sync(&mut s);
        let copy = s.messages[1].clone();
        s.messages.insert(1, copy);
        assert!(history.record(&mut s, 2));
        history.undo(&mut s, 2);
        assert_eq!(contents(&s), ["a", "b", "b", "c"]);
        assert!(!history.record(&mut s, 0), "undo leaves the shadow in step");
    }
}
