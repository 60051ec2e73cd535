//! `inspect`'s warning about training masks: a conversation with assistant turns whose
//! assistant mask is all zero, which fine-tuning with assistant-only loss turns into a
//! run that silently learns nothing (stock Llama 3.1, Qwen3, Gemma 3 and gpt-oss
//! templates have no `{% generation %}` block).

use chatplate_core::inspect::TemplateReport;
use chatplate_core::training::{has_assistant_turn, masked_bytes};
use chatplate_render::{CompiledTemplate, Conversation, RenderControl};

/// The warning for `name`, if any: for a fixture, its own conversation; for a template,
/// the `[user, assistant]` probe behind `has_generation_markers`.
pub(super) fn warning(
    name: &str,
    compiled: &CompiledTemplate,
    report: &TemplateReport,
    conversation: Option<&Conversation>,
) -> Option<String> {
    let lead = format!("warning: {name}: the assistant mask is all zero");
    let Some(conversation) = conversation else {
        let markers = &report.capabilities.training.has_generation_markers;
        return (!markers.value && report.capabilities.content.renders_user_message.value)
            .then(|| format!("{lead} for every conversation (no {{% generation %}} block): assistant-only training learns nothing"));
    };
    if !has_assistant_turn(&conversation.messages) {
        return None;
    }
    let tracked = compiled
        .render_tracked(conversation, &RenderControl::default())
        .ok()?;
    if !masked_bytes(&tracked.prompt, &tracked.spans).is_empty() {
        return None;
    }
    let why = match tracked.has_generation_block {
        true => "its {% generation %} blocks cover nothing",
        false => "the template has no {% generation %} block",
    };
    Some(format!(
        "{lead} for this conversation ({why}): assistant-only training learns nothing from it"
    ))
}
