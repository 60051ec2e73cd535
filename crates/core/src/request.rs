//! OpenAI Chat Completions request bodies as sessions, and sessions back as bodies.
//!
//! A body's `messages`, `tools` and the extras vLLM, SGLang and llama.cpp's server accept
//! (`chat_template_kwargs`, `add_generation_prompt`, `continue_final_message`,
//! `documents`, `chat_template`) map onto the session; every other key (`model`,
//! `temperature`, `stream`, ...) is kept in the session's `request` object, reported, and
//! written back by [`export`], never dropped.

mod body;

use chatplate_render::remedy::{means, Knob};
use serde_json::{Map, Value as Json};

pub use body::{looks_like_request, may_be_request, parse_body, BodyError};

use crate::catalog::hf_cache::{self, ModelId};
use crate::catalog::{model, Origin, TemplateSource, DEFAULT_TEMPLATE};
use crate::session::{ContinueSetting, Message, Session, TemplateRef, FORMAT_VERSION};

/// Keys the template itself gets, which `chat_template_kwargs` cannot override.
const RESERVED_KWARGS: [&str; 4] = ["messages", "tools", "documents", "add_generation_prompt"];

/// A body turned into a session, and what the user should know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The session (no `expected` yet).
    pub session: Session,
    /// Keys kept in `request` without affecting the prompt.
    pub kept: Vec<String>,
    /// Decisions worth telling (which template, string arguments, ...).
    pub notes: Vec<String>,
}

/// How to import.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportOptions {
    /// The template to use; `None` picks the body's `chat_template`, else its `model`
    /// from the local Hugging Face cache, else the bundled default.
    pub template: Option<TemplateRef>,
    /// Parse tool-call `arguments` given as JSON strings into objects, as vLLM does
    /// before rendering (an empty or missing one becomes `{}`).
    pub parse_arguments: bool,
}

/// Why a body could not be imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// Not a JSON object.
    #[error("a request body must be a JSON object")]
    NotObject,
    /// A key with the wrong type.
    #[error("\"{key}\" must be {expected}")]
    Field {
        /// The key.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// A message that is not a valid message.
    #[error("messages[{index}]: {message}")]
    Message {
        /// Its position.
        index: usize,
        /// What is wrong.
        message: String,
    },
}

/// Turns a request body into a session. The body is taken, not copied: a large one's
/// messages move into the session.
pub fn import(body: Json, options: &ImportOptions) -> Result<Imported, RequestError> {
    let Json::Object(mut rest) = body else {
        return Err(RequestError::NotObject);
    };
    let mut notes = Vec::new();
    let messages = messages(
        rest.shift_remove("messages"),
        options.parse_arguments,
        &mut notes,
    )?;
    let tools = list(rest.shift_remove("tools"), "tools")?;
    let documents = list(rest.shift_remove("documents"), "documents")?;
    let add_generation_prompt = flag(
        rest.shift_remove("add_generation_prompt"),
        "add_generation_prompt",
    )?;
    let continuing = flag(
        rest.shift_remove("continue_final_message"),
        "continue_final_message",
    )?;
    let variables = kwargs(&mut rest, &mut notes)?;
    let template = template(&mut rest, options, &mut notes);
    let kept = rest.keys().cloned().collect();
    let session = Session {
        version: FORMAT_VERSION,
        template,
        template_sha256: None,
        bos_token: None,
        eos_token: None,
        add_generation_prompt: add_generation_prompt.unwrap_or(true),
        continue_final_message: ContinueSetting::Flag(continuing.unwrap_or(false)),
        messages,
        tools,
        documents,
        variables,
        clock: None,
        tokenizer: None,
        request: rest,
        expected: None,
        expected_tokens: None,
        assert_prefix_stable: false,
        response_template: None,
        assert_round_trip: false,
        assert_stream_round_trip: false,
        assert_token_round_trip: None,
    };
    Ok(Imported {
        session,
        kept,
        notes,
    })
}

