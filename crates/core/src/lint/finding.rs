//! A finding: one rule's verdict on one template, with where, what happens (and the
//! rendered evidence) and how to fix it.

use std::fmt;
use std::str::FromStr;

use super::Rule;

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; never fails a run unless `--fail-on info`.
    Info,
    /// Likely wrong for some users or engines.
    Warning,
    /// The template is broken.
    Error,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// SARIF's level: `error`, `warning` or `note`.
    pub fn sarif_level(self) -> &'static str {
        match self {
            Severity::Info => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Severity {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "error" => Ok(Severity::Error),
            "warning" => Ok(Severity::Warning),
            "info" => Ok(Severity::Info),
            _ => Err(format!("no severity {text:?} (error, warning or info)")),
        }
    }
}

/// A place in the template source: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// One rule's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The rule.
    pub rule: Rule,
    /// Its severity after `--deny` (see [`super::Policy`]).
    pub severity: Severity,
    /// Where in the template, when one place is responsible.
    pub location: Option<Location>,
    /// The conversation the template was given, when the finding comes from a render
    /// ("system → user → assistant").
    pub scenario: Option<String>,
    /// What happens, in a sentence or two.
    pub message: String,
    /// The rendered evidence (the bytes around the break, a diff), when there is some.
    pub evidence: Option<String>,
    /// How to fix it.
    pub fix: String,
}

impl Finding {
    /// A finding of `rule` with its default severity and general fix.
    pub fn new(rule: Rule, message: impl Into<String>) -> Self {
        Finding {
            rule,
            severity: rule.default_severity(),
            location: None,
            scenario: None,
            message: message.into(),
            evidence: None,
            fix: rule.fix().to_string(),
        }
    }

    /// The same finding at `location`.
    pub fn at(mut self, location: Option<Location>) -> Self {
        self.location = location;
        self
    }

    /// The same finding on the conversation `scenario`.
    pub fn on(mut self, scenario: impl Into<String>) -> Self {
        self.scenario = Some(scenario.into());
        self
    }

    /// The same finding with rendered evidence.
    pub fn showing(mut self, evidence: impl Into<String>) -> Self {
        self.evidence = Some(evidence.into());
        self
    }

    /// The same finding with a fix more specific than the rule's.
    pub fn fixed_by(mut self, fix: impl Into<String>) -> Self {
        self.fix = fix.into();
        self
    }

    /// The same finding with another severity than the rule's default.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// The whole message as one text: the scenario, what happens, then the evidence on
    /// the following lines (what the JSON, SARIF and GitHub outputs carry).
    pub fn full_message(&self) -> String {
        let mut text = match &self.scenario {
            Some(scenario) => format!("on {scenario}: {}", self.message),
            None => self.message.clone(),
        };
        if let Some(evidence) = &self.evidence {
            text.push('\n');
            text.push_str(evidence);
        }
        text
    }
}
