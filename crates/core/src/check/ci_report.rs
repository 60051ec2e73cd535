//! Check results as machine-readable reports for CI: JSON, and JUnit XML for test
//! dashboards. Pure formatting over [`CaseResult`]s (whichever way they were checked:
//! in process or in isolated child processes); `chatplate check --format` prints them.
//! The human report of each failed case ([`report`]) is their detail text. Both are
//! written through [`machine_output`], so no control character from a fixture's name, a
//! note or an error reaches a CI log raw.

use serde_json::{json, Value as Json};

use super::{report, CaseResult, Outcome};
use crate::machine_output::{self, xml_attribute, xml_text};

/// A short, stable name for an outcome (`pass`, `mismatch`, `broken`, ...).
pub(crate) fn outcome_name(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "pass",
        Outcome::Blessed => "blessed",
        Outcome::Mismatch { .. } => "mismatch",
        Outcome::UnexpectedError(_) => "unexpected_error",
        Outcome::UnexpectedPrompt(_) => "unexpected_prompt",
        Outcome::WrongError { .. } => "wrong_error",
        Outcome::WrongException { .. } => "wrong_exception",
        Outcome::NoExpectation => "no_expectation",
        Outcome::Broken(_) => "broken",
        Outcome::Crashed(_) => "crashed",
        Outcome::Skipped(_) => "skipped",
        Outcome::TokensDiffer(_) => "tokens_differ",
        Outcome::NotPrefixStable(_) => "not_prefix_stable",
        Outcome::RoundTrip { .. } => "round_trip",
        Outcome::StreamRoundTrip(_) => "stream_round_trip",
        Outcome::TokenRoundTrip(_) => "token_round_trip",
        Outcome::TemplateChanged { .. } => "template_changed",
        Outcome::EnginesDisagree { .. } => "engines_disagree",
    }
}

/// The results as one JSON document:
/// `{"passed": N, "failed": N, "skipped": N, "cases": [{"path", "outcome", "passed",
/// "detail"}]}`. `detail` is the human report of a case that did not pass (`null` for
/// passes).
pub fn json(results: &[CaseResult]) -> String {
    let cases: Vec<Json> = results
        .iter()
        .map(|result| {
            let passed = result.outcome.passed();
            json!({
                "path": result.path.display().to_string(),
                "outcome": outcome_name(&result.outcome),
                "passed": passed,
                "detail": (!passed).then(|| report(result)),
                "notes": result.notes,
            })
        })
        .collect();
    let count = |test: fn(&Outcome) -> bool| results.iter().filter(|r| test(&r.outcome)).count();
    let document = json!({
        "passed": count(Outcome::passed),
        "failed": count(Outcome::failed),
        "skipped": count(|o| matches!(o, Outcome::Skipped(_))),
        "cases": cases,
    });
    let mut text = machine_output::to_json_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}