fn messages(
    value: Option<Json>,
    parse_arguments: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Message>, RequestError> {
    let Some(Json::Array(list)) = value else {
        return Err(RequestError::Field {
            key: "messages",
            expected: "a list of messages",
        });
    };
    let mut string_arguments = 0;
    let mut out = Vec::with_capacity(list.len());
    for (index, mut item) in list.into_iter().enumerate() {
        string_arguments += arguments(&mut item, parse_arguments);
        let message = serde_json::from_value(item).map_err(|err| RequestError::Message {
            index,
            message: err.to_string(),
        })?;
        out.push(message);
    }
    if string_arguments > 0 {
        notes.push(if parse_arguments { format!("{string_arguments} tool-call arguments parsed from JSON strings into objects, as vLLM does") } else { format!("{string_arguments} tool-call arguments are JSON strings, kept as written (vLLM parses them into objects before rendering; import with {} to do the same)", means(Knob::ParseArguments)) });
    }
    Ok(out)
}

/// Counts (and with `parse`, converts) the string `arguments` of an assistant message's
/// tool calls, the way vLLM's `_postprocess_messages` does.
fn arguments(message: &mut Json, parse: bool) -> usize {
    if message.get("role").and_then(Json::as_str) != Some("assistant") {
        return 0;
    }
    let Some(Json::Array(calls)) = message.get_mut("tool_calls") else {
        return 0;
    };
    let mut found = 0;
    for function in calls.iter_mut().filter_map(|c| c.get_mut("function")) {
        let Some(arguments) = function.get_mut("arguments") else {
            continue;
        };
        if let Json::String(text) = arguments {
            found += 1;
            if parse {
                *arguments = match text.trim() {
                    "" => Json::Object(Map::new()),
                    t => serde_json::from_str(t).unwrap_or_else(|_| Json::String(text.clone())),
                };
            }
        }
    }
    found
}

fn list(value: Option<Json>, key: &'static str) -> Result<Option<Vec<Json>>, RequestError> {
    match value {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Array(items)) => Ok(Some(items)),
        Some(_) => Err(RequestError::Field {
            key,
            expected: "a list",
        }),
    }
}

fn flag(value: Option<Json>, key: &'static str) -> Result<Option<bool>, RequestError> {
    match value {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Bool(on)) => Ok(Some(on)),
        Some(_) => Err(RequestError::Field {
            key,
            expected: "true or false",
        }),
    }
}

/// `chat_template_kwargs` become template variables; keys the template gets from the
/// request itself stay in `request` (reported) instead.
fn kwargs(
    rest: &mut Map<String, Json>,
    notes: &mut Vec<String>,
) -> Result<Map<String, Json>, RequestError> {
    let mut variables = match rest.shift_remove("chat_template_kwargs") {
        None | Some(Json::Null) => return Ok(Map::new()),
        Some(Json::Object(kwargs)) => kwargs,
        Some(_) => {
            return Err(RequestError::Field {
                key: "chat_template_kwargs",
                expected: "an object",
            })
        }
    };
    let clashing: Map<String, Json> = RESERVED_KWARGS
        .iter()
        .filter_map(|key| Some((key.to_string(), variables.shift_remove(*key)?)))
        .collect();
    if !clashing.is_empty() {
        let names: Vec<&str> = clashing.keys().map(String::as_str).collect();
        notes.push(format!(
            "chat_template_kwargs {} would override the request's own; kept, not used",
            names.join(", ")
        ));
        rest.insert("chat_template_kwargs".into(), Json::Object(clashing));
    }
    Ok(variables)
}

/// The template: the caller's choice, else the body's `chat_template`, else its `model`
/// from the local cache, else the bundled default.
fn template(
    rest: &mut Map<String, Json>,
    options: &ImportOptions,
    notes: &mut Vec<String>,
) -> TemplateRef {
    if let Some(chosen) = &options.template {
        if rest.contains_key("chat_template") {
            notes.push(
                "the body's chat_template is kept but not used: a template was chosen".into(),
            );
        }
        return chosen.clone();
    }
    if let Some(Json::String(source)) = rest.get("chat_template") {
        let source = source.clone();
        rest.shift_remove("chat_template");
        return TemplateRef::Source(source);
    }
    let model = rest.get("model").and_then(Json::as_str).unwrap_or_default();
    if let Some(reference) = cached_model(model) {
        notes.push(format!(
            "template: {model} from the local Hugging Face cache"
        ));
        return reference;
    }
    notes.push(match model {
        "" => format!("no model and no chat_template in the body: using the bundled {DEFAULT_TEMPLATE}"),
        _ => format!("{model} is not a model in the local Hugging Face cache: using the bundled {DEFAULT_TEMPLATE} (choose one with {})", means(Knob::Template)),
    });
    TemplateRef::Bundled(DEFAULT_TEMPLATE.into())
}

