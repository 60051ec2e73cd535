//! `portability`: constructs that fail or render differently in the engines that serve
//! chat templates besides transformers: bare MiniJinja (Rust servers), @huggingface/jinja
//! (transformers.js, the Hub) and llama.cpp's own engine.
//!
//! Two sources, both general:
//! * the engines themselves, when the run names them ([`super::LintOptions::engines`]):
//!   the claimed conversations rendered in each and set beside chatplate's render,
//!   differences classified by `compare::causes`;
//! * otherwise a table of constructs (`portability.json`, one small probe template per
//!   filter, test, method, tag or syntax) with what each engine, at the version named in
//!   the table, did with the probe: the template's tokens say which constructs it uses.
//!   The table is made and checked against the real engines by the `portability_table`
//!   test (`CHATPLATE_BLESS_PORTABILITY=1` rewrites it).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::lab::Lab;
use super::scenarios::Scenario;
use super::{Finding, Rule};
use crate::compare::causes::classify;
use crate::compare::{self, Engine, EngineError, EngineSetup};
use crate::inspect::text::common_prefix_len;
use crate::inspect::{text_excerpt, Cancelled};
use chatplate_render::Conversation;

/// The table, as committed.
const TABLE: &str = include_str!("portability.json");

/// What each engine did with each construct's probe.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortabilityTable {
    /// Engine name → the version the table was made with.
    pub engines: BTreeMap<String, String>,
    /// Construct (`filter:tojson`, `method:strip`, ...) → its probe and outcomes.
    pub constructs: BTreeMap<String, ConstructOutcomes>,
}

/// One construct's probe and what each engine did with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstructOutcomes {
    /// The probe template.
    pub probe: String,
    /// Engine name → `ok`, `differs: CAUSE (...)` or `fails: MESSAGE`.
    pub outcomes: BTreeMap<String, String>,
}

impl PortabilityTable {
    /// The committed table.
    pub fn committed() -> &'static PortabilityTable {
        static PARSED: OnceLock<PortabilityTable> = OnceLock::new();
        PARSED.get_or_init(|| serde_json::from_str(TABLE).unwrap_or_default())
    }
}

/// The engines the table covers, in its column order.
pub const TABLE_ENGINES: [Engine; 3] = [Engine::MiniJinja, Engine::HfJinja, Engine::LlamaCpp];

/// The findings: from the engines named, else from the table.
pub(crate) fn check(
    lab: &Lab,
    scenarios: &[Scenario],
    engines: &[Engine],
    setup: &EngineSetup,
) -> Result<Vec<Finding>, Cancelled> {
    let mut findings = Vec::new();
    let mut measured = Vec::new();
    for &engine in engines {
        if let Some(found) = rendered(lab, scenarios, engine, setup)? {
            measured.push(engine);
            findings.extend(found);
        }
    }
    findings.extend(from_table(lab, &measured));
    Ok(findings)
}

/// The table's verdicts on the constructs the template uses, for the engines not
/// measured in this run.
fn from_table(lab: &Lab, measured: &[Engine]) -> Vec<Finding> {
    let table = PortabilityTable::committed();
    let mut findings = Vec::new();
    for (construct, location) in lab.scan.constructs() {
        let Some(entry) = table.constructs.get(&construct.0) else {
            continue;
        };
        let bad: Vec<String> = (entry.outcomes.iter())
            .filter(|(engine, outcome)| {
                *outcome != "ok" && !measured.iter().any(|m| m.name() == engine.as_str())
            })
            .map(|(engine, outcome)| {
                let version = table.engines.get(engine).map_or("", String::as_str);
                let what = match outcome.strip_prefix("differs: ") {
                    Some(cause) => format!("renders differently ({cause})"),
                    None => outcome.clone(),
                };
                format!("{engine} ({version}) {what}")
            })
            .collect();
        if bad.is_empty() {
            continue;
        }
        let finding = Finding::new(
            Rule::Portability,
            format!("{} {}", shown(&construct.0), bad.join("; ")),
        )
        .at(Some(location));
        findings.push(finding);
    }
    findings
}

/// `filter:tojson` as `the tojson filter`.
fn shown(construct: &str) -> String {
    let (kind, name) = construct.split_once(':').unwrap_or(("", construct));
    match kind {
        "keyword" => {
            let (filter, keyword) = name.split_once('.').unwrap_or((name, ""));
            format!("{filter}({keyword}=...)")
        }
        "syntax" => name.replace('-', " "),
        "tag" => format!("{{% {name} %}}"),
        "loop" => format!("loop.{name}"),
        "method" => format!(".{}", name.replace("(x)", "(...)")),
        "function" => format!("{name}()"),
        _ => format!("the {name} {kind}"),
    }
}

/// The claimed conversations in `engine`, against chatplate's renders; `None` when the
/// engine is not there (the table answers for it).
fn rendered(
    lab: &Lab,
    scenarios: &[Scenario],
    engine: Engine,
    setup: &EngineSetup,
) -> Result<Option<Vec<Finding>>, Cancelled> {
    for scenario in scenarios {
        let probe = scenario.request();
        let reference = lab.render(&probe)?;
        let conversation = Conversation::new(probe.messages.clone())
            .with_tools(probe.tools.clone())
            .with_generation_prompt(probe.add_generation_prompt)
            .with_variables(lab.settings.variables.clone())
            .with_clock(Some(lab.settings.clock));
        let other = compare::render(engine, lab.template.source(), &conversation, setup);
        if let Err(EngineError::NotInstalled { .. }) = &other.result {
            return Ok(None);
        }
        let want = reference.clone().map_err(|e| e.to_string());
        let got = other.result.clone().map_err(|e| e.to_string());
        let Some(cause) = classify(&want, &got) else {
            continue;
        };
        let evidence = match (&want, &got) {
            (Ok(want), Ok(got)) => {
                let at = common_prefix_len(want, got);
                format!(
                    "transformers: {}\n{:<12}  {}",
                    text_excerpt(want, at.saturating_sub(30), 90),
                    format!("{engine}:"),
                    text_excerpt(got, at.saturating_sub(30), 90)
                )
            }
            (_, Err(err)) => format!("{engine}: {err}"),
            (Err(err), _) => format!("transformers: {err}"),
        };
        let finding = Finding::new(
            Rule::Portability,
            format!("{engine} ({}) {}", other.version, cause.label()),
        )
        .on(probe.describe())
        .showing(evidence);
        return Ok(Some(vec![finding]));
    }
    Ok(Some(Vec::new()))
}
