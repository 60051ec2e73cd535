//! Reports as JSON: one object per template, with minja's key names for the
//! capabilities minja also detects, and the evidence for every answer.

use serde_json::{json, Map, Value as Json};

use super::text::excerpt;
use super::{
    Attribution, ConversationReport, DroppedFields, Part, PrefixStability, Source, TemplateReport,
    ToolsBlock, VariableDefault, VariableReport, Verdict,
};
use chatplate_render::RenderError;

impl TemplateReport {
    /// `{"supports_system_role": true, ..., "roles": {...}, "variables": [...],
    /// "failures": [...], "evidence": {"key": {"probe", "observed"}}}`.
    pub fn to_json(&self) -> Json {
        let mut object = Map::new();
        let mut evidence = Map::new();
        for entry in self.capabilities.entries() {
            let explained = json!({"probe": entry.probe, "observed": entry.observed});
            if let Some((group, name)) = entry.key.split_once('.') {
                nested(&mut object, group).insert(name.into(), entry.value);
                nested(&mut evidence, group).insert(name.into(), explained);
            } else {
                object.insert(entry.key.clone(), entry.value);
                evidence.insert(entry.key, explained);
            }
        }
        let variables: Vec<Json> = self.variables.iter().map(variable_json).collect();
        object.insert("variables".into(), Json::Array(variables));
        let failures: Vec<Json> = self
            .capabilities
            .failures
            .iter()
            .map(|f| failure_json(&f.probe, &f.error))
            .collect();
        object.insert("failures".into(), Json::Array(failures));
        object.insert("evidence".into(), Json::Object(evidence));
        Json::Object(object)
    }
}

/// The object under `key`, created when missing.
fn nested<'m>(object: &'m mut Map<String, Json>, key: &str) -> &'m mut Map<String, Json> {
    let slot = object
        .entry(key.to_string())
        .or_insert_with(|| Json::Object(Map::new()));
    if !slot.is_object() {
        *slot = Json::Object(Map::new());
    }
    slot.as_object_mut().expect("just made an object")
}

fn variable_json(report: &VariableReport) -> Json {
    let effect = &report.effect.value;
    json!({
        "name": report.variable.name,
        "default": default_json(&report.variable.default),
        "toggles": effect.toggles,
        "printed": effect.printed,
        "behaves_as": effect.behaves_as,
        "probe": report.effect.probe,
        "observed": report.effect.observed,
    })
}

/// `{"value": v}`, `{"expression": "..."}` or `null` (undefined).
pub fn default_json(default: &VariableDefault) -> Json {
    match default {
        VariableDefault::Value(value) => json!({"value": value}),
        VariableDefault::Expression(text) => json!({"expression": text}),
        VariableDefault::Undefined => Json::Null,
    }
}

/// `{"probe", "kind", "message"}`.
pub fn failure_json(probe: &str, error: &RenderError) -> Json {
    json!({"probe": probe, "kind": error.kind.label(), "message": error.message})
}

impl ConversationReport {
    /// `{"attribution": {...}, "dropped_fields": {...}, "prefix_stability": {...}}`.
    pub fn to_json(&self) -> Json {
        json!({
            "attribution": attribution_json(&self.attribution),
            "dropped_fields": dropped_json(&self.dropped),
            "prefix_stability": stability_json(&self.stability),
        })
    }
}

/// Per-part byte counts, monotonicity and the tools block.
pub fn attribution_json(attribution: &Attribution) -> Json {
    let tools_block = match &attribution.tools {
        ToolsBlock::NoTools => json!("no tools"),
        ToolsBlock::NotRendered => json!("not rendered"),
        ToolsBlock::NotSeparable => json!("not separable"),
        ToolsBlock::Located(ranges) => {
            let ranges: Vec<Json> = ranges
                .iter()
                .map(|r| json!({"start": r.start, "end": r.end}))
                .collect();
            json!(ranges)
        }
    };
    json!({
        "prompt_bytes": attribution.prompt_len,
        "prefix_monotone": attribution.monotone(),
        "non_prefix_message_counts": attribution.breaks(),
        "preamble_bytes": attribution.bytes_of(Source::Preamble),
        "tools_block": tools_block,
        "generation_prompt_bytes": attribution.bytes_of(Source::GenerationPrompt),
        "ambiguous_bytes": attribution.ambiguous_bytes(),
        "message_bytes": attribution.message_bytes(),
    })
}

/// `{"checked": n, "unused": [...], "breaks_render": [...]}`.
pub fn dropped_json(dropped: &DroppedFields) -> Json {
    let breaking: Vec<Json> = dropped
        .checks
        .iter()
        .filter_map(|c| match &c.verdict {
            Verdict::BreaksRender(err) => {
                Some(json!({"field": c.field.to_string(), "message": err.message}))
            }
            _ => None,
        })
        .collect();
    let unused: Vec<String> = dropped
        .unused()
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    json!({"checked": dropped.checks.len(), "unused": unused, "breaks_render": breaking})
}

/// `{"stable": bool, "appended": [roles], "checks": {name: {...}}}`.
pub fn stability_json(stability: &PrefixStability) -> Json {
    let appended: Vec<&str> = stability
        .appended
        .iter()
        .map(|m| m["role"].as_str().unwrap_or("?"))
        .collect();
    let mut checks = Map::new();
    for check in &stability.checks {
        let value = match check.differs_at {
            None => json!({"prefix": true}),
            Some(at) => json!({
                "prefix": false,
                "differs_at": at,
                "responsible": check
                    .responsible
                    .map(|s| describe_source(s, stability.original_len)),
                "earlier": excerpt(&check.earlier, at.saturating_sub(40), 160),
                "later": excerpt(&check.later, at.saturating_sub(40), 160),
            }),
        };
        checks.insert(check.earlier_prompt.name().into(), value);
    }
    json!({"stable": stability.stable(), "appended": appended, "checks": checks})
}

/// "message 3", "preamble", ...; messages at or past `original_len` are the probe's.
pub fn describe_source(source: Source, original_len: usize) -> String {
    let message = |i: usize| {
        if i >= original_len {
            format!("message {i} (appended by the probe)")
        } else {
            format!("message {i}")
        }
    };
    let part = |p: Part| match p {
        Part::Preamble => "the preamble".to_string(),
        Part::Message(i) => message(i),
        Part::End => "the generation prompt".to_string(),
    };
    match source {
        Source::Preamble => "the preamble".into(),
        Source::Tools => "the tool definitions".into(),
        Source::Message(i) => message(i),
        Source::Continuation(i) => format!("{} (continued)", message(i)),
        Source::GenerationPrompt => "the generation prompt".into(),
        Source::Ambiguous { from, to } => format!("{} to {}", part(from), part(to)),
        Source::Unattributed => "unattributed".into(),
    }
}