fn cached_model(model: &str) -> Option<TemplateRef> {
    let id = ModelId::parse(model)?;
    let snapshot = hf_cache::snapshot(&hf_cache::cache_root(), &id).ok()?;
    if !model::is_model_folder(&snapshot.dir) {
        return None;
    }
    Some(TemplateRef::Model {
        id: snapshot.id,
        revision: Some(snapshot.revision),
        snapshot: Some(snapshot.commit),
        name: None,
    })
}

/// A session as a request body, and what it cannot carry.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The body.
    pub body: Json,
    /// What the body cannot express (a fixed clock, ...).
    pub notes: Vec<String>,
}

/// Writes `session` (rendered with `template`) back as a Chat Completions body for the
/// server under test: the template's source goes in `chat_template` unless it is the
/// model's own, bos/eos the session overrides go in `chat_template_kwargs`.
pub fn export(session: &Session, template: &TemplateSource) -> Exported {
    let mut notes = Vec::new();
    let mut body = Map::new();
    if let Some(model) = export_model(session) {
        body.insert("model".into(), model)
    } else {
        notes.push("no model in this session: add \"model\" for your server".into());
        None
    };
    let messages = session.messages.iter().map(|m| Json::Object(m.0.clone()));
    body.insert("messages".into(), Json::Array(messages.collect()));
    if let Some(tools) = &session.tools {
        body.insert("tools".into(), Json::Array(tools.clone()));
    }
    if let Some(documents) = &session.documents {
        body.insert("documents".into(), Json::Array(documents.clone()));
    }
    body.insert(
        "add_generation_prompt".into(),
        Json::from(session.add_generation_prompt),
    );
    export_continue(session, &mut body, &mut notes);
    let kwargs = export_kwargs(session, template);
    if !kwargs.is_empty() {
        body.insert("chat_template_kwargs".into(), Json::Object(kwargs));
    }
    if !from_model(template) {
        body.insert("chat_template".into(), Json::from(template.source.as_str()));
    }
    if session.clock.is_some() {
        notes.push(
            "the fixed clock cannot be sent: the server uses its own time for strftime_now".into(),
        );
    }
    for (key, value) in &session.request {
        body.entry(key.clone()).or_insert_with(|| value.clone());
    }
    Exported {
        body: Json::Object(body),
        notes,
    }
}

fn export_model(session: &Session) -> Option<Json> {
    if let Some(model) = session.request.get("model") {
        return Some(model.clone());
    }
    match &session.template {
        TemplateRef::Model { id, .. } => Some(Json::from(id.as_str())),
        _ => None,
    }
}

fn export_continue(session: &Session, body: &mut Map<String, Json>, notes: &mut Vec<String>) {
    match &session.continue_final_message {
        ContinueSetting::Flag(false) => {}
        ContinueSetting::Flag(true) => {
            body.insert("continue_final_message".into(), Json::from(true));
        }
        ContinueSetting::Field(field) => {
            notes.push(format!(
                "continue_final_message continues {field:?}; servers continue \"content\""
            ));
            body.insert("continue_final_message".into(), Json::from(true));
        }
    }
}

/// The session's variables, the clashing kwargs it kept, and bos/eos where they differ
/// from what the template's model would pass.
fn export_kwargs(session: &Session, template: &TemplateSource) -> Map<String, Json> {
    let mut kwargs = match session.request.get("chat_template_kwargs") {
        Some(Json::Object(kept)) => kept.clone(),
        _ => Map::new(),
    };
    for (key, token, model_token) in [
        ("bos_token", &session.bos_token, &template.bos_token),
        ("eos_token", &session.eos_token, &template.eos_token),
    ] {
        if let Some(token) = token.as_ref().filter(|t| Some(*t) != model_token.as_ref()) {
            kwargs.insert(key.into(), Json::from(token.as_str()));
        }
    }
    for (key, value) in &session.variables {
        kwargs.insert(key.clone(), value.clone());
    }
    kwargs
}

/// Whether the server already has this template (it is its model's own).
fn from_model(template: &TemplateSource) -> bool {
    matches!(template.origin, Origin::Model(_) | Origin::Gguf { .. })
}