/// The results as a JUnit XML report: one `<testcase>` per fixture, a `<failure>` for a
/// prompt or error that differs from `expected`, an `<error>` for a fixture that could
/// not be loaded or whose check crashed, a `<skipped>` for a file that is not a fixture.
/// Control characters XML 1.0 cannot carry are written as `\u{001b}` (see
/// [`machine_output::xml_text`]).
pub fn junit(results: &[CaseResult], suite: &str) -> String {
    let count = |element: &str| {
        results
            .iter()
            .filter(|r| element_of(&r.outcome) == Some(element))
            .count()
    };
    let (failures, errors, skipped) = (count("failure"), count("error"), count("skipped"));
    let header = format!(
        "<testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" \
         skipped=\"{skipped}\">",
        xml_attribute(suite),
        results.len()
    );
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  ");
    out.push_str(&header);
    out.push('\n');
    for result in results {
        out.push_str(&testcase(result, suite));
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn testcase(result: &CaseResult, suite: &str) -> String {
    let name = xml_attribute(&result.path.display().to_string());
    let open = format!(
        "    <testcase classname=\"{}\" name=\"{name}\"",
        xml_attribute(suite)
    );
    let Some(element) = element_of(&result.outcome) else {
        return format!("{open}/>\n");
    };
    let detail = report(result);
    let summary = detail.lines().next().unwrap_or_default();
    format!(
        "{open}>\n      <{element} type=\"{}\" message=\"{}\">{}</{element}>\n    </testcase>\n",
        outcome_name(&result.outcome),
        xml_attribute(summary),
        xml_text(&detail)
    )
}

/// The JUnit element a case reports, `None` for a pass.
fn element_of(outcome: &Outcome) -> Option<&'static str> {
    match outcome {
        _ if outcome.passed() => None,
        Outcome::Skipped(_) => Some("skipped"),
        Outcome::Broken(_) | Outcome::Crashed(_) => Some("error"),
        _ => Some("failure"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn results() -> Vec<CaseResult> {
        vec![
            CaseResult {
                path: PathBuf::from("a.json"),
                outcome: Outcome::Pass,
                notes: Vec::new(),
            },
            CaseResult {
                path: PathBuf::from("b<&>.json"),
                outcome: Outcome::UnexpectedPrompt("x\u{1}".into()),
                notes: Vec::new(),
            },
            CaseResult {
                path: PathBuf::from("c.json"),
                outcome: Outcome::Broken("no such file".into()),
                notes: Vec::new(),
            },
        ]
    }

    #[test]
    fn junit_counts_failures_and_errors_and_escapes() {
        let xml = junit(&results(), "chatplate check");
        assert!(
            xml.contains("tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\""),
            "{xml}"
        );
        assert!(xml.contains("<testcase classname=\"chatplate check\" name=\"a.json\"/>"));
        assert!(xml.contains("name=\"b&lt;&amp;&gt;.json\""), "{xml}");
        assert!(xml.contains("<error type=\"broken\""), "{xml}");
        assert!(!xml.contains('\u{1}'));
    }

    #[test]
    fn json_lists_every_case() {
        let document: Json = serde_json::from_str(&json(&results())).unwrap();
        assert_eq!(document["passed"], 1);
        assert_eq!(document["failed"], 2);
        assert_eq!(document["cases"][1]["outcome"], "unexpected_prompt");
        assert_eq!(document["cases"][0]["detail"], Json::Null);
    }

    /// A fixture named and noted with CSI (U+009B), NEL (U+0085), DEL and NUL.
    fn hostile() -> Vec<CaseResult> {
        vec![CaseResult {
            path: PathBuf::from("x\u{9b}2J\u{85}\u{7f}\u{0}.json"),
            outcome: Outcome::Broken("no\u{9b} such\u{0} file".into()),
            notes: vec!["note \u{9b}\u{85}\u{7f}\u{0}".into()],
        }]
    }

    fn raw_controls(text: &str) -> Vec<char> {
        let raw = |c: char| c.is_control() && !matches!(c, '\n' | '\t');
        text.chars().filter(|&c| raw(c)).collect()
    }

    #[test]
    fn json_escapes_c1_and_del_and_keeps_the_values() {
        let text = json(&hostile());
        assert_eq!(raw_controls(&text), [], "{text:?}");
        let document: Json = serde_json::from_str(&text).unwrap();
        assert_eq!(
            document["cases"][0]["path"],
            "x\u{9b}2J\u{85}\u{7f}\u{0}.json"
        );
        assert_eq!(
            document["cases"][0]["notes"][0],
            "note \u{9b}\u{85}\u{7f}\u{0}"
        );
    }

    #[test]
    fn junit_references_c1_and_shows_c0() {
        let xml = junit(&hostile(), "chatplate check");
        assert_eq!(raw_controls(&xml), [], "{xml:?}");
        assert!(
            xml.contains("name=\"x&#x9B;2J&#x85;&#x7F;\\u{0000}.json\""),
            "{xml}"
        );
    }
}
