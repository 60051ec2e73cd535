//! The cached render: the compiled template and the prompt it produced for the current
//! session. Only [`Preview::refresh`] calls the engine; the view reads the cache.
//!
//! Which part of the prompt belongs to which message is a heuristic: each message's
//! content (or, without content, its first tool call's name) is searched for in the
//! prompt, in order, starting where the previous message's match ended. Templates copy
//! content verbatim, so this finds the right place unless a template rewrites it (then
//! the message simply gets no highlight).

use std::ops::Range;

use serde_json::Value as Json;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::render::{
    prepare_source, render_with_deadline, CompiledTemplate, Limits, RenderError, RenderErrorKind,
};
use crate::session::{Message, Session};

/// The app's render bounds: the engine's, with a 2 s deadline (a keystroke must never
/// freeze the terminal, whatever the template does).
pub fn app_default_limits() -> Limits {
    Limits {
        deadline: Duration::from_secs(2),
        ..Limits::default()
    }
}

static APP_LIMITS: OnceLock<Limits> = OnceLock::new();

/// Sets the app's render bounds (the command line's `--fuel`, `--deadline`, ...), once,
/// before the first render.
pub fn set_app_limits(limits: Limits) {
    let _ = APP_LIMITS.set(limits);
}

fn app_limits() -> Limits {
    APP_LIMITS.get().copied().unwrap_or_else(app_default_limits)
}

/// The compiled template and the last render.
#[derive(Debug)]
pub struct Preview {
    compiled: Result<Arc<CompiledTemplate>, RenderError>,
    /// Set when a render ran past the deadline: its worker may still be busy, so this
    /// template is not rendered again until it is reloaded.
    stalled: Option<RenderError>,
    /// The template source as compiled; error positions refer to it.
    pub source: String,
    /// The prompt, or why there is none.
    pub output: Result<String, RenderError>,
    /// Byte offset of the start of each prompt line.
    pub line_starts: Vec<usize>,
    /// Where each message shows up in the prompt, when it could be found.
    pub spans: Vec<Option<Range<usize>>>,
}

impl Preview {
    /// Compiles `source`; call [`Preview::refresh`] to render.
    pub fn new(source: &str) -> Self {
        let compiled = CompiledTemplate::compile(source, app_limits()).map(Arc::new);
        let prepared = match &compiled {
            Ok(template) => template.prepared_source().to_string(),
            Err(_) => prepare_source(source),
        };
        Preview {
            compiled,
            stalled: None,
            source: prepared,
            output: Ok(String::new()),
            line_starts: vec![0],
            spans: Vec::new(),
        }
    }

    /// Re-renders `session` with the cached template.
    pub fn refresh(&mut self, session: &Session) {
        self.output = match (&self.compiled, session.conversation()) {
            (Err(err), _) => Err(err.clone()),
            _ if self.stalled.is_some() => Err(self
                .stalled
                .clone()
                .unwrap_or_else(|| RenderError::input(""))),
            (Ok(_), Err(err)) => Err(RenderError::input(err.to_string())),
            (Ok(template), Ok(conversation)) => {
                let deadline = template.limits().deadline;
                let result = render_with_deadline(template, conversation, deadline);
                if matches!(&result, Err(err) if err.kind == RenderErrorKind::Limit && err.position.is_none())
                {
                    self.stalled = result.clone().err();
                }
                result
            }
        };
        let text = self.output.as_deref().unwrap_or_default();
        self.line_starts = line_starts(text);
        self.spans = locate_messages(text, &session.messages);
    }

    /// The render error, if the last render failed.
    pub fn error(&self) -> Option<&RenderError> {
        self.output.as_ref().err()
    }

    /// The prompt text (empty after an error).
    pub fn text(&self) -> &str {
        self.output.as_deref().unwrap_or_default()
    }

    /// Number of prompt lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Prompt line `index` without its newline.
    pub fn line(&self, index: usize) -> &str {
        let text = self.text();
        let start = self.line_starts.get(index).copied().unwrap_or(text.len());
        let end = self
            .line_starts
            .get(index + 1)
            .copied()
            .unwrap_or(text.len());
        let line = text.get(start..end.max(start)).unwrap_or_default();
        line.strip_suffix('\n').unwrap_or(line)
    }

    /// The line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    if text.ends_with('\n') {
        starts.pop();
    }
    starts
}

/// See the module docs for the heuristic.
fn locate_messages(prompt: &str, messages: &[Message]) -> Vec<Option<Range<usize>>> {
    let mut from = 0;
    messages
        .iter()
        .map(|msg| {
            let needle = anchor(msg)?;
            let start = from + prompt.get(from..)?.find(needle.as_str())?;
            from = start + needle.len();
            Some(start..from)
        })
        .collect()
}

fn anchor(msg: &Message) -> Option<String> {
    let content = match msg.0.get("content") {
        Some(Json::String(text)) => text.trim().to_string(),
        Some(Json::Array(parts)) => parts
            .iter()
            .find_map(|p| p.get("text").and_then(Json::as_str))
            .unwrap_or_default()
            .trim()
            .to_string(),
        _ => String::new(),
    };
    if !content.is_empty() {
        return Some(content);
    }
    super::fields::tool_calls(msg)
        .first()
        .and_then(|call| call.pointer("/function/name").or_else(|| call.get("name")))
        .and_then(Json::as_str)
        .filter(|name| !name.is_empty())
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_offsets() {
        let starts = line_starts("a\nbc\n");
        assert_eq!(starts, vec![0, 2]);
        assert_eq!(line_starts(""), vec![0]);
    }

    #[test]
    fn messages_are_found_in_order() {
        let messages = vec![Message::new("user", "hi"), Message::new("assistant", "hi")];
        let spans = locate_messages("<u>hi</u><a>hi</a>", &messages);
        assert_eq!(spans, vec![Some(3..5), Some(12..14)]);
    }
}
