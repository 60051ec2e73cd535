//! Silently dropped fields: every value the user set is changed in turn (see
//! `perturb`) and the conversation re-rendered; a value whose changes leave the prompt
//! byte-identical is not used by the template.
//!
//! Values are: each message's content (each part of a list), reasoning, `name`,
//! `tool_call_id` and any other key; each tool call's `id`, `name` and `arguments`;
//! each tool definition; each document; each extra variable. One render (two for an
//! unused value) per value, spread over all cores.
//!
//! [`check_values`] checks only the values asked for, on the calling thread, changing
//! one message (not a copy of the whole conversation) per check: the app's bounded
//! probe of the selected message and the settings in a long session.

use std::borrow::Cow;
use std::fmt;

use serde_json::Value as Json;

use super::attribution::render_full;
use super::perturb::{perturb, Change};
use super::{Cancelled, InspectError};
use chatplate_render::{
    CancelToken, CompiledTemplate, Conversation, PreparedMessages, RenderError, RenderErrorKind,
};

/// One step of a path inside a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    /// An object key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// Where a value sits in the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldRef {
    /// A field of message `index`, e.g. `["tool_calls", 0, "id"]`.
    Message {
        /// The message.
        index: usize,
        /// The path inside it.
        path: Vec<PathStep>,
    },
    /// Tool definition `i`.
    Tool(usize),
    /// Document `i`.
    Document(usize),
    /// An extra template variable.
    Variable(String),
}

impl fmt::Display for FieldRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldRef::Message { index, path } => {
                write!(f, "messages[{index}]")?;
                for step in path {
                    match step {
                        PathStep::Key(key) => write!(f, ".{key}")?,
                        PathStep::Index(i) => write!(f, "[{i}]")?,
                    }
                }
                Ok(())
            }
            FieldRef::Tool(i) => write!(f, "tools[{i}]"),
            FieldRef::Document(i) => write!(f, "documents[{i}]"),
            FieldRef::Variable(name) => write!(f, "variables.{name}"),
        }
    }
}

/// Whether the prompt depends on a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Changing it changes the prompt.
    Used,
    /// The prompt stays byte-identical: not used by this template.
    Unused,
    /// Changing it makes the template fail (it checks the value).
    BreaksRender(RenderError),
}

/// One checked value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldCheck {
    /// The value.
    pub field: FieldRef,
    /// What changing it did.
    pub verdict: Verdict,
}

/// Every value of a conversation, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedFields {
    /// In conversation order: messages, tools, documents, variables.
    pub checks: Vec<FieldCheck>,
}

impl DroppedFields {
    /// The values the template does not use.
    pub fn unused(&self) -> Vec<&FieldRef> {
        self.checks
            .iter()
            .filter(|c| c.verdict == Verdict::Unused)
            .map(|c| &c.field)
            .collect()
    }

    /// The unused fields of message `index` (for "not used" marks in an editor).
    pub fn unused_in_message(&self, index: usize) -> Vec<&[PathStep]> {
        self.checks
            .iter()
            .filter(|c| c.verdict == Verdict::Unused)
            .filter_map(|c| match &c.field {
                FieldRef::Message { index: i, path } if *i == index => Some(path.as_slice()),
                _ => None,
            })
            .collect()
    }
}

/// Checks every value of `conversation`.
pub fn dropped_fields(
    template: &CompiledTemplate,
    conversation: &Conversation,
    cancel: &CancelToken,
) -> Result<DroppedFields, InspectError> {
    let prompt = render_full(template, conversation, cancel)?;
    let fields = fields_of(conversation);
    let prepared = &PreparedMessages::new(conversation);
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, fields.len().max(1));
    let verdicts = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                let (fields, prompt) = (&fields, &prompt);
                let base = Base {
                    template,
                    conversation,
                    prepared,
                    prompt,
                    cancel,
                };
                scope.spawn(move || {
                    fields
                        .iter()
                        .enumerate()
                        .skip(worker)
                        .step_by(workers)
                        .map(|(i, field)| Ok((i, base.verdict(field)?)))
                        .collect::<Result<Vec<_>, Cancelled>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(Cancelled)))
            .collect::<Vec<_>>()
    });
    let mut indexed = Vec::with_capacity(fields.len());
    for part in verdicts {
        indexed.extend(part?);
    }
    indexed.sort_by_key(|(i, _)| *i);
    let checks = fields
        .into_iter()
        .zip(indexed)
        .map(|(field, (_, verdict))| FieldCheck { field, verdict })
        .collect();
    Ok(DroppedFields { checks })
}

