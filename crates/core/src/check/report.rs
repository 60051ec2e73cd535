//! How check results are shown: one block per failure, with the diff of
//! [`crate::diff::marked_diff`] (whitespace and changed characters made visible).

use chatplate_render::remedy::{means, Knob};
use chatplate_render::visible;

use super::{CaseResult, Drift, Outcome};
use crate::diff;

/// A human-readable report for one case, its notes last. Everything that comes from the
/// fixture or the template (error messages, paths, prompts) has its control characters
/// escaped, so a fixture cannot send escape sequences to the terminal or a CI log.
pub fn report(result: &CaseResult) -> String {
    report_with(result, false)
}

/// Like [`report`]; `color` paints the diff with basic SGR codes (else the changed
/// characters get a `^` line).
pub fn report_with(result: &CaseResult, color: bool) -> String {
    let mut text = outcome_report(result, color);
    for note in &result.notes {
        text.push_str(&format!("\nnote: {}", visible::message(note)));
    }
    text
}

fn outcome_report(result: &CaseResult, color: bool) -> String {
    report_outcome(result, &result.outcome, color)
}

fn report_outcome(result: &CaseResult, outcome: &Outcome, color: bool) -> String {
    let path = visible::for_terminal(&result.path.display().to_string()).into_owned();
    let text = |t: &str| visible::message(t);
    match outcome {
        Outcome::Pass | Outcome::Blessed => format!("ok {path}"),
        Outcome::Skipped(why) => format!("skip {path}: {}", text(why)),
        Outcome::Mismatch { expected, actual } => {
            format!(
                "FAIL {path}: prompt differs\n{}",
                diff::marked_diff(expected, actual, color)
            )
        }
        Outcome::UnexpectedError(err) => {
            format!(
                "FAIL {path}: expected a prompt, got an error\n{}",
                text(err)
            )
        }
        Outcome::UnexpectedPrompt(got) => format!(
            "FAIL {path}: expected an error, got a prompt\n{}",
            diff::prompt_head(got)
        ),
        Outcome::WrongError { expected, actual } => {
            format!(
                "FAIL {path}: error lacks {}\n{}",
                visible::quoted(expected),
                text(actual)
            )
        }
        Outcome::WrongException { expected, actual } => {
            format!(
                "FAIL {path}: expected the exception {}\n{}",
                visible::quoted(expected),
                text(actual)
            )
        }
        Outcome::NoExpectation => {
            format!(
                "FAIL {path}: no \"expected\" (run with {} to record it)",
                means(Knob::Bless)
            )
        }
        // A session error names the file itself (`FILE:LINE:COL: ...`): not twice.
        Outcome::Broken(err) if err.starts_with(&format!("{}:", result.path.display())) => {
            format!("FAIL {}", text(err))
        }
        Outcome::Broken(err) => format!("FAIL {path}: {}", text(err)),
        Outcome::TokensDiffer(difference) => {
            format!("FAIL {path}: tokens differ: {}", text(difference))
        }
        Outcome::NotPrefixStable(report) => {
            format!("FAIL {path}: assert_prefix_stable: {}", text(report))
        }
        Outcome::StreamRoundTrip(report) => {
            format!("FAIL {path}: assert_stream_round_trip: {}", text(report))
        }
        Outcome::RoundTrip {
            message,
            problem,
            expected,
            actual,
        } => {
            let mut report = format!(
                "FAIL {path}: assert_round_trip: messages[{message}] {}",
                text(problem)
            );
            if !expected.is_empty() || !actual.is_empty() {
                report.push('\n');
                report.push_str(&diff::marked_diff(expected, actual, color));
            }
            report
        }
        Outcome::TokenRoundTrip(report) => {
            format!("FAIL {path}: assert_token_round_trip: {}", text(report))
        }
        Outcome::EnginesDisagree { reference, renders } => format!(
            "FAIL {path}: {}",
            super::engines::report(reference, renders, color)
        ),
        Outcome::TemplateChanged { drift, outcome } => {
            // One FAIL line per fixture: the failure itself follows as "and: ...".
            let failure = report_outcome(result, outcome, color);
            let failure = failure
                .strip_prefix(&format!("FAIL {path}: "))
                .unwrap_or(&failure);
            format!(
                "FAIL {path}: {}\n{}and: {failure}",
                text(&drift.summary()),
                template_diff(drift, color),
            )
        }
        Outcome::Crashed(err) => format!(
            "FAIL {path}: chatplate crashed on this fixture (a bug: please report it)\n{}",
            text(err)
        ),
    }
}

/// The template's own diff, from the blessed text to today's, when the old text was found.
fn template_diff(drift: &Drift, color: bool) -> String {
    match &drift.previous {
        Ok(previous) => format!(
            "template diff (blessed -> now):\n{}",
            diff::marked_diff(&previous.text, &drift.template, color)
        ),
        Err(_) => String::new(),
    }
}
