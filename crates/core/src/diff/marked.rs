//! The `check` diff with the changed characters marked: in colour (red / green lines,
//! changed characters in reverse video, basic SGR codes only) or, without colour, a line
//! of `^` under the changed characters of each replaced line. Spaces and tabs of changed
//! lines are all made visible (`·`, `→`), so a whitespace-only change can be seen.

use super::{diff_lines, inline_pieces, pairs, DiffLine};
use chatplate_render::visible::{self, visible_whitespace};

/// Unchanged lines shown around each change.
const CONTEXT: usize = 2;

/// Longest prompt line shown, in characters.
const MAX_LINE_CHARS: usize = 20_000;

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const REVERSE: &str = "\x1b[7m";
const NO_REVERSE: &str = "\x1b[27m";
const RESET: &str = "\x1b[0m";

/// A line diff of `expected` against `actual` with `@@ line N @@` hunk headers, `-` / `+`
/// lines and the changed characters marked (`color`: SGR; else `^` lines).
pub fn marked_diff(expected: &str, actual: &str, color: bool) -> String {
    let lines = diff_lines(expected, actual);
    let partner = pairs(&lines);
    let near_change = |index: usize| {
        let from = index.saturating_sub(CONTEXT);
        let to = (index + CONTEXT + 1).min(lines.len());
        lines[from..to].iter().any(DiffLine::is_change)
    };
    let mut out = String::new();
    let (mut expected_line, mut in_hunk) = (1, false);
    for (index, line) in lines.iter().enumerate() {
        if near_change(index) {
            if !in_hunk {
                let header = format!("@@ line {expected_line} @@");
                out.push_str(&paint(&header, CYAN, color));
                out.push('\n');
                in_hunk = true;
            }
            out.push_str(&render_line(&lines, index, partner[index], color));
        } else {
            in_hunk = false;
        }
        if !matches!(line, DiffLine::Added(_)) {
            expected_line += 1;
        }
    }
    out
}

fn paint(text: &str, code: &str, color: bool) -> String {
    if color {
        format!("{code}{text}{RESET}")
    } else {
        text.to_string()
    }
}

/// A changed line's text with all whitespace visible and control characters escaped.
fn shown(text: &str) -> String {
    let cut = visible::cut(text, MAX_LINE_CHARS);
    visible_whitespace(&cut)
        .trim_end_matches('\n')
        .replace(' ', "·")
}

fn render_line(lines: &[DiffLine], index: usize, partner: Option<usize>, color: bool) -> String {
    let (mark, text, code) = match lines[index] {
        DiffLine::Same(text) => {
            let body = visible_whitespace(&visible::cut(text, MAX_LINE_CHARS));
            return format!("  {}\n", body.trim_end_matches('\n'));
        }
        DiffLine::Removed(text) => ('-', text, RED),
        DiffLine::Added(text) => ('+', text, GREEN),
    };
    let pieces = match partner.map(|p| lines[p]) {
        Some(DiffLine::Added(new)) => Some(inline_pieces(text, new).0),
        Some(DiffLine::Removed(old)) => Some(inline_pieces(old, text).1),
        _ => None,
    };
    let Some(pieces) = pieces else {
        return format!(
            "{}\n",
            paint(&format!("{mark} {}", shown(text)), code, color)
        );
    };
    let (mut body, mut carets) = (String::new(), String::new());
    for piece in &pieces {
        let text = shown(&piece.text);
        let width = text.chars().count();
        match (piece.changed, color) {
            (true, true) => body.push_str(&format!("{REVERSE}{text}{NO_REVERSE}")),
            _ => body.push_str(&text),
        }
        let under = if piece.changed { '^' } else { ' ' };
        carets.extend(std::iter::repeat_n(under, width));
    }
    let mut out = format!("{}\n", paint(&format!("{mark} {body}"), code, color));
    if !color && carets.contains('^') {
        out.push_str(&format!("  {}\n", carets.trim_end()));
    }
    out
}

/// The head of a prompt that came where an error was expected: its first lines and its
/// size, instead of all of it.
pub fn prompt_head(prompt: &str) -> String {
    const HEAD_LINES: usize = 12;
    const HEAD_CHARS: usize = 2_000;
    let line_count = prompt.lines().count();
    let head: String = prompt.split_inclusive('\n').take(HEAD_LINES).collect();
    let head = visible::cut(&head, HEAD_CHARS);
    let mut out = visible_whitespace(&head);
    if head.len() < prompt.len() {
        let lines = if line_count == 1 { "line" } else { "lines" };
        out.push_str(&format!(
            "\n… ({} bytes, {line_count} {lines} in all)",
            prompt.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{marked_diff, prompt_head};

    #[test]
    fn changed_characters_get_carets_without_colour() {
        let diff = marked_diff("a\nsay hello\n", "a\nsay  hallo\n", false);
        assert_eq!(
            diff,
            "@@ line 1 @@\n  a␊\n- say·hello␊\n       ^\n+ say··hallo␊\n      ^ ^\n"
        );
    }

    #[test]
    fn changes_far_apart_get_a_hunk_each_with_two_lines_of_context() {
        let far_apart = marked_diff(
            "1\n2\n3\n4\n5\n6\n7\n8\n",
            "x\n2\n3\n4\n5\n6\n7\ny\n",
            false,
        );
        assert_eq!(
            far_apart,
            "@@ line 1 @@\n- 1␊\n  ^\n+ x␊\n  ^\n  2␊\n  3␊\n@@ line 6 @@\n  6␊\n  7␊\n- 8␊\n  ^\n+ y␊\n  ^\n"
        );
    }

    #[test]
    fn colour_uses_basic_sgr_codes_only() {
        let diff = marked_diff("x\n", "y\n", true);
        assert!(
            diff.contains("\x1b[31m- \x1b[7mx\x1b[27m␊\x1b[0m"),
            "{diff:?}"
        );
        assert!(!diff.contains("38;5"));
    }

    #[test]
    fn a_long_prompt_is_shown_by_its_head_and_size() {
        let prompt = "line\n".repeat(30_000);
        let head = prompt_head(&prompt);
        assert!(head.len() < 200, "{head}");
        assert!(
            head.ends_with("… (150000 bytes, 30000 lines in all)"),
            "{head}"
        );
    }
}
