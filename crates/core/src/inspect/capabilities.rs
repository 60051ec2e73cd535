//! What a template can render, decided by probes, each answer with the probe behind it.
//!
//! The definitions follow llama.cpp's minja (`chat-template.hpp`) where minja detects the
//! same thing, so the keys that share minja's names can be compared with it; the rest
//! (role handling, alternation, reasoning history, switches, clock) are chatplate's own.
//! Unlike minja, probes go through transformers' preprocessing (reasoning aliases, `None`
//! keys dropped), because that is what the template sees in `apply_chat_template`.

use serde_json::{json, Value as Json};

use super::probe::{ProbeFailure, Prober};
use super::{content, reasoning, roles, tools, training, Cancelled};

/// An answer and the probe that decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided<T> {
    /// The answer.
    pub value: T,
    /// What was rendered ("system → user").
    pub(crate) probe: String,
    /// What in the output (or error) decided it.
    pub observed: String,
}

impl<T> Decided<T> {
    /// An answer with its probe and observation.
    pub fn new(value: T, probe: impl Into<String>, observed: impl Into<String>) -> Self {
        Decided {
            value,
            probe: probe.into(),
            observed: observed.into(),
        }
    }
}

/// How a template treats a system message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemRole {
    /// Rendered as its own turn (a system-only conversation shows it).
    OwnTurn,
    /// Shown, but only inside another turn (typically prepended to the first user turn).
    Merged,
    /// Shown; a system-only conversation fails, so own turn and merged cannot be told
    /// apart.
    Shown,
    /// Rendered without its text.
    Dropped,
    /// The template raises on it.
    Raises,
    /// Rendering fails otherwise.
    Fails,
}

impl SystemRole {
    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            SystemRole::OwnTurn => "own_turn",
            SystemRole::Merged => "merged",
            SystemRole::Shown => "shown",
            SystemRole::Dropped => "dropped",
            SystemRole::Raises => "raises",
            SystemRole::Fails => "fails",
        }
    }
}

/// What happens to a message of one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleHandling {
    /// Its text appears in the prompt.
    Renders,
    /// The prompt renders without its text.
    Dropped,
    /// The template raises on it.
    Raises,
    /// Rendering fails otherwise.
    Fails,
}

impl RoleHandling {
    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            RoleHandling::Renders => "renders",
            RoleHandling::Dropped => "dropped",
            RoleHandling::Raises => "raises",
            RoleHandling::Fails => "fails",
        }
    }
}

/// Where a template reads reasoning from (minja's `ReasoningFormat` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningFormat {
    /// No reasoning is rendered.
    None,
    /// `message.reasoning_content`.
    ReasoningContentField,
    /// `message.thought`.
    ThoughtField,
    /// `message.thinking`.
    ThinkingField,
    /// `message.tool_plan` (with tool calls).
    ToolPlanField,
    /// Content parts `{"type": "thinking", "thinking": ...}`.
    ThinkingContentBlock,
    /// Content parts `{"type": "thoughts", "text": ...}`.
    ThoughtsContentBlock,
}

impl ReasoningFormat {
    /// minja's enum name, for comparing with llama.cpp.
    pub fn minja_name(self) -> &'static str {
        match self {
            ReasoningFormat::None => "NONE",
            ReasoningFormat::ReasoningContentField => "REASONING_CONTENT_FIELD",
            ReasoningFormat::ThoughtField => "THOUGHT_FIELD",
            ReasoningFormat::ThinkingField => "THINKING_FIELD",
            ReasoningFormat::ToolPlanField => "TOOL_PLAN_FIELD",
            ReasoningFormat::ThinkingContentBlock => "THINKING_CONTENT_BLOCK",
            ReasoningFormat::ThoughtsContentBlock => "THOUGHTS_CONTENT_BLOCK",
        }
    }
}

/// One role's handling.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleSupport {
    /// The role probed (`system`, `developer`, an unknown one, ...).
    pub role: String,
    /// What the template does with it.
    pub handling: Decided<RoleHandling>,
}

