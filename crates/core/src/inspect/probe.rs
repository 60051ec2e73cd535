//! Probe renders: small conversations rendered through the real engine, whose output
//! (or error) decides a capability.
//!
//! Every probe carries a short description ("system → user") that the report shows as
//! the evidence for what it decided. Renders that the template itself rejects with
//! `raise_exception` are remembered, so the report can list which inputs a template
//! refuses.

use chatplate_render::remedy::{means, Knob};
use std::cell::RefCell;

use jiff::civil::DateTime;
use serde_json::{json, Map, Value as Json};

use super::capabilities::Decided;
use super::Cancelled;
use chatplate_render::{CancelToken, CompiledTemplate, Conversation, RenderError, RenderErrorKind};

/// What probes are rendered with besides their messages.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeSettings {
    /// Variables every probe gets (`bos_token`, `eos_token`, user-chosen extras).
    pub variables: Map<String, Json>,
    /// The fixed clock for `strftime_now`, so probes are deterministic.
    pub clock: DateTime,
}

impl Default for ProbeSettings {
    fn default() -> Self {
        ProbeSettings {
            variables: Map::new(),
            clock: DateTime::constant(2026, 1, 15, 0, 0, 0, 0),
        }
    }
}

/// One probe input.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    /// The messages.
    pub(crate) messages: Vec<Json>,
    /// Tool definitions, if any.
    pub(crate) tools: Option<Vec<Json>>,
    /// Open an assistant turn at the end.
    pub(crate) add_generation_prompt: bool,
    /// Variables set on top of the settings' ones.
    pub(crate) variables: Map<String, Json>,
    /// A clock other than the settings' one.
    pub(crate) clock: Option<DateTime>,
}

impl Probe {
    /// A probe of these messages, without tools or generation prompt.
    pub(crate) fn of(messages: Vec<Json>) -> Self {
        Probe {
            messages,
            ..Probe::default()
        }
    }

    /// The same probe with tool definitions.
    pub(crate) fn with_tools(mut self, tools: Vec<Json>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// The same probe with the generation prompt.
    pub(crate) fn with_generation_prompt(mut self) -> Self {
        self.add_generation_prompt = true;
        self
    }

    /// The same probe with one more variable.
    pub(crate) fn with_variable(mut self, name: &str, value: Json) -> Self {
        self.variables.insert(name.to_string(), value);
        self
    }

    /// A short description for reports: the roles in order, then tools and switches.
    pub(crate) fn describe(&self) -> String {
        let mut text = self
            .messages
            .iter()
            .map(describe_message)
            .collect::<Vec<_>>()
            .join(" → ");
        if let Some(tools) = &self.tools {
            text.push_str(&format!(" (with {} tool definition(s))", tools.len()));
        }
        if self.add_generation_prompt {
            text.push_str(" + generation prompt");
        }
        for (name, value) in &self.variables {
            text.push_str(&format!(", {name}={value}"));
        }
        text
    }
}

/// `role`, with what the message carries besides text.
fn describe_message(message: &Json) -> String {
    let role = message["role"].as_str().unwrap_or("?");
    let mut extras = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Json::as_array) {
        extras.push(format!("{} tool call(s)", calls.len()));
    }
    for key in ["reasoning_content", "thinking", "thought", "tool_plan"] {
        if message.get(key).is_some() {
            extras.push(key.to_string());
        }
    }
    match message.get("content") {
        Some(Json::Array(parts)) => extras.push(format!("{} content part(s)", parts.len())),
        Some(Json::Null) => extras.push("null content".into()),
        Some(Json::String(text)) if text.is_empty() => extras.push("empty content".into()),
        _ => {}
    }
    if extras.is_empty() {
        role.to_string()
    } else {
        format!("{role} ({})", extras.join(", "))
    }
}

/// A template error seen while probing: which probe, and the template's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeFailure {
    /// The probe's description.
    pub probe: String,
    /// The error.
    pub error: RenderError,
}

/// Renders probes through one compiled template, remembering failures.
pub struct Prober<'a> {
    template: &'a CompiledTemplate,
    settings: &'a ProbeSettings,
    cancel: &'a CancelToken,
    failures: RefCell<Vec<ProbeFailure>>,
    /// Tools for probes that set none: `Some([])` for templates that fail on `None`.
    default_tools: RefCell<Option<Vec<Json>>>,
    /// How many probes ran into the template's limits (fuel, output, recursion).
    limit_failures: std::cell::Cell<usize>,
}

/// After this many probes exceed the limits, the rest are not run: a template that
/// exhausts its fuel on tiny probe conversations would spend it on every one.
const LIMIT_FAILURES: usize = 3;

impl<'a> Prober<'a> {
    /// A prober for `template`.
    pub fn new(
        template: &'a CompiledTemplate,
        settings: &'a ProbeSettings,
        cancel: &'a CancelToken,
    ) -> Self {
        Prober {
            template,
            settings,
            cancel,
            failures: RefCell::new(Vec::new()),
            default_tools: RefCell::new(None),
            limit_failures: std::cell::Cell::new(0),
        }
    }