/// Checks only `fields` (see [`fields_of`], [`message_fields`], [`settings_fields`]),
/// one after the other on this thread. `prepared` must hold `conversation`'s messages.
/// Each check copies only what it changes: one message, or the settings. `rendered`:
/// the conversation's prompt when the caller has it (else it is rendered first).
pub fn check_values(
    template: &CompiledTemplate,
    conversation: &Conversation,
    prepared: &PreparedMessages,
    rendered: Option<&str>,
    fields: Vec<FieldRef>,
    cancel: &CancelToken,
) -> Result<DroppedFields, InspectError> {
    // Borrowed when given: the app's probe checks one value per call, against a prompt
    // that may be megabytes long.
    let prompt: Cow<str> = match rendered {
        Some(prompt) => Cow::Borrowed(prompt),
        None => Cow::Owned(
            template
                .render_prepared(conversation, prepared, cancel)
                .map_err(render_error)?,
        ),
    };
    let base = Base {
        template,
        conversation,
        prepared,
        prompt: &prompt,
        cancel,
    };
    let mut checks = Vec::with_capacity(fields.len());
    for field in fields {
        let verdict = base.verdict(&field)?;
        checks.push(FieldCheck { field, verdict });
    }
    Ok(DroppedFields { checks })
}

fn render_error(err: RenderError) -> InspectError {
    match err.kind {
        RenderErrorKind::Cancelled => InspectError::Cancelled(Cancelled),
        _ => InspectError::Render(err),
    }
}

/// The values of message `index` (none when there is no such message).
pub fn message_fields(conversation: &Conversation, index: usize) -> Vec<FieldRef> {
    let Some(message) = conversation.messages.get(index) else {
        return Vec::new();
    };
    (message_paths(message).into_iter())
        .map(|path| FieldRef::Message { index, path })
        .collect()
}

/// Each tool definition, document and (non-null) extra variable.
pub fn settings_fields(conversation: &Conversation) -> Vec<FieldRef> {
    let mut fields = Vec::new();
    let count = |list: &Option<Vec<Json>>| list.as_ref().map_or(0, Vec::len);
    fields.extend((0..count(&conversation.tools)).map(FieldRef::Tool));
    fields.extend((0..count(&conversation.documents)).map(FieldRef::Document));
    fields.extend(
        conversation
            .variables
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(name, _)| FieldRef::Variable(name.clone())),
    );
    fields
}

/// What each changed copy is rendered against.
struct Base<'a> {
    template: &'a CompiledTemplate,
    conversation: &'a Conversation,
    prepared: &'a PreparedMessages,
    prompt: &'a str,
    cancel: &'a CancelToken,
}

