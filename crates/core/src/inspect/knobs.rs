//! Knobs: the template's own switches (`enable_thinking`, `preserve_thinking`,
//! `auto_drop_analysis`, ...), found from the variables it reads, with what flipping
//! each one does to a conversation's prompt.
//!
//! Nothing here knows a variable by its name: every family names its switches its own
//! way, so the list is the template's variables (`variables`), a knob is boolean when
//! the template says so (a boolean default or value) or when `true` and `false` both
//! render and differ, and what it means is observed. A knob that changes how many of
//! the conversation's reasoning texts the prompt shows is a reasoning-retention knob,
//! whatever it is called.

use std::sync::Arc;

use serde_json::{json, Map, Value as Json};

use chatplate_render::{CancelToken, CompiledTemplate, Conversation};

use super::text::{common_prefix_len, common_suffix_len, floor_boundary};
use super::variables::{template_variables, VariableDefault};
use super::Cancelled;

/// At most this many variables are probed (each costs up to three renders); the rest
/// are listed with their value only.
pub const MAX_PROBED: usize = 32;

/// One of the template's variables, with its value and what flipping it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Knob {
    /// Its name.
    pub name: String,
    /// The default the template writes for it.
    pub default: VariableDefault,
    /// The value the conversation sets, if any.
    pub value: Option<Json>,
    /// A boolean knob: its value or default is a boolean, or `true` and `false` both
    /// render and differ.
    pub boolean: bool,
    /// What the prompt is now, as a boolean: the value set, else what the template
    /// renders the same as when it is unset (`None`: neither, or not found).
    pub behaves_as: Option<bool>,
    /// What setting it to the other boolean does to the prompt (boolean knobs only).
    pub flip: Option<Flip>,
}

/// What flipping a boolean knob does to the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flip {
    /// The value it is flipped to.
    pub to: bool,
    /// The flipped render, or why it failed.
    pub change: Result<Change, String>,
}

/// How one prompt differs from another: one changed stretch between a common prefix
/// and a common suffix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Where the prompts part (bytes).
    pub at: usize,
    /// Bytes of the prompt now that the flipped one lacks.
    pub removed: usize,
    /// Bytes of the flipped prompt the one now lacks.
    pub added: usize,
    /// The removed stretch, cut after [`STRETCH_BYTES`] (`…` in [`Change::shown`]).
    pub before: String,
    /// The added stretch, cut the same way.
    pub after: String,
    /// How many of the conversation's reasoning texts each prompt shows (now,
    /// flipped).
    pub reasoning_shown: (usize, usize),
}

/// At most this many bytes of each changed stretch are kept.
pub const STRETCH_BYTES: usize = 60;

impl Change {
    /// `"before" → "after"`, JSON-quoted so whitespace shows, `…` where cut.
    pub fn shown(&self) -> String {
        let quote = |text: &str, whole: usize| {
            let quoted = serde_json::to_string(text).unwrap_or_default();
            if text.len() < whole {
                format!("{quoted}…")
            } else {
                quoted
            }
        };
        format!(
            "{} → {}",
            quote(&self.before, self.removed),
            quote(&self.after, self.added)
        )
    }

    /// Whether the prompt did not change.
    pub fn is_none(&self) -> bool {
        self.removed == 0 && self.added == 0
    }

    /// Whether flipping changes how much of the conversation's reasoning shows.
    pub fn retains_reasoning(&self) -> bool {
        self.reasoning_shown.0 != self.reasoning_shown.1
    }

    /// `+A −R bytes from byte N`, or `no change`.
    pub fn summary(&self) -> String {
        if self.is_none() {
            return "no change".into();
        }
        format!(
            "+{} −{} bytes at byte {}",
            self.added, self.removed, self.at
        )
    }
}

impl Knob {
    /// The value a flip sets: the other boolean (true when what it behaves as is not
    /// known).
    pub fn flipped(&self) -> Option<bool> {
        self.boolean.then(|| !self.behaves_as.unwrap_or(false))
    }

    /// The value shown: the one set (as JSON), else `unset`, with what it behaves as.
    pub fn shown_value(&self) -> String {
        match (&self.value, self.behaves_as) {
            (Some(value), _) => value.to_string(),
            (None, Some(value)) => format!("unset ({value})"),
            (None, None) => "unset".into(),
        }
    }

