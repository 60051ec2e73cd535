//! `chatplate lint`'s text and GitHub outputs. Text is for people and reads at 80
//! columns: each template, then each finding with its severity, rule id and place,
//! what happens, the conversation, the rendered evidence and the fix, wrapped; then one
//! summary line. GitHub's is one workflow command per finding (`::error file=...,
//! line=...::message`), which Actions shows on the template's lines.

use chatplate_core::lint::{Finding, Policy, Severity, TemplateLint};

/// The width text output is wrapped to.
const WIDTH: usize = 80;

/// The text report.
pub(super) fn text(reports: &[TemplateLint], policy: &Policy) -> String {
    let mut out = String::new();
    for report in reports {
        out.push_str(&format!("{} ({})\n", report.name, report.origin));
        if let Some(error) = &report.error {
            wrap_into(&mut out, &format!("could not lint: {error}"), "  ");
        } else if report.findings.is_empty() {
            out.push_str("  no findings\n");
        }
        for finding in &report.findings {
            finding_text(&mut out, report, finding);
        }
        for note in &report.notes {
            wrap_into(&mut out, &format!("note: {note}"), "  ");
        }
    }
    out.push_str(&summary(reports, policy));
    out
}

fn finding_text(out: &mut String, report: &TemplateLint, finding: &Finding) {
    let mut head = format!("  {}[{}]", finding.severity, finding.rule);
    if let Some(at) = finding.location {
        match (&report.file, report.lines_in_file) {
            (Some(file), true) => {
                let file = file.strip_prefix(".").unwrap_or(file);
                head.push_str(&format!(" at {}:{}:{}", file.display(), at.line, at.column));
            }
            _ => head.push_str(&format!(
                " at template line {}, column {}",
                at.line, at.column
            )),
        }
    }
    out.push_str(&head);
    out.push('\n');
    wrap_into(out, &finding.message, "    ");
    if let Some(scenario) = &finding.scenario {
        wrap_into(out, &format!("on: {scenario}"), "    ");
    }
    if let Some(evidence) = &finding.evidence {
        for line in evidence.lines() {
            cut_into(out, line, "    ");
        }
    }
    wrap_into(out, &format!("fix: {}", finding.fix), "    ");
}

/// `N templates: E errors, W warnings, I info` and what fails the run.
fn summary(reports: &[TemplateLint], policy: &Policy) -> String {
    let count = |severity: Severity| -> usize {
        (reports.iter())
            .map(|r| r.findings.iter().filter(|f| f.severity == severity).count())
            .sum()
    };
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut text = format!(
        "\n{}: {}, {}, {} info",
        plural(reports.len(), "template", "templates"),
        plural(count(Severity::Error), "error", "errors"),
        plural(count(Severity::Warning), "warning", "warnings"),
        count(Severity::Info),
    );
    let unlinted = reports.iter().filter(|r| r.error.is_some()).count();
    if unlinted > 0 {
        text.push_str(&format!(", {unlinted} could not be linted"));
    }
    text.push_str(&format!(" (fails on {})\n", policy.fail_on));
    text
}