impl Base<'_> {
    fn verdict(&self, field: &FieldRef) -> Result<Verdict, Cancelled> {
        for change in [Change::Rotate, Change::Append] {
            let Some(rendered) = self.render_changed(field, change) else {
                return Ok(Verdict::Unused);
            };
            match rendered {
                Ok(text) if text != self.prompt => return Ok(Verdict::Used),
                Ok(_) => {}
                Err(err) if err.kind == RenderErrorKind::Cancelled => return Err(Cancelled),
                Err(err) => return Ok(Verdict::BreaksRender(err)),
            }
        }
        Ok(Verdict::Unused)
    }

    /// Renders the conversation with `field` changed; `None` when there is no such
    /// value. A message field copies that message only; a setting copies the settings
    /// without the messages (the prepared values carry them). A conversation that
    /// continues its final message by a field renders from its own messages, so it is
    /// copied whole.
    fn render_changed(
        &self,
        field: &FieldRef,
        change: Change,
    ) -> Option<Result<String, RenderError>> {
        if self.conversation.continue_final_message.field().is_some() {
            let changed = with_changed(self.conversation, field, change)?;
            return Some(self.render(&changed, field));
        }
        let settings = || {
            Conversation::new(Vec::new())
                .with_tools(self.conversation.tools.clone())
                .with_documents(self.conversation.documents.clone())
                .with_generation_prompt(self.conversation.add_generation_prompt)
                .with_continue_final(self.conversation.continue_final_message.clone())
                .with_variables(self.conversation.variables.clone())
                .with_clock(self.conversation.clock)
        };
        if let FieldRef::Message { index, path } = field {
            let mut message = self.conversation.messages.get(*index)?.clone();
            let slot = path
                .iter()
                .try_fold(&mut message, |value, step| match step {
                    PathStep::Key(key) => value.get_mut(key.as_str()),
                    PathStep::Index(i) => value.get_mut(*i),
                })?;
            *slot = perturb(slot, change);
            let prepared = self.prepared.replaced(*index, &message);
            let settings = settings();
            Some(
                self.template
                    .render_prepared(&settings, &prepared, self.cancel),
            )
        } else {
            let mut changed = settings();
            let slot = setting_slot(&mut changed, field)?;
            *slot = perturb(slot, change);
            Some(
                self.template
                    .render_prepared(&changed, self.prepared, self.cancel),
            )
        }
    }

    /// Renders `changed`, converting only the message that changed.
    fn render(&self, changed: &Conversation, field: &FieldRef) -> Result<String, RenderError> {
        match field {
            FieldRef::Message { index, .. } => {
                let prepared = self.prepared.replaced(*index, &changed.messages[*index]);
                self.template
                    .render_prepared(changed, &prepared, self.cancel)
            }
            _ => self
                .template
                .render_prepared(changed, self.prepared, self.cancel),
        }
    }
}

/// Every value the user set, in order.
pub(crate) fn fields_of(conversation: &Conversation) -> Vec<FieldRef> {
    let mut fields: Vec<FieldRef> = (0..conversation.messages.len())
        .flat_map(|index| message_fields(conversation, index))
        .collect();
    fields.extend(settings_fields(conversation));
    fields
}

/// Paths of a message's values: each content part, each tool call's fields, each other
/// non-null key except `role`.
fn message_paths(message: &Json) -> Vec<Vec<PathStep>> {
    let Some(fields) = message.as_object() else {
        return Vec::new();
    };
    let key = |k: &str| PathStep::Key(k.to_string());
    let mut paths = Vec::new();
    for (name, value) in fields.iter().filter(|(n, v)| *n != "role" && !v.is_null()) {
        match (name.as_str(), value) {
            ("content", Json::Array(parts)) => {
                paths.extend((0..parts.len()).map(|i| vec![key(name), PathStep::Index(i)]));
            }
            ("tool_calls", Json::Array(calls)) => {
                for (i, call) in calls.iter().enumerate() {
                    let base = vec![key(name), PathStep::Index(i)];
                    paths.extend(call_paths(call).into_iter().map(|mut tail| {
                        let mut path = base.clone();
                        path.append(&mut tail);
                        path
                    }));
                }
            }
            _ => paths.push(vec![key(name)]),
        }
    }
    paths
}

/// `id`, `function.name`, `function.arguments` (and any other key) of a tool call.
fn call_paths(call: &Json) -> Vec<Vec<PathStep>> {
    let Some(fields) = call.as_object() else {
        return vec![Vec::new()];
    };
    let key = |k: &str| PathStep::Key(k.to_string());
    let mut paths = Vec::new();
    for (name, value) in fields.iter().filter(|(n, v)| *n != "type" && !v.is_null()) {
        match (name.as_str(), value) {
            ("function", Json::Object(function)) => paths.extend(
                function
                    .keys()
                    .map(|inner| vec![key("function"), key(inner)]),
            ),
            _ => paths.push(vec![key(name)]),
        }
    }
    paths
}