    /// Its JSON form for reports.
    pub fn to_json(&self) -> Json {
        let default = match &self.default {
            VariableDefault::Value(value) => json!({"value": value}),
            VariableDefault::Expression(text) => json!({"expression": text}),
            VariableDefault::Undefined => Json::Null,
        };
        let flip = self.flip.as_ref().map(|flip| match &flip.change {
            Ok(change) => json!({
                "to": flip.to,
                "at": change.at,
                "added": change.added,
                "removed": change.removed,
                "before": change.before,
                "after": change.after,
                "reasoning_shown": [change.reasoning_shown.0, change.reasoning_shown.1],
                "retains_reasoning": change.retains_reasoning(),
            }),
            Err(error) => json!({"to": flip.to, "error": error}),
        });
        json!({
            "name": self.name,
            "default": default,
            "value": self.value,
            "boolean": self.boolean,
            "behaves_as": self.behaves_as,
            "flip": flip,
        })
    }
}

/// The conversation `chatplate knobs` flips knobs on when given no fixture: a system
/// message and three user turns, the two replies with reasoning, ending with the
/// generation prompt (so reasoning kept or dropped from history shows).
pub fn sample_conversation() -> Conversation {
    let message = |role: &str, content: &str| json!({"role": role, "content": content});
    let reply = |reasoning: &str, content: &str| json!({"role": "assistant", "content": content, "reasoning_content": reasoning});
    Conversation::new(vec![
        message("system", "You are a helpful assistant."),
        message("user", "What is 2 + 2?"),
        reply("The user asks for 2 + 2, which is 4.", "2 + 2 = 4."),
        message("user", "And 3 + 3?"),
        reply("3 + 3 is 6.", "3 + 3 = 6."),
        message("user", "Thanks. And 4 + 4?"),
    ])
    .with_generation_prompt(true)
}

/// The template's knobs on `conversation`, in name order: every variable it reads
/// besides the standard ones, the first [`MAX_PROBED`] probed.
pub fn knobs(
    template: &CompiledTemplate,
    conversation: &Conversation,
    cancel: &CancelToken,
) -> Result<Vec<Knob>, Cancelled> {
    let variables = template_variables(template);
    let render = |variables: Map<String, Json>| -> Result<Result<String, String>, Cancelled> {
        let mut copy = conversation.clone();
        copy.variables = variables;
        let rendered = template.render_cancellable(copy, cancel);
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        Ok(rendered.map_err(|e| e.message))
    };
    let now = Arc::new(render(conversation.variables.clone())?);
    let reasoning = reasoning_texts(conversation);
    let mut found = Vec::with_capacity(variables.len());
    for (index, variable) in variables.into_iter().enumerate() {
        let value = conversation.variables.get(&variable.name).cloned();
        let mut knob = Knob {
            boolean: matches!(value, Some(Json::Bool(_)))
                || matches!(variable.default, VariableDefault::Value(Json::Bool(_))),
            behaves_as: value.as_ref().and_then(Json::as_bool),
            name: variable.name,
            default: variable.default,
            value,
            flip: None,
        };
        if index < MAX_PROBED {
            probe(&mut knob, conversation, &now, &reasoning, &render)?;
        }
        found.push(knob);
    }
    Ok(found)
}

type Rendered = Result<String, String>;

/// Renders the knob true, false and unset: whether it is boolean, what it behaves as,
/// and what flipping it changes.
fn probe(
    knob: &mut Knob,
    conversation: &Conversation,
    now: &Rendered,
    reasoning: &[String],
    render: &dyn Fn(Map<String, Json>) -> Result<Rendered, Cancelled>,
) -> Result<(), Cancelled> {
    let with = |value: Option<Json>| {
        let mut variables = conversation.variables.clone();
        match value {
            Some(value) => variables.insert(knob.name.clone(), value),
            None => variables.remove(&knob.name),
        };
        render(variables)
    };
    let on = with(Some(json!(true)))?;
    let off = with(Some(json!(false)))?;
    let both = matches!((&on, &off), (Ok(t), Ok(f)) if t != f);
    let undefined = matches!(knob.default, VariableDefault::Undefined);
    knob.boolean |= both && undefined && knob.value.is_none();
    if !knob.boolean {
        return Ok(());
    }
    if knob.behaves_as.is_none() {
        let unset = match knob.value {
            Some(_) => with(None)?,
            None => now.clone(),
        };
        knob.behaves_as = match (&unset, &on, &off) {
            (Ok(u), Ok(t), _) if u == t && both => Some(true),
            (Ok(u), _, Ok(f)) if u == f && both => Some(false),
            _ => match knob.default {
                VariableDefault::Value(Json::Bool(value)) => Some(value),
                _ => None,
            },
        };
    }
    let to = knob.flipped().unwrap_or(true);
    let flipped = if to { on } else { off };
    let change = match (now, flipped) {
        (Ok(now), Ok(flipped)) => Ok(change(now, &flipped, reasoning)),
        (Err(err), _) => Err(format!("the conversation does not render: {err}")),
        (_, Err(err)) => Err(err),
    };
    knob.flip = Some(Flip { to, change });
    Ok(())
}

