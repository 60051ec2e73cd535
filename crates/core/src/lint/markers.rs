//! `marker-balance`: special-token-like markers that open a turn or a block must be
//! closed. Markers are found in the renders (`<|x|>`, `<｜x｜>`, `<x>`, `[X]`); a marker
//! and its close are paired by their names (`<x>`/`</x>`, `[X]`/`[/X]`, `start`/`begin`
//! against `end`: `<|im_start|>`/`<|im_end|>`, `<start_of_turn>`/`<end_of_turn>`,
//! `<｜tool▁calls▁begin｜>`/`<｜tool▁calls▁end｜>`), and a pair is checked only when the
//! template itself writes the close somewhere, so prose such as `<function-name>` is no
//! marker.
//!
//! Each claimed conversation is rendered finished (closed by an assistant reply, no
//! generation prompt), where every turn must be closed. The end-of-sequence token
//! closes any open turn; so does a marker right before the next opener or at the very
//! end (harmony's `<|call|>` and `<|return|>` end a message as `<|end|>` does).

use super::crash::FINAL_REPLY;
use super::lab::Lab;
use super::scenarios::{ends_with_reply, Scenario};
use super::{Finding, Rule};
use crate::inspect::{text_excerpt, Cancelled};

/// One marker in a render.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marker {
    /// Its name as a bare marker: `<function=f>` is `<function>`.
    key: String,
    start: usize,
    end: usize,
}

/// An opening marker and its close.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pair {
    open: String,
    close: String,
}

/// The findings: at most one per pair.
pub(crate) fn check(lab: &Lab, scenarios: &[Scenario]) -> Result<Vec<Finding>, Cancelled> {
    let mut findings: Vec<Finding> = Vec::new();
    let mut reported: Vec<Pair> = Vec::new();
    let source = lab.template.source();
    let skip = [lab.bos(), lab.eos()];
    let prose_lines = prose_lines(&lab.scan.literals());
    for scenario in scenarios {
        let probe = if ends_with_reply(&scenario.messages) {
            scenario.request()
        } else {
            scenario.closed(lab.message("assistant", FINAL_REPLY))
        };
        let Ok(text) = lab.render(&probe)? else {
            continue;
        };
        let markers = structural(find(&text), &text, &prose_lines);
        for pair in pairs(&markers, source, &skip) {
            if reported.contains(&pair) {
                continue;
            }
            let Some((problem, at)) = balance(&text, &markers, &pair, lab.eos()) else {
                continue;
            };
            let finding = Finding::new(Rule::MarkerBalance, problem)
                .at(lab.scan.literal(&pair.open))
                .on(probe.describe())
                .showing(format!(
                    "render: {}",
                    text_excerpt(&text, at.saturating_sub(60), 140)
                ));
            findings.push(finding);
            reported.push(pair);
        }
    }
    Ok(findings)
}

/// Every marker-looking piece of `text`, in order.
fn find(text: &str) -> Vec<Marker> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let marker = ["<|", "<｜", "<", "["]
            .iter()
            .filter(|open| rest.starts_with(**open))
            .find_map(|open| marker_at(rest, open));
        match marker {
            Some((len, key)) => {
                found.push(Marker {
                    key,
                    start: at,
                    end: at + len,
                });
                at += len;
            }
            None => at += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    found
}

/// The length and key of the marker starting `rest` with `open`, if it is one.
fn marker_at(rest: &str, open: &str) -> Option<(usize, String)> {
    let close = match open {
        "<|" => "|>",
        "<｜" => "｜>",
        "<" => ">",
        _ => "]",
    };
    let inner_start = open.len();
    let end = rest.get(inner_start..)?.find(close)? + inner_start;
    let inner = &rest[inner_start..end];
    if inner.len() > 48 || inner.contains(['<', '>', '\n']) {
        return None;
    }
    let bare = inner.strip_prefix('/').unwrap_or(inner);
    let key = match open {
        "<" => {
            // `<function=name>`, `<tool name="x">`: the tag's name is the marker.
            let name_len = bare
                .find(|c: char| !(c.is_ascii_alphanumeric() || "_-:.".contains(c)))
                .unwrap_or(bare.len());
            let (name, attributes) = bare.split_at(name_len);
            let named = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
            let attributed = attributes.is_empty() || attributes.starts_with(['=', ' ']);
            if !named || !attributed || (inner.starts_with('/') && !attributes.is_empty()) {
                return None;
            }
            let slash = if inner.starts_with('/') { "/" } else { "" };
            format!("<{slash}{name}>")
        }
        "[" => {
            let upper = bare.len() >= 2
                && bare
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            if !upper {
                return None;
            }
            rest[..end + close.len()].to_string()
        }
        _ => {
            if bare.is_empty() || bare.contains(char::is_whitespace) {
                return None;
            }
            rest[..end + close.len()].to_string()
        }
    };
    Some((end + close.len(), key))
}