/// `text` wrapped at [`WIDTH`] on spaces, every line starting with `indent`.
fn wrap_into(out: &mut String, text: &str, indent: &str) {
    let room = WIDTH.saturating_sub(indent.len()).max(20);
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in words(paragraph).iter().flat_map(|w| pieces(w, room)) {
            let width = line.chars().count() + 1 + word.chars().count();
            if !line.is_empty() && width > room {
                out.push_str(&format!("{indent}{line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&word);
        }
        out.push_str(&format!("{indent}{line}\n"));
    }
}

/// `word` cut after its Jinja tags (`%}`, `}}`) into pieces of at most `room` characters
/// where it is longer; a piece without such a place stays whole.
fn pieces(word: &str, room: usize) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = word;
    while rest.chars().count() > room {
        let cut = (rest.match_indices("%}").chain(rest.match_indices("}}")))
            .map(|(at, _)| at + 2)
            .filter(|&end| rest[..end].chars().count() <= room && end < rest.len())
            .max();
        let Some(cut) = cut else {
            break;
        };
        found.push(rest[..cut].to_string());
        rest = &rest[cut..];
    }
    found.push(rest.to_string());
    found
}

/// The words of `text`, a Jinja tag or expression (`{% generation %}`, `{{ x }}`) kept
/// as one.
fn words(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut in_tag = false;
    for word in text.split(' ') {
        match found.last_mut() {
            Some(last) if in_tag => {
                last.push(' ');
                last.push_str(word);
            }
            _ => found.push(word.to_string()),
        }
        // The last delimiter in the word decides: `}}{%` opens, `{{x}}` closes.
        let last = |marks: [&str; 2]| marks.iter().filter_map(|m| word.rfind(m)).max();
        match (last(["{%", "{{"]), last(["%}", "}}"])) {
            (Some(open), Some(close)) => in_tag = open > close,
            (Some(_), None) => in_tag = true,
            (None, Some(_)) => in_tag = false,
            (None, None) => {}
        }
    }
    found
}

/// Evidence (quoted render excerpts) cut into lines of [`WIDTH`], the rest of each
/// line under its start.
fn cut_into(out: &mut String, line: &str, indent: &str) {
    let room = WIDTH.saturating_sub(indent.len()).max(20);
    let chars: Vec<char> = line.chars().collect();
    // Continuation lines start under the quoted excerpt (`cached: "...`).
    let label = chars.iter().position(|c| *c == '"').unwrap_or(0);
    let hang = " ".repeat(if label < room / 2 { label } else { 0 });
    let mut start = 0;
    let mut first = true;
    while start < chars.len() {
        let take = if first { room } else { room - hang.len() };
        let end = (start + take).min(chars.len());
        let piece: String = chars[start..end].iter().collect();
        let lead = if first { "" } else { hang.as_str() };
        out.push_str(&format!("{indent}{lead}{piece}\n"));
        start = end;
        first = false;
    }
}

/// One GitHub Actions workflow command per finding, and one per template that could
/// not be linted.
pub(super) fn github(reports: &[TemplateLint]) -> String {
    let mut out = String::new();
    for report in reports {
        if let Some(error) = &report.error {
            let message = format!("{}: could not lint: {error}", report.name);
            out.push_str(&format!(
                "::error title=chatplate lint::{}\n",
                data(&message)
            ));
        }
        for finding in &report.findings {
            out.push_str(&annotation(report, finding));
        }
    }
    out
}

fn annotation(report: &TemplateLint, finding: &Finding) -> String {
    let level = match finding.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    let mut properties = Vec::new();
    if let Some(file) = &report.file {
        let file = file.strip_prefix(".").unwrap_or(file);
        properties.push(format!("file={}", property(&file.display().to_string())));
        if let (Some(at), true) = (finding.location, report.lines_in_file) {
            properties.push(format!("line={}", at.line));
            properties.push(format!("col={}", at.column));
        }
    }
    properties.push(format!(
        "title={}",
        property(&format!("chatplate lint: {}", finding.rule))
    ));
    let mut message = format!("{}: {}", report.name, finding.full_message());
    if let (Some(at), false) = (finding.location, report.lines_in_file) {
        message.push_str(&format!(
            "\n(template line {}, column {})",
            at.line, at.column
        ));
    }
    message.push_str(&format!("\nFix: {}", finding.fix));
    format!("::{level} {}::{}\n", properties.join(","), data(&message))
}

/// A workflow command's message, escaped as the runner reads it.
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value, escaped as the runner reads it.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_lines_within_80_columns() {
        let mut out = String::new();
        let long = "word ".repeat(40);
        wrap_into(&mut out, long.trim(), "    ");
        cut_into(
            &mut out,
            &format!("cached: \"{}\"", "x".repeat(200)),
            "    ",
        );
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(out.lines().count() > 4);
    }

    #[test]
    fn jinja_tags_and_expressions_stay_on_one_line() {
        let text = "fix: {% if a is string %}{{ a }}{% else %}{{ a | tojson }}{% endif %} or not";
        let found = words(text);
        assert_eq!(
            found[1],
            "{% if a is string %}{{ a }}{% else %}{{ a | tojson }}{% endif %}"
        );
        assert_eq!(found.len(), 4);
    }

    #[test]
    fn workflow_commands_escape_what_the_runner_reads() {
        assert_eq!(data("50%\nnext"), "50%25%0Anext");
        assert_eq!(property("a:b,c"), "a%3Ab%2Cc");
    }
}
