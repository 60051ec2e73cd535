//! Locating the tool definitions in an attributed prompt: the bytes that are inserted
//! when the same conversation is rendered with its tools rather than without.
//!
//! The comparison is made on the shortest prefix render that shows the difference (the
//! preamble, or Llama 3.1's first user message), so that tool *calls* rendered
//! differently further on do not count. A line diff finds the inserted runs; within a
//! changed run, only the differing middle counts. Templates print definitions in one
//! or a few places (Llama 3.1: `Environment: ipython` in the system turn and the
//! definitions in the first user turn), so the block may be several ranges.

use std::ops::Range;

use super::attribution::{carvable, Span, ToolsBlock};
use super::prefixes::{Bounds, Shared};
use super::text::{common_prefix_len, common_suffix_len};
use super::{Cancelled, InspectError};
use crate::diff::{diff_lines, DiffLine};
use chatplate_render::{CancelToken, CompiledTemplate, Conversation, RenderErrorKind};

/// The whole conversation rendered without its tools, which [`locate`] compares the
/// prompt with: `None` when there are no tools (nothing to locate) or neither form
/// renders. A render as long as the prompt, independent of the prefix renders, so the
/// attribution runs it beside them.
pub(super) fn without_tools(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    cancel: &CancelToken,
) -> Result<Option<String>, InspectError> {
    if has_tools(conversation) {
        render_without(template, conversation, shared, None, cancel)
    } else {
        Ok(None)
    }
}

fn has_tools(conversation: &Conversation) -> bool {
    conversation
        .tools
        .as_ref()
        .is_some_and(|tools| !tools.is_empty())
}

/// Finds the tools block of `prompt` (the render of `conversation`), given the
/// conversation rendered without its tools ([`without_tools`]).
pub(super) fn locate(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    without: Option<String>,
    bounds: &Bounds,
    spans: &[Span],
    cancel: &CancelToken,
) -> Result<ToolsBlock, InspectError> {
    if !has_tools(conversation) {
        return Ok(ToolsBlock::NoTools);
    }
    let Some(without) = without else {
        return Ok(ToolsBlock::NotSeparable);
    };
    let prompt = shared.prompt;
    let first = common_prefix_len(prompt, &without);
    if first == prompt.len() && first == without.len() {
        return Ok(ToolsBlock::NotRendered);
    }
    // The shortest prefix that reaches the first difference.
    let (_, slot) = bounds.at(first);
    let (with, without, agrees) = if slot <= conversation.messages.len() {
        let with = template.render_prepared_prefix(conversation, &shared.prepared, slot, cancel);
        let without = render_without(template, conversation, shared, Some(slot), cancel)?;
        match (with, without) {
            (Ok(with), Some(without)) => {
                let agrees = common_prefix_len(&with, prompt);
                (with, without, agrees)
            }
            _ => return Ok(ToolsBlock::NotSeparable),
        }
    } else {
        (prompt.to_string(), without, prompt.len())
    };
    let ranges = inserted(&without, &with);
    let fits = |r: &Range<usize>| r.end <= agrees && carvable(spans, r);
    if ranges.is_empty() || !ranges.iter().all(fits) {
        return Ok(ToolsBlock::NotSeparable);
    }
    Ok(ToolsBlock::Located(ranges))
}

/// Byte ranges of `with` that are not in `without`: inserted lines, and the differing
/// middle of changed ones.
pub(crate) fn inserted(without: &str, with: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let (mut offset, mut removed, mut added) = (0, String::new(), String::new());
    let mut flush = |offset: usize, removed: &mut String, added: &mut String| {
        if !added.is_empty() {
            let start = common_prefix_len(removed, added);
            let end = added.len() - common_suffix_len(removed, added, start);
            if start < end {
                ranges.push(offset - added.len() + start..offset - added.len() + end);
            }
        }
        removed.clear();
        added.clear();
    };
    for line in diff_lines(without, with) {
        match line {
            DiffLine::Same(text) => {
                flush(offset, &mut removed, &mut added);
                offset += text.len();
            }
            DiffLine::Removed(text) => removed.push_str(text),
            DiffLine::Added(text) => {
                added.push_str(text);
                offset += text.len();
            }
        }
    }
    flush(offset, &mut removed, &mut added);
    ranges
}

/// Renders the conversation (or with `prefix` its first messages) without tools;
/// templates that fail on `tools=None` get an empty list. `None` when neither renders.
fn render_without(
    template: &CompiledTemplate,
    conversation: &Conversation,
    shared: &Shared,
    prefix: Option<usize>,
    cancel: &CancelToken,
) -> Result<Option<String>, InspectError> {
    if cancel.is_cancelled() {
        return Err(InspectError::Cancelled(Cancelled));
    }
    // The settings are copied, the messages are the shared converted ones (copying
    // 10,000 messages took milliseconds). `render_prepared` renders a continued final
    // message from the conversation's own messages, so only that case copies them.
    let continued = prefix.is_none() && conversation.continue_final_message.field().is_some();
    let mut bare = if continued {
        conversation.clone()
    } else {
        conversation.settings_only()
    };
    for tools in [None, Some(Vec::new())] {
        bare.tools = tools;
        let result = match prefix {
            Some(count) => template.render_prepared_prefix(&bare, &shared.prepared, count, cancel),
            None => template.render_prepared(&bare, &shared.prepared, cancel),
        };
        match result {
            Ok(text) => return Ok(Some(text)),
            Err(err) if err.kind == RenderErrorKind::Cancelled => {
                return Err(InspectError::Cancelled(Cancelled))
            }
            Err(_) => {}
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::prefixes::with_tools_both_endings;
    use chatplate_render::Limits;
    use serde_json::json;

    /// Renders without tools from the shared converted messages and a copy of the
    /// settings are the renders of a copy of the conversation without tools.
    #[test]
    fn renders_without_tools_equal_renders_of_a_copy() {
        let template = CompiledTemplate::compile(
            "{% if tools %}T{{ tools | length }}|{% endif %}{% for m in messages %}<{{ m.role }}>{{ m.content }}|{% endfor %}\
             {% if add_generation_prompt %}<assistant>{% endif %}",
            Limits::default(),
        )
        .unwrap();
        let cancel = CancelToken::new();
        for conversation in with_tools_both_endings(vec![
            json!({"role": "user", "content": "a"}),
            json!({"role": "assistant", "content": "b"}),
        ]) {
            let continuing = conversation.continue_final_message.field().is_some();
            let prompt = template.render(&conversation).unwrap();
            let shared = Shared::new(&conversation, &prompt);
            let mut copy = conversation.clone();
            copy.tools = None;
            for prefix in [Some(1), Some(2), None] {
                let wanted = match prefix {
                    Some(count) => template.render_prefix(&copy, count, &cancel),
                    None => template.render_cancellable(&copy, &cancel),
                }
                .unwrap();
                let got = render_without(&template, &conversation, &shared, prefix, &cancel)
                    .unwrap()
                    .expect("renders");
                assert_eq!(got, wanted, "prefix {prefix:?}, continuing {continuing}");
                assert!(!got.contains('T'), "{got}");
            }
        }
    }

    #[test]
    fn finds_inserted_lines_and_changed_middles() {
        let without = "sys\nDate: 1\n\nuser: hi\n";
        let with = "sys\nEnv: py\nDate: 1\n\nuser: TOOLS hi\n";
        let ranges = inserted(without, with);
        let texts: Vec<&str> = ranges.iter().map(|r| &with[r.clone()]).collect();
        assert_eq!(texts, vec!["Env: py\n", "TOOLS "]);
    }
}