/// The conversation with the value at `field` changed; `None` when there is none.
fn with_changed(
    conversation: &Conversation,
    field: &FieldRef,
    change: Change,
) -> Option<Conversation> {
    let mut changed = conversation.clone();
    let slot = match field {
        FieldRef::Message { index, path } => path.iter().try_fold(
            changed.messages.get_mut(*index)?,
            |value, step| match step {
                PathStep::Key(key) => value.get_mut(key.as_str()),
                PathStep::Index(i) => value.get_mut(*i),
            },
        )?,
        _ => setting_slot(&mut changed, field)?,
    };
    *slot = perturb(slot, change);
    Some(changed)
}

/// The tool, document or variable `field` names.
fn setting_slot<'c>(conversation: &'c mut Conversation, field: &FieldRef) -> Option<&'c mut Json> {
    match field {
        FieldRef::Tool(i) => conversation.tools.as_mut()?.get_mut(*i),
        FieldRef::Document(i) => conversation.documents.as_mut()?.get_mut(*i),
        FieldRef::Variable(name) => conversation.variables.get_mut(name),
        FieldRef::Message { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_render::Limits;
    use serde_json::json;

    #[test]
    fn checking_some_values_agrees_with_checking_all() {
        let template = CompiledTemplate::compile(
            "{% for m in messages %}<{{ m.role }}>{{ m.content }}\
             {% for c in m.tool_calls or [] %}{{ c.function.name }}{% endfor %}{% endfor %}\
             {{ flag }}",
            Limits::default(),
        )
        .unwrap();
        let mut variables = serde_json::Map::new();
        variables.insert("flag".into(), json!("on"));
        variables.insert("ignored".into(), json!("x"));
        let conversation = Conversation::new(vec![
            json!({"role": "user", "content": "hi", "name": "bob"}),
            json!({"role": "assistant", "content": "ok", "tool_calls": [
                    {"id": "c1", "function": {"name": "f", "arguments": {"a": 1}}}]}),
        ])
        .with_tools(Some(vec![json!({"name": "f"})]))
        .with_variables(variables);
        let cancel = CancelToken::new();
        let all = dropped_fields(&template, &conversation, &cancel).unwrap();
        let mut fields = message_fields(&conversation, 1);
        fields.extend(settings_fields(&conversation));
        let prepared = PreparedMessages::new(&conversation);
        let some =
            check_values(&template, &conversation, &prepared, None, fields, &cancel).unwrap();
        let expected: Vec<_> = (all.checks.iter())
            .filter(|c| !matches!(c.field, FieldRef::Message { index: 0, .. }))
            .cloned()
            .collect();
        assert_eq!(some.checks, expected);
        let unused: Vec<String> = some.unused().iter().map(ToString::to_string).collect();
        assert_eq!(
            unused,
            [
                "messages[1].tool_calls[0].id",
                "messages[1].tool_calls[0].function.arguments",
                "tools[0]",
                "variables.ignored"
            ]
        );
    }

    /// `{}` arguments printed by the template are used (no rotation changes them).
    #[test]
    fn empty_arguments_the_template_prints_are_used() {
        let printed = "{% for m in messages %}{% for c in m.tool_calls or [] %}\
                       {{ c.function.arguments|tojson }}{% endfor %}{% endfor %}";
        let ignored = "{% for m in messages %}{{ m.role }}{% endfor %}";
        let conversation = Conversation::new(vec![json!({"role": "assistant", "tool_calls": [
            {"id": "c1", "function": {"name": "f", "arguments": {}}}]})]);
        let cancel = CancelToken::new();
        let unused = |source: &str| {
            let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
            let found = dropped_fields(&template, &conversation, &cancel).unwrap();
            found
                .unused()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        let arguments = "messages[0].tool_calls[0].function.arguments".to_string();
        assert!(!unused(printed).contains(&arguments));
        assert!(unused(ignored).contains(&arguments));
    }
}
