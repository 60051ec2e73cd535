//! What the restore question shows of a recovery file: the lines that differ from the
//! saved session file (both as chatplate writes them, pretty JSON, so a changed message
//! is a changed line), `-` for the saved file's, `+` for the recovery's, at most
//! [`MAX_LINES`] of them, each cut to [`MAX_WIDTH`] characters. Read and diffed as file
//! work, when the recovery file is found.

use std::path::Path;

use ratatui::text::Line;

use chatplate_core::diff::{diff_lines, DiffLine};
use chatplate_core::files::{self, MAX_SESSION_BYTES};

use super::theme::Theme;

/// The most changed lines shown.
pub const MAX_LINES: usize = 8;

/// The most characters of a line shown.
const MAX_WIDTH: usize = 70;

/// The changed lines from the `saved` session to its `recovery` (empty when either
/// cannot be read, or nothing differs), then how many more there are.
pub fn between(saved: &Path, recovery: &Path) -> Vec<String> {
    let read = |path| files::read_text(path, MAX_SESSION_BYTES).ok();
    let (Some(old), Some(new)) = (read(saved), read(recovery)) else {
        return Vec::new();
    };
    changed_lines(&old, &new)
}

/// The changed lines from `old` to `new`, marked and cut (see [`between`]).
pub fn changed_lines(old: &str, new: &str) -> Vec<String> {
    let changed: Vec<String> = diff_lines(old, new)
        .into_iter()
        .filter_map(|line| match line {
            DiffLine::Same(_) => None,
            DiffLine::Removed(text) => Some(format!("- {}", cut(text.trim()))),
            DiffLine::Added(text) => Some(format!("+ {}", cut(text.trim()))),
        })
        .collect();
    let more = changed.len().saturating_sub(MAX_LINES);
    let mut shown: Vec<String> = changed.into_iter().take(MAX_LINES).collect();
    if more > 0 {
        shown.push(format!("… {more} more changed lines"));
    }
    shown
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_WIDTH) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The diff as dialog lines: a heading, removed lines dim, added ones in the key colour.
pub fn lines(diff: &[String], theme: Theme) -> Vec<Line<'static>> {
    if diff.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![
        Line::raw(""),
        Line::raw("What differs from the saved file:"),
    ];
    lines.extend(diff.iter().map(|line| match line.starts_with("- ") {
        true => Line::styled(line.clone(), theme.dim()),
        false => Line::styled(line.clone(), theme.key()),
    }));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changed_lines_are_kept_marked_and_bounded() {
        let old = "{\n  \"a\": 1,\n  \"b\": 2\n}\n";
        let new = "{\n  \"a\": 1,\n  \"b\": 3\n}\n";
        assert_eq!(changed_lines(old, new), ["- \"b\": 2", "+ \"b\": 3"]);
        let many_old: String = (0..20).map(|i| format!("{i}\n")).collect();
        let many_new: String = (0..20).map(|i| format!("{}\n", i + 100)).collect();
        let shown = changed_lines(&many_old, &many_new);
        assert_eq!(shown.len(), MAX_LINES + 1);
        assert_eq!(shown[MAX_LINES], "… 32 more changed lines");
        assert!(changed_lines("same\n", "same\n").is_empty());
    }
}
