//! `chatplate lint --format sarif`: SARIF 2.1.0 for code scanning. One run, the rules of
//! [`Rule::ALL`] as the driver's rules, one result per finding located in the template's
//! file (with its line and column when the template is a whole `.jinja` file; else the
//! line goes into the message, since a template inside a JSON config or a GGUF has no
//! line of its own in that file). A template that could not be linted is a tool
//! execution notification.

use std::path::Path;

use serde_json::{json, Value as Json};

use super::{Finding, Rule, TemplateLint};

/// The schema the report follows.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The report of every template, as one SARIF log.
pub fn report(templates: &[TemplateLint]) -> Json {
    let results: Vec<Json> = (templates.iter())
        .flat_map(|lint| lint.findings.iter().map(move |f| result(lint, f)))
        .collect();
    let failures: Vec<Json> = (templates.iter())
        .filter_map(|lint| {
            let error = lint.error.as_ref()?;
            Some(json!({
                "level": "error",
                "message": {"text": format!("{} ({}): {error}", lint.name, lint.origin)},
            }))
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "chatplate",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": Rule::ALL.iter().map(|r| rule(*r)).collect::<Vec<_>>(),
            }},
            "invocations": [{
                "executionSuccessful": failures.is_empty(),
                "toolExecutionNotifications": failures,
            }],
            "results": results,
        }],
    })
}

fn rule(rule: Rule) -> Json {
    json!({
        "id": rule.id(),
        "shortDescription": {"text": rule.summary()},
        "help": {"text": format!("Fix: {}", rule.fix())},
        "defaultConfiguration": {"level": rule.default_severity().sarif_level()},
    })
}

fn result(lint: &TemplateLint, finding: &Finding) -> Json {
    let mut text = format!("{}: {}", lint.name, finding.full_message());
    if let (Some(at), false) = (finding.location, lint.lines_in_file) {
        text.push_str(&format!(
            "\n(template line {}, column {})",
            at.line, at.column
        ));
    }
    text.push_str(&format!("\nFix: {}", finding.fix));
    let mut result = json!({
        "ruleId": finding.rule.id(),
        "ruleIndex": Rule::ALL.iter().position(|r| *r == finding.rule).unwrap_or(0),
        "level": finding.severity.sarif_level(),
        "message": {"text": text},
    });
    if let Some(file) = &lint.file {
        let mut physical = json!({"artifactLocation": {"uri": uri(file)}});
        if let (Some(at), true) = (finding.location, lint.lines_in_file) {
            physical["region"] = json!({"startLine": at.line, "startColumn": at.column});
        }
        result["locations"] = json!([{ "physicalLocation": physical }]);
    }
    result
}

/// A path as a URI reference: `/` separators, reserved characters percent-encoded.
pub fn uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let text = text.strip_prefix("./").unwrap_or(&text);
    let mut out = String::with_capacity(text.len() + 7);
    if path.is_absolute() {
        out.push_str("file://");
    }
    for byte in text.bytes() {
        let plain = byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte);
        if plain {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