    /// Checks that one user message renders. Some templates loop over `tools` without
    /// a guard and fail on `tools=None`; when an empty list makes it render, every
    /// later probe without tools gets one. Returns (renders, needs a tools list).
    pub(crate) fn calibrate(
        &self,
        user: &Json,
    ) -> Result<(Decided<bool>, Decided<bool>), Cancelled> {
        let plain = Probe::of(vec![user.clone()]);
        let error = match self.render(&plain)? {
            Ok(_) => {
                let renders = Decided::new(true, plain.describe(), "it renders");
                let no_list = Decided::new(false, plain.describe(), "it renders with tools=None");
                return Ok((renders, no_list));
            }
            Err(err) => err,
        };
        let listed = plain.clone().with_tools(Vec::new());
        if self.render(&listed)?.is_ok() {
            *self.default_tools.borrow_mut() = Some(Vec::new());
            let observed = format!(
                "with tools=None {}; with tools=[] it renders (later probes get tools=[])",
                failure_text(&error)
            );
            let renders = Decided::new(true, listed.describe(), "it renders with tools=[]");
            return Ok((renders, Decided::new(true, plain.describe(), observed)));
        }
        let observed = format!(
            "{} (most answers below are \"no\": pass the variables it needs with {})",
            failure_text(&error),
            means(Knob::Variable)
        );
        let renders = Decided::new(false, plain.describe(), observed);
        let no_list = Decided::new(false, listed.describe(), "it fails with tools=[] too");
        Ok((renders, no_list))
    }

    /// Renders `probe`; the outer error means the inspection was cancelled.
    pub(crate) fn render(&self, probe: &Probe) -> Result<Result<String, RenderError>, Cancelled> {
        if self.limit_failures.get() >= LIMIT_FAILURES {
            return Ok(Err(RenderError::new(
                RenderErrorKind::Limit,
                "not run: earlier probes exceeded the template's limits",
            )));
        }
        let conversation = self.conversation(probe);
        match self.template.render_cancellable(conversation, self.cancel) {
            Err(err) if err.kind == RenderErrorKind::Cancelled => Err(Cancelled),
            Err(err) => {
                if err.kind == RenderErrorKind::Limit {
                    self.limit_failures.set(self.limit_failures.get() + 1);
                }
                self.failures.borrow_mut().push(ProbeFailure {
                    probe: probe.describe(),
                    error: err.clone(),
                });
                Ok(Err(err))
            }
            Ok(text) => Ok(Ok(text)),
        }
    }

    /// Renders `probe` recording its `{% generation %}` spans (failures are not
    /// remembered: the plain probes record them).
    pub(crate) fn render_tracked(
        &self,
        probe: &Probe,
    ) -> Result<Result<chatplate_render::TrackedRender, RenderError>, Cancelled> {
        // The inspection's own deadline bounds every probe, through the token.
        let control = chatplate_render::RenderControl::new(self.cancel.clone()).without_deadline();
        match self
            .template
            .render_tracked(self.conversation(probe), &control)
        {
            Err(err) if err.kind == RenderErrorKind::Cancelled => Err(Cancelled),
            other => Ok(other),
        }
    }

    /// Renders `probe` and tells whether the output contains every needle.
    pub(crate) fn shows(&self, probe: &Probe, needles: &[&str]) -> Result<Shown, Cancelled> {
        Ok(match self.render(probe)? {
            Ok(text) if needles.iter().all(|n| text.contains(n)) => Shown::Yes(text),
            Ok(text) => Shown::No(text),
            Err(err) => Shown::Failed(err),
        })
    }

    /// Every failure seen so far.
    pub(crate) fn failures(&self) -> Vec<ProbeFailure> {
        self.failures.borrow().clone()
    }

    fn conversation(&self, probe: &Probe) -> Conversation {
        let mut variables = self.settings.variables.clone();
        for (name, value) in &probe.variables {
            variables.insert(name.clone(), value.clone());
        }
        Conversation::new(probe.messages.clone())
            .with_tools(
                probe
                    .tools
                    .clone()
                    .or_else(|| self.default_tools.borrow().clone()),
            )
            .with_generation_prompt(probe.add_generation_prompt)
            .with_variables(variables)
            .with_clock(Some(probe.clock.unwrap_or(self.settings.clock)))
    }
}

/// Whether a probe's output showed what was looked for.
#[derive(Debug, Clone)]
pub(crate) enum Shown {
    /// It rendered and contains every needle.
    Yes(String),
    /// It rendered without (all of) them.
    No(String),
    /// It failed.
    Failed(RenderError),
}

impl Shown {
    /// Whether the needles were found.
    pub(crate) fn yes(&self) -> bool {
        matches!(self, Shown::Yes(_))
    }

    /// The rendered text, when there is one.
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            Shown::Yes(text) | Shown::No(text) => Some(text),
            Shown::Failed(_) => None,
        }
    }

    /// "appears" / "does not appear" / "raises: ..." for evidence texts.
    pub(crate) fn verdict(&self, what: &str) -> String {
        match self {
            Shown::Yes(_) => format!("{what} appears in the prompt"),
            Shown::No(_) => format!("{what} does not appear in the prompt"),
            Shown::Failed(err) => failure_text(err),
        }
    }
}

/// "raises: message" for the template's own errors, "fails: ..." for others.
pub(crate) fn failure_text(err: &RenderError) -> String {
    match err.kind {
        RenderErrorKind::Raised => format!("the template raises: {}", err.message),
        _ => format!("rendering fails: {}", err.message),
    }
}

/// A message with a role and text content.
pub(super) fn message(role: &str, content: &str) -> Json {
    json!({"role": role, "content": content})
}

/// Text content as typed parts: `[{"type": "text", "text": ...}]`.
pub(crate) fn text_parts(text: &str) -> Json {
    json!([{"type": "text", "text": text}])
}
