//! What the restore question shows of a recovery file: the lines that differ from the
//! saved session file (both written out again as pretty JSON, so a changed message is a
//! changed line even when another tool saved the file compact), `-` for the saved
//! file's, `+` for the recovery's, at most [`MAX_LINES`] of them, each cut to
//! [`MAX_WIDTH`] characters. Read and diffed as file work, when the recovery file is
//! found.

use std::path::Path;

use ratatui::text::Line;

use chatplate_core::diff::{diff_lines, DiffLine};
use chatplate_core::files::{self, MAX_SESSION_BYTES};
use chatplate_core::Session;

use crate::tui::theme::Theme;

/// The most changed lines shown.
pub const MAX_LINES: usize = 8;

/// The most characters of a line shown.
const MAX_WIDTH: usize = 70;

/// The changed lines from the `saved` session to its `files::recovery` (empty when either
/// cannot be read, or nothing differs), then how many more there are.
pub fn between(saved: &Path, recovery: &Path) -> Vec<String> {
    let read = |path| files::read_text(path, MAX_SESSION_BYTES).ok();
    let (Some(old), Some(new)) = (read(saved), read(recovery)) else {
        return Vec::new();
    };
    changed_lines(&normalized(old, saved), &normalized(new, recovery))
}

/// `text` as the session it holds would be written (so a field written out in one file
/// and left at its default in the other, like an empty `variables`, is no difference),
/// as pretty JSON, one value per line, keys in their order; as plain pretty JSON when it
/// is not a session, and as it is when it is not JSON (the diff then shows the text).
fn normalized(text: String, path: &Path) -> String {
    let text = Session::parse(&text, path).map_or(text, |session| session.to_json());
    serde_json::from_str(&text).map_or(text, |value| {
        crate::tui::panes::messages::fields::pretty(&value)
    })
}

/// The changed lines from `old` to `new`, marked and cut (see [`between`]). A line
/// changed in place (one removed line, then one added) is cut around where the two
/// first differ: an edit at the end of a long message would otherwise show two equal
/// cut lines.
pub fn changed_lines(old: &str, new: &str) -> Vec<String> {
    let diff = diff_lines(old, new);
    let mut changed = Vec::new();
    let mut i = 0;
    while i < diff.len() {
        match (&diff[i], diff.get(i + 1)) {
            (DiffLine::Removed(removed), Some(DiffLine::Added(added)))
                if !matches!(diff.get(i + 2), Some(DiffLine::Added(_)))
                    && (i == 0 || !matches!(diff[i - 1], DiffLine::Removed(_))) =>
            {
                let (removed, added) = (removed.trim(), added.trim());
                let from = first_difference(removed, added).saturating_sub(CONTEXT);
                changed.push(format!("- {}", cut_from(removed, from)));
                changed.push(format!("+ {}", cut_from(added, from)));
                i += 2;
                continue;
            }
            (DiffLine::Same(_), _) => {}
            (DiffLine::Removed(text), _) => changed.push(format!("- {}", cut_from(text.trim(), 0))),
            (DiffLine::Added(text), _) => changed.push(format!("+ {}", cut_from(text.trim(), 0))),
        }
        i += 1;
    }
    let more = changed.len().saturating_sub(MAX_LINES);
    let mut shown: Vec<String> = changed.into_iter().take(MAX_LINES).collect();
    if more > 0 {
        shown.push(format!("… {more} more changed lines"));
    }
    shown
}

/// Characters shown before the first difference of a line changed in place.
const CONTEXT: usize = 20;

/// The character index where `a` and `b` first differ.
fn first_difference(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// At most [`MAX_WIDTH`] characters of `text` from character `from`, with `…` where
/// it was cut.
fn cut_from(text: &str, from: usize) -> String {
    let start = text.char_indices().nth(from).map_or(text.len(), |(i, _)| i);
    let rest = &text[start..];
    let lead = if start > 0 { "…" } else { "" };
    match rest.char_indices().nth(MAX_WIDTH) {
        Some((end, _)) => format!("{lead}{}…", &rest[..end]),
        None => format!("{lead}{rest}"),
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

    /// A saved session's path in `dir` and its recovery file's.
    fn files_in(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
        (dir.join("s.json"), dir.join("s.recovery.json"))
    }

    #[test]
    fn a_compact_saved_file_diffs_by_value_not_by_layout() {
        let dir = tempfile::tempdir().unwrap();
        let (saved, recovery) = files_in(dir.path());
        let messages: Vec<_> = (0..50)
            .map(|i| serde_json::json!({"role": "user", "content": format!("question {i}")}))
            .collect();
        let old = serde_json::json!({"version": 1, "messages": messages});
        let mut new = old.clone();
        new["messages"][49]["content"] = "question 49, edited".into();
        std::fs::write(&saved, serde_json::to_string(&old).unwrap()).unwrap();
        std::fs::write(&recovery, serde_json::to_string_pretty(&new).unwrap()).unwrap();
        let shown = between(&saved, &recovery);
        assert_eq!(
            shown,
            [
                // Cut CONTEXT characters before the first difference.
                "- …ntent\": \"question 49\"",
                "+ …ntent\": \"question 49, edited\""
            ]
        );
        // Not JSON: the text itself is diffed.
        std::fs::write(&saved, "not json\n").unwrap();
        assert_eq!(between(&saved, &recovery)[0], "- not json");
    }

    #[test]
    fn a_field_left_at_its_default_is_no_difference() {
        let dir = tempfile::tempdir().unwrap();
        let (saved, recovery) = files_in(dir.path());
        let session = |content: &str, variables: bool| {
            let mut session = serde_json::json!({
                "version": 1,
                "template": {"bundled": "chatml-with-headers-tools"},
                "messages": [{"role": "user", "content": content}],
            });
            if variables {
                session["variables"] = serde_json::json!({});
            }
            serde_json::to_string_pretty(&session).unwrap()
        };
        std::fs::write(&saved, session("hello", true)).unwrap();
        std::fs::write(&recovery, session("hello there", false)).unwrap();
        assert_eq!(
            between(&saved, &recovery),
            ["- \"content\": \"hello\"", "+ \"content\": \"hello there\""]
        );
    }

    #[test]
    fn a_long_line_changed_at_its_end_shows_where_it_differs() {
        let text = format!("\"content\": \"{}\"", "word ".repeat(40));
        let edited = text.replace("word \"", "word EDITED\"");
        let shown = changed_lines(&format!("{text}\n"), &format!("{edited}\n"));
        assert_eq!(shown.len(), 2);
        assert!(
            shown[0].starts_with("- …") && shown[0].ends_with("word \""),
            "{shown:?}"
        );
        assert!(
            shown[1].starts_with("+ …") && shown[1].ends_with("EDITED\""),
            "{shown:?}"
        );
        // Short lines are shown whole.
        assert_eq!(changed_lines("a\n", "b\n"), ["- a", "+ b"]);
    }
}
