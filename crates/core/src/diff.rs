//! A line diff of the expected prompt against the rendered one, shared by
//! `chatplate check` and the app's diff mode, with the changed characters inside a pair
//! of changed lines. Lines keep their newline so a missing or extra final newline shows
//! up as a changed line.
//!
//! The diff itself is the `similar` crate's Myers diff (linear space, with a deadline),
//! which replaced a hand-written quadratic LCS table. [`marked_diff`] prints it for a
//! terminal, as `check` and the comparisons show it.

mod marked;

pub use marked::{marked_diff, prompt_head};

use std::time::Duration;

use similar::{Algorithm, ChangeTag, TextDiff};

/// One line of the diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffLine<'a> {
    /// In both.
    Same(&'a str),
    /// Only in the expected prompt.
    Removed(&'a str),
    /// Only in the rendered prompt.
    Added(&'a str),
}

impl DiffLine<'_> {
    /// Whether the line is a change.
    pub fn is_change(&self) -> bool {
        !matches!(self, DiffLine::Same(_))
    }
}

/// How long a line diff may search for the smallest diff before it settles for a
/// larger (still correct) one: huge, very different prompts stay fast.
const LINE_DEADLINE: Duration = Duration::from_secs(2);

/// Longest line pair (in bytes, each) compared character by character.
const MAX_INLINE: usize = 20_000;

/// The diff from `expected` to `actual`.
pub fn diff_lines<'a>(expected: &'a str, actual: &'a str) -> Vec<DiffLine<'a>> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(LINE_DEADLINE)
        .diff_lines(expected, actual);
    diff.iter_all_changes()
        .map(|change| match change.tag() {
            ChangeTag::Equal => DiffLine::Same(change.value()),
            ChangeTag::Delete => DiffLine::Removed(change.value()),
            ChangeTag::Insert => DiffLine::Added(change.value()),
        })
        .collect()
}

/// A piece of a changed line: text, and whether it is part of the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The text.
    pub text: String,
    /// True when these characters differ from the other line.
    pub changed: bool,
}

/// The characters that differ between a removed line and the added line that replaces
/// it: `(old pieces, new pieces)`. Long lines count as wholly changed.
pub fn inline_pieces(old: &str, new: &str) -> (Vec<Piece>, Vec<Piece>) {
    if old.len() > MAX_INLINE || new.len() > MAX_INLINE {
        let whole = |text: &str| {
            vec![Piece {
                text: text.to_string(),
                changed: true,
            }]
        };
        return (whole(old), whole(new));
    }
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(Duration::from_millis(100))
        .diff_chars(old, new);
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for change in diff.iter_all_changes() {
        let text = change.value();
        match change.tag() {
            ChangeTag::Equal => {
                push_piece(&mut before, text, false);
                push_piece(&mut after, text, false);
            }
            ChangeTag::Delete => push_piece(&mut before, text, true),
            ChangeTag::Insert => push_piece(&mut after, text, true),
        }
    }
    (before, after)
}

/// Appends `text` to `pieces`, merged into the last piece when that has the same flag.
fn push_piece(pieces: &mut Vec<Piece>, text: &str, changed: bool) {
    match pieces.last_mut() {
        Some(last) if last.changed == changed => last.text.push_str(text),
        _ => pieces.push(Piece {
            text: text.to_string(),
            changed,
        }),
    }
}

/// For each line of `lines`, the line it pairs with for intra-line marks: the i-th
/// removed line of a run of removals with the i-th added line right after it.
pub fn pairs(lines: &[DiffLine]) -> Vec<Option<usize>> {
    let mut partner = vec![None; lines.len()];
    let mut index = 0;
    while index < lines.len() {
        let removed = lines[index..]
            .iter()
            .take_while(|l| matches!(l, DiffLine::Removed(_)))
            .count();
        let added = lines[index + removed..]
            .iter()
            .take_while(|l| matches!(l, DiffLine::Added(_)))
            .count();
        for k in 0..removed.min(added) {
            partner[index + k] = Some(index + removed + k);
            partner[index + removed + k] = Some(index + k);
        }
        index += (removed + added).max(1);
    }
    partner
}

#[cfg(test)]
mod tests {
    use super::{diff_lines, inline_pieces, pairs, DiffLine::*};

    #[test]
    fn changed_line_in_the_middle() {
        let diff = diff_lines("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            diff,
            vec![Same("a\n"), Removed("b\n"), Added("B\n"), Same("c\n")]
        );
    }

    #[test]
    fn missing_final_newline_is_a_change() {
        let diff = diff_lines("a\n", "a");
        assert_eq!(diff, vec![Removed("a\n"), Added("a")]);
    }

    #[test]
    fn a_long_diff_is_fast_and_complete() {
        let old: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..20_000)
            .map(|i| format!("line {}\n", i * 7 % 20_000))
            .collect();
        let diff = diff_lines(&old, &new);
        let removed = diff.iter().filter(|l| matches!(l, Removed(_))).count();
        let kept = diff.iter().filter(|l| matches!(l, Same(_))).count();
        assert_eq!(removed + kept, 20_000);
    }

    #[test]
    fn the_changed_characters_are_marked() {
        let (old, new) = inline_pieces("say hello\n", "say  hallo\n");
        let changed = |pieces: &[super::Piece]| -> String {
            pieces
                .iter()
                .filter(|p| p.changed)
                .map(|p| p.text.as_str())
                .collect()
        };
        assert_eq!(changed(&old), "e");
        assert_eq!(changed(&new), " a");
        let all = |pieces: &[super::Piece]| -> String {
            pieces.iter().map(|p| p.text.as_str()).collect()
        };
        assert_eq!(all(&new), "say  hallo\n");
    }

    #[test]
    fn removed_and_added_runs_pair_up() {
        let diff = diff_lines("a\nb\nc\n", "x\ny\nc\n");
        assert_eq!(pairs(&diff), vec![Some(2), Some(3), Some(0), Some(1), None]);
    }
}
