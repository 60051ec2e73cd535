//! `chatplate lint --format json`:
//! `{"templates": [{"template", "source", "findings": [{"rule", "severity", "line",
//! "column", "message", "fix"}]}]}`, with `"error"` on a template that could not be
//! linted. `message` is the whole message: the conversation, what happens and the
//! rendered evidence on the lines after it.

use serde_json::{json, Value as Json};

use super::{Finding, TemplateLint};

/// The report of every template, as one JSON value.
pub fn report(templates: &[TemplateLint]) -> Json {
    json!({ "templates": templates.iter().map(template).collect::<Vec<_>>() })
}

fn template(lint: &TemplateLint) -> Json {
    let mut object = json!({
        "template": lint.name,
        "source": lint.origin,
        "findings": lint.findings.iter().map(finding).collect::<Vec<_>>(),
    });
    if let Some(error) = &lint.error {
        object["error"] = Json::from(error.as_str());
    }
    object
}

fn finding(finding: &Finding) -> Json {
    json!({
        "rule": finding.rule.id(),
        "severity": finding.severity.name(),
        "line": finding.location.map(|l| l.line),
        "column": finding.location.map(|l| l.column),
        "message": finding.full_message(),
        "fix": finding.fix,
    })
}
