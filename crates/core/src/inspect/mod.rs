//! Explaining a template by rendering probes through the real engine: what it can
//! render (capabilities), which variables it reads, which bytes of a prompt each
//! message produced (attribution), which values the user set it ignores (dropped
//! fields), and whether a conversation's prompt stays a prefix when it grows (prefix
//! stability, which serving-side KV caches rely on).
//!
//! Nothing here reads the template source for meaning, except the variable list, which
//! comes from the syntax tree. Everything is a pure function of a compiled template and
//! its input, so the app's background worker can run it, cache the result (keyed by the
//! template source and the [`Conversation`], which compares by value; an attribution
//! can also be updated after an edit, see [`attribute_incremental`]) and stop it
//! through a [`CancelToken`] between renders.

mod attribution;
mod capabilities;
mod content;
mod dropped;
mod focus;
mod incremental;
mod inputs;
mod knobs;
mod narrow_batch;
mod one_render;
mod perturb;
mod prefixes;
mod probe;
mod query;
mod reasoning;
mod refine;
mod report;
mod roles;
mod shifted;
mod stability;
mod switches;
pub(crate) mod text;
mod thinking;
mod tools;
mod tools_block;
mod training;
mod turn_cost;
mod variables;

pub(crate) use attribution::render_full;
pub use attribution::{attribute, Attribution, Part, Partial, Source, Span, ToolsBlock};
pub use capabilities::{
    Capabilities, Decided, Entry, ReasoningFormat, RoleHandling, RoleSupport, SystemRole,
};
pub use content::ContentCaps;
pub use dropped::{
    check_values, dropped_fields, message_fields, settings_fields, DroppedFields, FieldCheck,
    FieldRef, PathStep, Verdict,
};
pub use incremental::{
    attribute_by_prefixes, attribute_focused, attribute_incremental,
    attribute_incremental_with_prompt, attribute_prepared, attribute_rendered, Previous,
};
pub use knobs::{knobs, sample_conversation, Change, Flip, Knob, MAX_PROBED, STRETCH_BYTES};
pub use one_render::predict as predicted_prefixes;
pub use prefixes::PrefixOutcome;
pub use probe::{Probe, ProbeFailure, ProbeSettings, Prober};
pub use query::{message_span, source_at};
pub use reasoning::ReasoningCaps;
pub use report::{
    attribution_json, default_json, describe_source, dropped_json, failure_json, stability_json,
};
pub use roles::RoleCaps;
pub use stability::{
    check_prefix_stable, describe_instability, prefix_stability, EarlierPrompt, PrefixCheck,
    PrefixStability,
};
pub use switches::VariableEffect;
pub use text::excerpt as text_excerpt;
pub use tools::ToolCaps;
pub use training::TrainingCaps;
#[cfg(feature = "tokens")]
pub use turn_cost::TokenCounter;
pub use turn_cost::{
    turn_costs, turn_starts, ByteCounter, CostUnit, Counted, TurnCost, TurnCostRun, TurnCosts,
    TurnCounter,
};
pub use variables::{template_variables, TemplateVariable, VariableDefault, STANDARD_VARIABLES};

// The probe vocabulary the lint rules build their conversations from.
pub(crate) use content::{SECOND_USER_NEEDLE, USER_NEEDLE};
pub(crate) use probe::failure_text;
pub(crate) use reasoning::Maker;
pub(crate) use roles::SYSTEM_NEEDLE;
pub(crate) use stability::{PROBE_NEXT, PROBE_REASONING, PROBE_REPLY};
pub(crate) use tools::{call_message, tool_call, tool_definition, CALL_ID};

use std::time::Duration;

use chatplate_render::{CancelToken, CompiledTemplate, Conversation, Limits, RenderError};

/// How long a whole inspection may take (its probe and prefix renders together, which
/// it bounds through its [`CancelToken`]) when the user gave no bound of their own:
/// with a conversation, [`Limits::deadline_cap`] (a minute by default: every prefix of
/// a long conversation is rendered, and a stranger's fixture must not buy minutes of
/// work); a template alone, four times its render deadline (its probes are small).
pub fn inspection_deadline(limits: &Limits, with_conversation: bool) -> Duration {
    if with_conversation {
        limits.deadline_cap()
    } else {
        limits.deadline.saturating_mul(4)
    }
}

/// The inspection was stopped through its [`CancelToken`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the inspection was cancelled")]
pub struct Cancelled;

/// Why an inspection of a conversation produced nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InspectError {
    /// Stopped through its [`CancelToken`].
    #[error(transparent)]
    Cancelled(#[from] Cancelled),
    /// The conversation itself does not render, so there is nothing to explain.
    #[error("{0}")]
    Render(RenderError),
}

/// A template variable with what setting it does.
#[derive(Debug, Clone, PartialEq)]
pub struct VariableReport {
    /// The variable and its default from the syntax tree.
    pub variable: TemplateVariable,
    /// What setting it changes, by rendering.
    pub effect: Decided<VariableEffect>,
}

/// Everything known about a template without a user conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateReport {
    /// What it can render.
    pub capabilities: Capabilities,
    /// The variables it reads besides [`STANDARD_VARIABLES`].
    pub variables: Vec<VariableReport>,
}

/// Probes `template`: about 40 small renders, plus about 10 per template variable.
pub fn inspect_template(
    template: &CompiledTemplate,
    settings: &ProbeSettings,
    cancel: &CancelToken,
) -> Result<TemplateReport, Cancelled> {
    let prober = Prober::new(template, settings, cancel);
    let variables = template_variables(template);
    let names: Vec<String> = variables.iter().map(|v| v.name.clone()).collect();
    let capabilities = Capabilities::detect(&prober, &names)?;
    let references = switches::reference_probes(&prober, &capabilities.content)?;
    let effects = switches::effects(&prober, &references, &variables)?;
    Ok(TemplateReport {
        capabilities,
        variables: variables
            .into_iter()
            .zip(effects)
            .map(|(variable, effect)| VariableReport { variable, effect })
            .collect(),
    })
}

/// Everything known about a template on one conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationReport {
    /// Which part produced each byte of the prompt.
    pub attribution: Attribution,
    /// Which values the template ignores.
    pub dropped: DroppedFields,
    /// Whether the prompt stays a prefix when the conversation grows by one turn.
    pub stability: PrefixStability,
}

/// Attribution, dropped fields and prefix stability of `conversation`.
pub fn inspect_conversation(
    template: &CompiledTemplate,
    conversation: &Conversation,
    cancel: &CancelToken,
) -> Result<ConversationReport, InspectError> {
    Ok(ConversationReport {
        attribution: attribute(template, conversation, cancel)?,
        dropped: dropped_fields(template, conversation, cancel)?,
        stability: prefix_stability(template, conversation, cancel)?,
    })
}