/// Lines of the template's own text that mention markers in prose ("see
/// <instruction_priority>", "within <tools></tools> XML tags"), with the offsets (in
/// the line) of the markers mentioned: a marker after a space or an opening bracket,
/// and any marker right after one of those.
fn prose_lines(literals: &[&str]) -> Vec<(String, Vec<usize>)> {
    let mut found = Vec::new();
    for literal in literals {
        for line in literal.lines().map(str::trim) {
            if words(line) < 3 {
                continue;
            }
            let mut mentioned = Vec::new();
            let mut previous_end = None;
            for marker in find(line) {
                let before = line[..marker.start].chars().next_back();
                let in_sentence = matches!(before, Some(' ' | '(' | '"' | '\'' | '`'));
                if in_sentence || previous_end == Some(marker.start) {
                    mentioned.push(marker.start);
                    previous_end = Some(marker.end);
                }
            }
            if !mentioned.is_empty() {
                found.push((line.to_string(), mentioned));
            }
        }
    }
    found
}

/// Runs of two or more letters outside markers: how wordy a line is.
fn words(line: &str) -> usize {
    let mut plain = line.to_string();
    for marker in find(line).iter().rev() {
        plain.replace_range(marker.start..marker.end, " ");
    }
    plain
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|word| word.len() >= 2)
        .count()
}

/// The markers of `text` that are not mentions in the template's prose.
fn structural(markers: Vec<Marker>, text: &str, prose: &[(String, Vec<usize>)]) -> Vec<Marker> {
    let mut mentions = Vec::new();
    for (line, offsets) in prose {
        for (at, _) in text.match_indices(line.as_str()) {
            mentions.extend(offsets.iter().map(|offset| at + offset));
        }
    }
    markers
        .into_iter()
        .filter(|marker| !mentions.contains(&marker.start))
        .collect()
}

/// The pairs among `markers` whose close the template writes somewhere; the BOS and
/// EOS tokens (`skip`) never open one.
fn pairs(markers: &[Marker], source: &str, skip: &[Option<&str>]) -> Vec<Pair> {
    let mut found: Vec<Pair> = Vec::new();
    for marker in markers {
        if skip.contains(&Some(marker.key.as_str())) {
            continue;
        }
        for close in closes(&marker.key) {
            let pair = Pair {
                open: marker.key.clone(),
                close,
            };
            if source.contains(&pair.close)
                && !found.contains(&pair)
                && !skip.contains(&Some(pair.close.as_str()))
            {
                found.push(pair);
            }
        }
    }
    found
}

/// The closes a marker's name calls for.
fn closes(marker: &str) -> Vec<String> {
    let (open, inner, close) = split(marker);
    if inner.starts_with('/') {
        return Vec::new();
    }
    let mut found = Vec::new();
    if open == "<" || open == "[" {
        found.push(format!("{open}/{inner}{close}"));
    }
    let words: Vec<&str> = inner.split(['_', '▁', '-']).collect();
    if words.iter().any(|w| *w == "start" || *w == "begin") {
        let mut renamed = String::new();
        let mut rest = inner;
        for word in &words {
            let replaced = if *word == "start" || *word == "begin" {
                "end"
            } else {
                word
            };
            renamed.push_str(replaced);
            rest = &rest[word.len()..];
            if let Some(separator) = rest.chars().next() {
                renamed.push(separator);
                rest = &rest[separator.len_utf8()..];
            }
        }
        found.push(format!("{open}{renamed}{close}"));
    }
    found
}

