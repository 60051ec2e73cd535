//! Blocks of messages (the range mode, `v`): what deleting, moving, duplicating,
//! changing the role of, copying and pasting a run of messages does to the session.
//! Pure functions of the session and the block; the pane keeps the anchor and the
//! workbench records each call as one undo step.

use std::ops::RangeInclusive;

use serde_json::Value as Json;

use chatplate_core::session::{Message, Session};

use crate::tui::panes::messages::conversation;

/// The messages between `anchor` and `cursor`, both included, inside the list (the
/// settings row after the last message is not a message); `None` without messages.
pub fn span(anchor: usize, cursor: usize, count: usize) -> Option<RangeInclusive<usize>> {
    let last = count.checked_sub(1)?;
    let (low, high) = (anchor.min(cursor).min(last), anchor.max(cursor).min(last));
    Some(low..=high)
}

/// Removes the block; the row to select after (the message that followed it).
pub fn delete(session: &mut Session, block: &RangeInclusive<usize>) -> usize {
    session.messages.drain(block.clone());
    *block.start()
}

/// Moves the block one message up or down, past its neighbour; the moved block, or
/// `None` when it is already at that end.
pub fn shift(
    session: &mut Session,
    block: &RangeInclusive<usize>,
    down: bool,
) -> Option<RangeInclusive<usize>> {
    let (start, end) = (*block.start(), *block.end());
    let messages = &mut session.messages;
    if down {
        let after = end + 1;
        (after < messages.len()).then(|| {
            messages[start..=after].rotate_right(1);
            start + 1..=after
        })
    } else {
        let before = start.checked_sub(1)?;
        messages[before..=end].rotate_left(1);
        Some(before..=end - 1)
    }
}

/// Puts a copy of the block right after it; the copy.
pub fn duplicate(session: &mut Session, block: &RangeInclusive<usize>) -> RangeInclusive<usize> {
    let copy: Vec<Message> = session.messages[block.clone()].to_vec();
    insert(session, block.end() + 1, copy)
}

/// Gives every message of the block `role`.
pub fn set_role(session: &mut Session, block: &RangeInclusive<usize>, role: &str) {
    for message in &mut session.messages[block.clone()] {
        message.0.insert("role".into(), role.into());
    }
}

/// The role after the first message's (system, user, assistant, tool), for all of the
/// block: one press makes a mixed block uniform.
pub fn cycle_role(session: &mut Session, block: &RangeInclusive<usize>) -> String {
    let next = conversation::cycle_role(session.messages[*block.start()].role()).to_string();
    set_role(session, block, &next);
    next
}

/// The block as a pretty JSON array of messages, as a session file writes them.
pub fn to_json(session: &Session, block: &RangeInclusive<usize>) -> String {
    let messages: Vec<&Message> = session.messages[block.clone()].iter().collect();
    serde_json::to_string_pretty(&messages).unwrap_or_default() + "\n"
}

/// Inserts `messages` at `at` (clamped to the list); where they went.
pub fn insert(session: &mut Session, at: usize, messages: Vec<Message>) -> RangeInclusive<usize> {
    let at = at.min(session.messages.len());
    let count = messages.len();
    session.messages.splice(at..at, messages);
    at..=at + count.saturating_sub(1)
}

