//! `gguf-drift`: a GGUF carries a copy of its model's chat template from the day it was
//! converted; when the model's template has been fixed since, the GGUF still serves the
//! old one (llama.cpp renders what the file carries). The copy is compared with the
//! model folder beside the file, else with the Hugging Face cache's snapshot of the
//! model its metadata names, ignoring only trailing whitespace and line endings.

use super::lab::Lab;
use super::{Finding, Location, Rule};
use crate::diff::{diff_lines, DiffLine};

/// Most diff lines shown as evidence.
const SHOWN_LINES: usize = 12;

/// The finding, when the two texts differ.
pub(crate) fn check(lab: &Lab) -> Vec<Finding> {
    let Some(current) = &lab.surroundings.current else {
        return Vec::new();
    };
    let embedded = normalized(lab.template.source());
    let now = normalized(&current.text);
    if embedded == now {
        return Vec::new();
    }
    let lines = diff_lines(&now, &embedded);
    let changed = lines.iter().filter(|l| l.is_change()).count();
    let mut line = 1;
    let mut first = None;
    for entry in &lines {
        match entry {
            DiffLine::Same(_) => line += 1,
            DiffLine::Added(_) | DiffLine::Removed(_) => {
                first = Some(Location { line, column: 1 });
                break;
            }
        }
    }
    let evidence: Vec<String> = lines
        .iter()
        .filter(|l| l.is_change())
        .take(SHOWN_LINES)
        .map(|l| match l {
            DiffLine::Removed(text) => format!("- {}", text.trim_end()),
            DiffLine::Added(text) => format!("+ {}", text.trim_end()),
            DiffLine::Same(text) => format!("  {}", text.trim_end()),
        })
        .collect();
    let mut evidence = evidence.join("\n");
    if changed > SHOWN_LINES {
        evidence.push_str(&format!("\n… {} more changed lines", changed - SHOWN_LINES));
    }
    let finding = Finding::new(
        Rule::GgufDrift,
        format!(
            "the GGUF's embedded template differs from the current one in {} ({changed} \
             changed lines; - current, + GGUF)",
            current.label
        ),
    )
    .at(first)
    .showing(evidence);
    vec![finding]
}

/// The text with `\r\n` as `\n` and no trailing whitespace.
fn normalized(text: &str) -> String {
    text.replace("\r\n", "\n").trim_end().to_string()
}