/// How `flipped` differs from `now`.
pub(crate) fn change(now: &str, flipped: &str, reasoning: &[String]) -> Change {
    let at = common_prefix_len(now, flipped);
    let suffix = common_suffix_len(now, flipped, at);
    let shown = |text: &str| {
        reasoning
            .iter()
            .filter(|r| text.contains(r.as_str()))
            .count()
    };
    let stretch = |text: &str| {
        let end = floor_boundary(text, (at + STRETCH_BYTES).min(text.len() - suffix));
        text[at..end].to_string()
    };
    Change {
        at,
        removed: now.len() - at - suffix,
        added: flipped.len() - at - suffix,
        before: stretch(now),
        after: stretch(flipped),
        reasoning_shown: (shown(now), shown(flipped)),
    }
}

/// The conversation's reasoning texts (transformers' aliases: `reasoning_content`,
/// `reasoning`, `thinking`), non-empty, trimmed.
fn reasoning_texts(conversation: &Conversation) -> Vec<String> {
    let fields = ["reasoning_content", "reasoning", "thinking"];
    let mut texts: Vec<String> = conversation
        .messages
        .iter()
        .filter_map(|m| fields.iter().find_map(|f| m.get(*f)?.as_str()))
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
        .collect();
    texts.dedup();
    texts
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_render::Limits;

    fn compile(source: &str) -> CompiledTemplate {
        CompiledTemplate::compile(source, Limits::default()).unwrap()
    }

    #[test]
    fn knobs_are_the_template_variables_with_what_flipping_does() {
        // A retention knob under a name no list knows, a thinking switch that is on
        // unless set false, and a string setting.
        let template = compile(
            "{% for m in messages %}{{ m.role }}:{% if m.reasoning_content and \
             (keep_old_thoughts or loop.last) %}<r>{{ m.reasoning_content }}</r>{% endif %}\
             {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant:\
             {% if think is defined and think is false %}<r></r>{% endif %}{% endif %}\
             {{ persona | default('plain') }}",
        );
        let knobs = knobs(&template, &sample_conversation(), &CancelToken::new()).unwrap();
        let names: Vec<&str> = knobs.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["keep_old_thoughts", "persona", "think"]);
        let keep = &knobs[0];
        assert!(keep.boolean);
        assert_eq!(keep.behaves_as, Some(false));
        let change = keep.flip.as_ref().unwrap().change.as_ref().unwrap();
        assert!(keep.flip.as_ref().unwrap().to);
        assert_eq!(change.reasoning_shown, (0, 2));
        assert!(change.retains_reasoning());
        // One stretch from the first reasoning shown to the end of the second.
        let added = "<r>The user asks for 2 + 2, which is 4.</r><r>3 + 3 is 6.</r>".len();
        assert_eq!(change.added - change.removed, added);
        assert!(change.after.starts_with("<r>The user asks"));
        assert!(change.shown().ends_with('…'), "{}", change.shown());
        let persona = &knobs[1];
        assert!(!persona.boolean && persona.flip.is_none());
        assert_eq!(persona.default, VariableDefault::Value(json!("plain")));
        let think = &knobs[2];
        assert_eq!(think.behaves_as, Some(true));
        let change = think.flip.as_ref().unwrap().change.as_ref().unwrap();
        assert_eq!((change.added, change.removed), ("<r></r>".len(), 0));
        assert_eq!(change.after, "<r></r>");
        assert_eq!(change.shown(), "\"\" → \"<r></r>\"");
        assert!(!change.retains_reasoning());
    }

    #[test]
    fn a_value_set_in_the_conversation_is_what_it_behaves_as() {
        let template = compile("{% if flag %}on{% else %}off{% endif %}");
        let mut conversation = Conversation::new(vec![json!({"role": "user", "content": "x"})]);
        conversation.variables.insert("flag".into(), json!(true));
        let knobs = knobs(&template, &conversation, &CancelToken::new()).unwrap();
        assert_eq!(knobs[0].behaves_as, Some(true));
        let flip = knobs[0].flip.as_ref().unwrap();
        assert!(!flip.to);
        assert_eq!(
            flip.change.as_ref().unwrap().summary(),
            "+2 −1 bytes at byte 1"
        );
    }
}
