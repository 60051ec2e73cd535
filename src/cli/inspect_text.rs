//! The text form of `chatplate inspect`'s report.

use chatplate_core::inspect::text_excerpt as excerpt;
use chatplate_core::inspect::{
    describe_source, ConversationReport, Source, TemplateReport, ToolsBlock, VariableDefault,
    Verdict,
};

/// Lines of per-message byte counts shown before eliding the rest.
const SHOWN_MESSAGES: usize = 20;

pub(super) fn template_text(name: &str, report: &TemplateReport) -> String {
    let mut out = format!("{name}\n\nCapabilities (each decided by the probe shown)\n");
    for entry in report.capabilities.entries() {
        out.push_str(&format!(
            "  {:<30} {}\n      {}: {}\n",
            entry.key,
            entry.value_text(),
            entry.probe,
            entry.observed
        ));
    }
    out.push_str("\nVariables beyond messages, tools, documents, add_generation_prompt, bos/eos\n");
    if report.variables.is_empty() {
        out.push_str("  (none)\n");
    }
    for variable in &report.variables {
        out.push_str(&format!(
            "  {:<30} default {}\n      {}\n",
            variable.variable.name,
            default_text(&variable.variable.default),
            variable.effect.observed
        ));
    }
    let failures = &report.capabilities.failures;
    if !failures.is_empty() {
        out.push_str("\nProbes the template rejected\n");
        for failure in failures {
            out.push_str(&format!("  {}: {}\n", failure.probe, failure.error));
        }
    }
    out
}

fn default_text(default: &VariableDefault) -> String {
    match default {
        VariableDefault::Value(value) => value.to_string(),
        VariableDefault::Expression(text) => text.clone(),
        VariableDefault::Undefined => "undefined".into(),
    }
}

/// Attribution, dropped fields and prefix stability of a fixture.
pub(super) fn conversation_text(report: &ConversationReport, roles: &[String]) -> String {
    let mut out = attribution_text(report, roles);
    out.push_str(&dropped_text(report));
    out.push_str(&stability_text(report));
    out
}

fn attribution_text(report: &ConversationReport, roles: &[String]) -> String {
    let attribution = &report.attribution;
    let mut out = format!(
        "\nAttribution ({} bytes, from {} prefix renders)\n",
        attribution.prompt_len,
        attribution.prefixes.len()
    );
    if attribution.monotone() {
        out.push_str("  prefix-monotone: every prefix of the conversation renders as a prefix of the prompt\n");
    } else {
        out.push_str(&format!(
            "  NOT prefix-monotone: the first k messages render as something other than a prefix of the prompt (or fail) for k = {:?}; {} bytes can only be narrowed to a range of messages\n",
            attribution.breaks(),
            attribution.ambiguous_bytes()
        ));
    }
    out.push_str(&format!(
        "  preamble {} bytes, generation prompt {} bytes, tool definitions: {}\n",
        attribution.bytes_of(Source::Preamble),
        attribution.bytes_of(Source::GenerationPrompt),
        match &attribution.tools {
            ToolsBlock::NoTools => "none".to_string(),
            ToolsBlock::NotRendered => "not rendered".to_string(),
            ToolsBlock::NotSeparable => "not separable into one block".to_string(),
            ToolsBlock::Located(ranges) => format!(
                "{} bytes in {}",
                ranges.iter().map(|r| r.len()).sum::<usize>(),
                ranges
                    .iter()
                    .map(|r| format!("{}..{}", r.start, r.end))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    ));
    for (index, bytes) in attribution
        .message_bytes()
        .iter()
        .enumerate()
        .take(SHOWN_MESSAGES)
    {
        let role = roles.get(index).map_or("?", String::as_str);
        out.push_str(&format!("  message {index:<4} {role:<10} {bytes} bytes\n"));
    }
    if attribution.message_count > SHOWN_MESSAGES {
        out.push_str(&format!(
            "  ... {} more messages (see --json)\n",
            attribution.message_count - SHOWN_MESSAGES
        ));
    }
    out
}

fn dropped_text(report: &ConversationReport) -> String {
    let dropped = &report.dropped;
    let mut out = format!(
        "\nValues the template ignores ({} checked)\n",
        dropped.checks.len()
    );
    let unused = dropped.unused();
    if unused.is_empty() {
        out.push_str("  none: every value changes the prompt\n");
    }
    for field in unused {
        out.push_str(&format!("  {field}: not used by this template\n"));
    }
    for check in &dropped.checks {
        if let Verdict::BreaksRender(err) = &check.verdict {
            out.push_str(&format!(
                "  {}: changing it makes the template fail: {}\n",
                check.field, err.message
            ));
        }
    }
    out
}

fn stability_text(report: &ConversationReport) -> String {
    let stability = &report.stability;
    let appended: Vec<&str> = stability
        .appended
        .iter()
        .map(|m| m["role"].as_str().unwrap_or("?"))
        .collect();
    let mut out = format!(
        "\nPrefix stability (one more turn: {} appended)\n",
        appended.join(" + ")
    );
    for check in &stability.checks {
        let name = check.earlier_prompt.name().replace('_', " ");
        match check.differs_at {
            None => out.push_str(&format!(
                "  {name}: the earlier prompt is a prefix of the next request\n"
            )),
            Some(at) => {
                let who = check.responsible.map_or("not provable".to_string(), |s| {
                    describe_source(s, stability.original_len)
                });
                out.push_str(&format!(
                    "  {name}: NOT a prefix: differs at byte {at} (produced by {who})\n    earlier: {}\n    later:   {}\n",
                    excerpt(&check.earlier, at.saturating_sub(40), 160),
                    excerpt(&check.later, at.saturating_sub(40), 160)
                ));
            }
        }
    }
    out
}