/// Messages from pasted JSON: an array of messages, one message, or an object with a
/// `messages` array (a session file, an OpenAI request body). Each must be an object
/// with a string `role`. The error says where: `line:column` of bad JSON, or which
/// message is wrong.
pub fn parse(text: &str) -> Result<Vec<Message>, String> {
    let value: Json = serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|err| {
        // serde_json's text ends in " at line L column C": said once, first.
        let text = err.to_string();
        let what = text
            .rfind(" at line ")
            .map_or(text.as_str(), |at| &text[..at]);
        format!("not JSON at {}:{}: {what}", err.line(), err.column())
    })?;
    let list = match value {
        Json::Array(list) => list,
        Json::Object(mut object) => match object.remove("messages") {
            Some(Json::Array(list)) => list,
            Some(_) => return Err("\"messages\" is not a list".into()),
            None => vec![Json::Object(object)],
        },
        _ => return Err("not messages: paste a JSON list of {\"role\": …} objects".into()),
    };
    if list.is_empty() {
        return Err("no messages in the pasted list".into());
    }
    list.into_iter()
        .enumerate()
        .map(|(index, item)| match item {
            Json::Object(fields) if fields.get("role").is_some_and(Json::is_string) => {
                Ok(Message(fields))
            }
            Json::Object(_) => Err(format!(
                "pasted message {} has no string \"role\"",
                index + 1
            )),
            _ => Err(format!("pasted item {} is not an object", index + 1)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(roles: &[&str]) -> Session {
        let template = chatplate_core::catalog::default_template();
        let mut session = conversation::example_session(template.reference(&std::env::temp_dir()));
        session.messages = (roles.iter().enumerate())
            .map(|(i, role)| Message::new(role, &format!("m{i}")))
            .collect();
        session
    }

    fn contents(session: &Session) -> Vec<String> {
        (session.messages.iter())
            .map(|m| m.0["content"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    #[test]
    fn a_span_is_ordered_and_stays_on_messages() {
        assert_eq!(span(5, 2, 10), Some(2..=5));
        assert_eq!(
            span(2, 10, 10),
            Some(2..=9),
            "the settings row is not a message"
        );
        assert_eq!(span(0, 0, 0), None);
    }

    #[test]
    fn deleting_moving_and_duplicating_a_block() {
        let mut s = session(&["system", "user", "assistant", "user", "assistant"]);
        assert_eq!(shift(&mut s, &(1..=2), true), Some(2..=3));
        assert_eq!(contents(&s), ["m0", "m3", "m1", "m2", "m4"]);
        assert_eq!(shift(&mut s, &(2..=3), false), Some(1..=2));
        assert_eq!(contents(&s), ["m0", "m1", "m2", "m3", "m4"]);
        assert_eq!(shift(&mut s, &(0..=1), false), None, "already first");
        assert_eq!(shift(&mut s, &(3..=4), true), None, "already last");
        assert_eq!(duplicate(&mut s, &(1..=2)), 3..=4);
        assert_eq!(contents(&s), ["m0", "m1", "m2", "m1", "m2", "m3", "m4"]);
        assert_eq!(delete(&mut s, &(1..=4)), 1);
        assert_eq!(contents(&s), ["m0", "m3", "m4"]);
    }

    #[test]
    fn a_block_takes_the_role_after_its_first_message() {
        let mut s = session(&["user", "assistant", "tool"]);
        assert_eq!(cycle_role(&mut s, &(0..=2)), "assistant");
        let roles: Vec<&str> = s.messages.iter().map(Message::role).collect();
        assert_eq!(roles, ["assistant"; 3]);
    }

    #[test]
    fn copied_json_pastes_back_as_the_same_messages() {
        let s = session(&["system", "user", "assistant"]);
        let json = to_json(&s, &(1..=2));
        assert_eq!(parse(&json).unwrap(), s.messages[1..=2].to_vec());
        let body = r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#;
        assert_eq!(parse(body).unwrap(), vec![Message::new("user", "hi")]);
        let one = r#"{"role": "tool", "content": "18"}"#;
        assert_eq!(parse(one).unwrap(), vec![Message::new("tool", "18")]);
    }

    #[test]
    fn bad_pasted_json_says_where() {
        let err = parse("[{\"role\": \"user\",\n  \"content\": }]").unwrap_err();
        assert_eq!(err, "not JSON at 2:14: expected value");
        let err = parse(r#"[{"role": "user"}, {"content": "x"}]"#).unwrap_err();
        assert_eq!(err, "pasted message 2 has no string \"role\"");
        assert!(parse("[]").is_err() && parse("3").is_err());
    }
}
