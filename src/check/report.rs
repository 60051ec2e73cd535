//! How check results are shown: one block per failure, with a line diff that makes
//! whitespace and control characters visible.

use crate::diff::{diff_lines, DiffLine};
use crate::visible::{self, visible_whitespace};

use super::{CaseResult, Outcome};

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
    let path = visible::for_terminal(&result.path.display().to_string()).into_owned();
    let text = |t: &str| visible::message(t);
    match &result.outcome {
        Outcome::Pass | Outcome::Blessed => format!("ok {path}"),
        Outcome::Skipped(why) => format!("skip {path}: {}", text(why)),
        Outcome::Mismatch { expected, actual } => {
            format!(
                "FAIL {path}: prompt differs\n{}",
                super::marks::marked_diff(expected, actual, color)
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
            super::marks::prompt_head(got)
        ),
        Outcome::WrongError { expected, actual } => {
            format!(
                "FAIL {path}: error lacks {}\n{}",
                visible::quoted(expected),
                text(actual)
            )
        }
        Outcome::NoExpectation => {
            format!("FAIL {path}: no \"expected\" (run with --bless to record it)")
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
        Outcome::Crashed(err) => format!(
            "FAIL {path}: chatplate crashed on this fixture (a bug: please report it)\n{}",
            text(err)
        ),
    }
}

/// A line diff with whitespace made visible: `-` expected, `+` actual, two lines of
/// context around each change and `@@ line N @@` (of the expected prompt) per hunk.
pub fn line_diff(expected: &str, actual: &str) -> String {
    let lines = diff_lines(expected, actual);
    let near_change = |index: usize| {
        let from = index.saturating_sub(CONTEXT);
        let to = (index + CONTEXT + 1).min(lines.len());
        lines[from..to]
            .iter()
            .any(|l| !matches!(l, DiffLine::Same(_)))
    };
    let mut out = String::new();
    let (mut expected_line, mut in_hunk) = (1, false);
    for (index, line) in lines.iter().enumerate() {
        if !near_change(index) {
            in_hunk = false;
        } else {
            if !in_hunk {
                out.push_str(&format!("@@ line {expected_line} @@\n"));
                in_hunk = true;
            }
            let (mark, text) = match line {
                DiffLine::Same(text) => (' ', text),
                DiffLine::Removed(text) => ('-', text),
                DiffLine::Added(text) => ('+', text),
            };
            push_line(&mut out, mark, text);
        }
        if !matches!(line, DiffLine::Added(_)) {
            expected_line += 1;
        }
    }
    out
}

/// Unchanged lines shown around each change.
const CONTEXT: usize = 2;

/// Longest prompt line shown in a diff, in characters (prompts often carry a whole
/// tool list on one line; a fixture could carry megabytes).
const MAX_DIFF_LINE_CHARS: usize = 20_000;

fn push_line(out: &mut String, mark: char, line: &str) {
    out.push(mark);
    out.push(' ');
    let shown = visible_whitespace(&visible::cut(line, MAX_DIFF_LINE_CHARS));
    out.push_str(shown.trim_end_matches('\n'));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_shows_changed_lines_with_visible_whitespace() {
        let diff = line_diff("a\nb \nc\n", "a\nb\nc\n");
        assert_eq!(diff, "@@ line 1 @@\n  a␊\n- b·␊\n+ b␊\n  c␊\n");
        let far_apart = line_diff("1\n2\n3\n4\n5\n6\n7\n8\n", "x\n2\n3\n4\n5\n6\n7\ny\n");
        assert_eq!(
            far_apart,
            "@@ line 1 @@\n- 1␊\n+ x␊\n  2␊\n  3␊\n@@ line 6 @@\n  6␊\n  7␊\n- 8␊\n+ y␊\n"
        );
    }
}