/// A marker's opening delimiter, name and closing delimiter.
fn split(marker: &str) -> (&str, &str, &str) {
    for (open, close) in [("<|", "|>"), ("<｜", "｜>"), ("<", ">"), ("[", "]")] {
        if let Some(inner) = marker
            .strip_prefix(open)
            .and_then(|m| m.strip_suffix(close))
        {
            return (open, inner, close);
        }
    }
    ("", marker, "")
}

/// What is wrong with `pair` in `text`, and the byte where it shows. A close without
/// an open is no problem: `</think>` alone is how several formats say "no reasoning".
fn balance(
    text: &str,
    markers: &[Marker],
    pair: &Pair,
    eos: Option<&str>,
) -> Option<(String, usize)> {
    let mut open_at: Option<usize> = None;
    let mut previous: Option<&Marker> = None;
    for marker in markers {
        let ends_previous = previous
            .is_some_and(|p| p.key != pair.open && text[p.end..marker.start].trim().is_empty());
        if marker.key == pair.open {
            if let Some(at) = open_at.filter(|_| !ends_previous) {
                let what = format!(
                    "{} opens again before {} closes the one opened at byte {at}",
                    pair.open, pair.close
                );
                return Some((what, marker.start));
            }
            open_at = Some(marker.start);
        } else if marker.key == pair.close || Some(marker.key.as_str()) == eos {
            open_at = None;
        }
        previous = Some(marker);
    }
    let ends_with_marker = markers
        .last()
        .is_some_and(|m| text[m.end..].trim().is_empty() && m.key != pair.open);
    match open_at {
        Some(at) if !ends_with_marker => Some((
            format!(
                "{} opened at byte {at} is never closed by {}",
                pair.open, pair.close
            ),
            at,
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_pair_by_name() {
        assert_eq!(closes("<|im_start|>"), ["<|im_end|>"]);
        assert_eq!(
            closes("<start_of_turn>"),
            ["</start_of_turn>", "<end_of_turn>"]
        );
        assert_eq!(closes("<｜tool▁calls▁begin｜>"), ["<｜tool▁calls▁end｜>"]);
        assert_eq!(closes("[INST]"), ["[/INST]"]);
        assert_eq!(closes("</think>"), Vec::<String>::new());
    }

    #[test]
    fn found_in_text_with_prose_around() {
        let text = "<|im_start|>user\nHi <b x> [INST] <function=f> <|im_end|>";
        let found: Vec<String> = find(text).into_iter().map(|m| m.key).collect();
        assert_eq!(
            found,
            ["<|im_start|>", "<b>", "[INST]", "<function>", "<|im_end|>"]
        );
    }

    #[test]
    fn prose_mentions_are_not_markers() {
        let prose = prose_lines(&[
            "(see <rules>) for more",
            "within <tools></tools> XML tags:\n<tools>",
        ]);
        let text = "Read them (see <rules>) for more.\n<rules>\nA\n</rules>\nwithin <tools></tools> XML tags:\n<tools>\n</tools>";
        let kept: Vec<String> = structural(find(text), text, &prose)
            .into_iter()
            .map(|m| m.key)
            .collect();
        assert_eq!(kept, ["<rules>", "</rules>", "<tools>", "</tools>"]);
    }

    #[test]
    fn an_unclosed_turn_is_found_and_a_closed_one_is_not() {
        let pair = Pair {
            open: "<|im_start|>".into(),
            close: "<|im_end|>".into(),
        };
        let check = |text: &str| balance(text, &find(text), &pair, None).map(|p| p.0);
        assert_eq!(
            check("<|im_start|>user\nA<|im_end|>\n<|im_start|>assistant\nB<|im_end|>\n"),
            None
        );
        let unclosed = check("<|im_start|>user\nA\n<|im_start|>assistant\nB<|im_end|>").unwrap();
        assert!(unclosed.contains("opens again"), "{unclosed}");
        let dangling = check("<|im_start|>user\nA<|im_end|>\n<|im_start|>assistant\nB").unwrap();
        assert!(dangling.contains("never closed"), "{dangling}");
    }
}