/// Everything probed about a template.
#[derive(Debug, Clone, PartialEq)]
pub struct Capabilities {
    /// Content: strings, typed parts, null.
    pub content: content::ContentCaps,
    /// Roles and conversation structure.
    pub roles: roles::RoleCaps,
    /// Tool definitions, calls and responses.
    pub tools: tools::ToolCaps,
    /// Reasoning.
    pub reasoning: reasoning::ReasoningCaps,
    /// Whether the prompt changes with the clock (`strftime_now`).
    pub uses_clock: Decided<bool>,
    /// What assistant-only training would learn from.
    pub training: training::TrainingCaps,
    /// Every probe the template failed on, in probe order.
    pub failures: Vec<ProbeFailure>,
}

/// One line of a report: a key (minja's name where minja has one), its value as JSON,
/// and the evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key.
    pub key: String,
    /// The value.
    pub value: Json,
    /// What was rendered.
    pub probe: String,
    /// What decided it.
    pub observed: String,
}

impl Entry {
    fn of<T>(key: &str, decided: &Decided<T>, value: Json) -> Self {
        Entry {
            key: key.to_string(),
            value,
            probe: decided.probe.clone(),
            observed: decided.observed.clone(),
        }
    }

    /// An entry for a yes/no answer.
    pub(crate) fn flag(key: &str, decided: &Decided<bool>) -> Self {
        Entry::of(key, decided, json!(decided.value))
    }

    /// An entry whose value is a name.
    pub(crate) fn named<T>(key: &str, decided: &Decided<T>, name: &str) -> Self {
        Entry::of(key, decided, json!(name))
    }

    /// The answer as `inspect` and the app's info view print it: `yes`, `no`, `-` or its
    /// text.
    pub fn value_text(&self) -> String {
        match &self.value {
            Json::Bool(true) => "yes".into(),
            Json::Bool(false) => "no".into(),
            Json::Null => "-".into(),
            Json::String(text) => text.clone(),
            other => other.to_string(),
        }
    }
}

impl Capabilities {
    /// Runs every probe; `variables` are the template's own inputs, candidates for
    /// thinking switches. Probes that need an earlier answer (typed content, non-null
    /// content, object arguments) are shaped by it, as in minja.
    pub(crate) fn detect(prober: &Prober, variables: &[String]) -> Result<Self, Cancelled> {
        let content = content::detect(prober)?;
        let roles = roles::detect(prober, &content)?;
        let tools = tools::detect(prober, &content)?;
        let reasoning = reasoning::detect(prober, &content, &tools, variables)?;
        let references = super::switches::reference_probes(prober, &content)?;
        let uses_clock = super::switches::uses_clock(prober, &references[0])?;
        let training = training::detect(prober, &content)?;
        Ok(Capabilities {
            content,
            roles,
            tools,
            reasoning,
            uses_clock,
            training,
            failures: prober.failures(),
        })
    }

    /// Every answer as a report line: whether a plain conversation renders, then minja's
    /// keys in minja's order, then chatplate's own.
    pub fn entries(&self) -> Vec<Entry> {
        let mut entries = self.content.baseline_entries();
        entries.extend([
            Entry::flag("supports_system_role", &self.roles.supports_system_role),
            Entry::flag("supports_tools", &self.tools.supports_tools),
            Entry::flag("supports_tool_calls", &self.tools.supports_tool_calls),
            Entry::flag(
                "supports_tool_responses",
                &self.tools.supports_tool_responses,
            ),
            Entry::flag("supports_tool_call_id", &self.tools.supports_tool_call_id),
            Entry::flag(
                "supports_parallel_tool_calls",
                &self.tools.supports_parallel_tool_calls,
            ),
            Entry::flag(
                "requires_object_arguments",
                &self.tools.requires_object_arguments,
            ),
            Entry::flag(
                "requires_non_null_content",
                &self.content.requires_non_null_content,
            ),
            Entry::flag(
                "requires_typed_content",
                &self.content.requires_typed_content,
            ),
            Entry::flag("supports_reasoning", &self.reasoning.supports_reasoning),
            Entry::named(
                "reasoning_format",
                &self.reasoning.reasoning_format,
                self.reasoning.reasoning_format.value.minja_name(),
            ),
        ]);
        entries.extend(self.roles.entries());
        entries.extend(self.tools.entries());
        entries.extend(self.content.entries());
        entries.extend(self.reasoning.entries());
        entries.push(Entry::flag("uses_clock", &self.uses_clock));
        entries.extend(self.training.entries());
        entries
    }
}
