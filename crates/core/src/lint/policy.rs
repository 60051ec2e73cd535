//! Which rules run, which are raised to errors, and from which severity a run fails:
//! `--allow`, `--deny`, `--fail-on`, and the config file's `"lint"` section, which the
//! flags extend (a flag wins over the file for the same rule).

use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::{Finding, Rule, Severity};

/// The config file's section name.
pub const CONFIG_SECTION: &str = "lint";

/// What a run checks and when it fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    allowed: BTreeSet<Rule>,
    denied: BTreeSet<Rule>,
    /// Findings at or above this severity fail the run (exit 1).
    pub fail_on: Severity,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allowed: BTreeSet::new(),
            denied: BTreeSet::new(),
            fail_on: Severity::Error,
        }
    }
}

impl Policy {
    /// Turns `rule` off. `sandbox-escape` cannot be: a template reaching for Python's
    /// internals is hostile whatever a config says.
    pub fn allow(&mut self, rule: Rule) -> Result<(), String> {
        if rule == Rule::SandboxEscape {
            return Err(format!(
                "{rule} cannot be allowed: access to Python internals is always an error"
            ));
        }
        self.denied.remove(&rule);
        self.allowed.insert(rule);
        Ok(())
    }

    /// Raises `rule`'s findings to errors (and turns it on if it was allowed).
    pub fn deny(&mut self, rule: Rule) {
        self.allowed.remove(&rule);
        self.denied.insert(rule);
    }

    /// Whether `rule` runs at all.
    pub fn runs(&self, rule: Rule) -> bool {
        !self.allowed.contains(&rule)
    }

    /// The rules turned off.
    pub fn allowed(&self) -> impl Iterator<Item = Rule> + '_ {
        self.allowed.iter().copied()
    }

    /// The findings this policy keeps, with denied rules raised to errors.
    pub fn apply(&self, findings: Vec<Finding>) -> Vec<Finding> {
        findings
            .into_iter()
            .filter(|finding| self.runs(finding.rule))
            .map(|finding| {
                if self.denied.contains(&finding.rule) {
                    finding.with_severity(Severity::Error)
                } else {
                    finding
                }
            })
            .collect()
    }

    /// Whether `findings` fail the run.
    pub fn fails<'f>(&self, findings: impl IntoIterator<Item = &'f Finding>) -> bool {
        findings.into_iter().any(|f| f.severity >= self.fail_on)
    }

    /// The policy of a config file's `"lint"` section:
    /// `{"allow": [RULE...], "deny": [RULE...], "fail_on": "error"|"warning"|"info"}`.
    pub fn from_config(section: &Json) -> Result<Policy, String> {
        let Json::Object(entries) = section else {
            return Err(format!(
                "\"{CONFIG_SECTION}\" must be an object with \"allow\", \"deny\" and \"fail_on\""
            ));
        };
        let mut policy = Policy::default();
        for (key, value) in entries {
            match key.as_str() {
                "allow" => {
                    for rule in rules(key, value)? {
                        policy.allow(rule).map_err(|e| format!("{CONFIG_SECTION}.allow: {e}"))?;
                    }
                }
                "deny" => rules(key, value)?.into_iter().for_each(|r| policy.deny(r)),
                "fail_on" => {
                    let text = value.as_str().ok_or_else(|| {
                        format!("{CONFIG_SECTION}.fail_on: expected \"error\", \"warning\" or \"info\"")
                    })?;
                    policy.fail_on = text
                        .parse()
                        .map_err(|e| format!("{CONFIG_SECTION}.fail_on: {e}"))?;
                }
                other => {
                    return Err(format!(
                        "{CONFIG_SECTION}: unknown key {other:?} (expected \"allow\", \"deny\" or \"fail_on\")"
                    ))
                }
            }
        }
        Ok(policy)
    }
}

/// A list of rule ids.
fn rules(key: &str, value: &Json) -> Result<Vec<Rule>, String> {
    let list = value
        .as_array()
        .ok_or_else(|| format!("{CONFIG_SECTION}.{key}: expected a list of rule ids"))?;
    list.iter()
        .map(|item| {
            let id = item
                .as_str()
                .ok_or_else(|| format!("{CONFIG_SECTION}.{key}: expected a list of rule ids"))?;
            id.parse()
                .map_err(|e| format!("{CONFIG_SECTION}.{key}: {e}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn allowed_rules_vanish_and_denied_ones_become_errors() {
        let mut policy = Policy::default();
        policy.allow(Rule::Clock).unwrap();
        policy.deny(Rule::PrefixUnstable);
        let kept = policy.apply(vec![
            Finding::new(Rule::Clock, "date"),
            Finding::new(Rule::PrefixUnstable, "moved"),
            Finding::new(Rule::ZeroMask, "none"),
        ]);
        let shown: Vec<(Rule, Severity)> = kept.iter().map(|f| (f.rule, f.severity)).collect();
        assert_eq!(
            shown,
            [
                (Rule::PrefixUnstable, Severity::Error),
                (Rule::ZeroMask, Severity::Info)
            ]
        );
        assert!(policy.fails(&kept));
        assert!(!Policy::default().fails(&kept[1..]));
    }

    #[test]
    fn sandbox_escape_cannot_be_allowed() {
        let err = Policy::default().allow(Rule::SandboxEscape).unwrap_err();
        assert!(err.contains("always an error"), "{err}");
        let config = Policy::from_config(&json!({"allow": ["sandbox-escape"]}));
        assert!(config.unwrap_err().contains("always an error"));
    }

    #[test]
    fn the_config_section_reads_every_key_and_names_mistakes() {
        let policy = Policy::from_config(
            &json!({"allow": ["clock"], "deny": ["double-bos"], "fail_on": "warning"}),
        )
        .unwrap();
        assert!(!policy.runs(Rule::Clock));
        assert_eq!(policy.fail_on, Severity::Warning);
        let bad = |value: Json| Policy::from_config(&value).unwrap_err();
        assert!(bad(json!({"allow": ["nope"]})).contains("no rule \"nope\""));
        assert!(bad(json!({"fail_on": "fatal"})).contains("lint.fail_on"));
        assert!(bad(json!({"ignore": []})).contains("unknown key"));
        assert!(bad(json!([])).contains("must be an object"));
    }
}
