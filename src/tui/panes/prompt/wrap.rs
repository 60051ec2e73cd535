//! Soft-wrapping the prompt by display width, keeping every character: ratatui's word
//! wrap drops the spaces at a wrap point, which hid whitespace that matters to a
//! template. Continuation rows start with a `↪` wrap marker; with whitespace marks on,
//! spaces at either side of a wrap point are drawn as `·`. Optional line numbers go in a
//! gutter.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use crate::tui::theme::Theme;

/// The wrap marker at the start of a continuation row.
pub const WRAP_MARK: &str = "↪";

/// How to wrap.
#[derive(Debug, Clone, Copy)]
pub struct WrapOptions {
    /// Columns available.
    pub width: usize,
    /// Rows wanted at most.
    pub height: usize,
    /// `Some(line count)` to show line numbers.
    pub numbers: Option<usize>,
    /// Whitespace marks are on.
    pub whitespace: bool,
    /// Styles.
    pub theme: Theme,
}

/// Builds rows of at most `options.width` columns from `(line index, styled line)`.
/// Rows break after the last space that fits (else inside the word); the space stays at
/// the end of its row.
pub fn wrap(lines: Vec<(usize, Line<'static>)>, options: &WrapOptions) -> Vec<Line<'static>> {
    let gutter = options
        .numbers
        .map_or(0, |count| count.max(1).to_string().len() + 1);
    let room = options.width.saturating_sub(gutter).max(2);
    let mut rows = Vec::new();
    for (index, line) in lines {
        if rows.len() >= options.height {
            break;
        }
        let cells: Vec<(char, Style)> = line
            .spans
            .iter()
            .flat_map(|span| span.content.chars().map(move |c| (c, span.style)))
            .collect();
        for (n, row) in split_rows(&cells, room, options).into_iter().enumerate() {
            let mut spans = Vec::new();
            if gutter > 0 {
                let label = if n == 0 {
                    format!("{:>w$} ", index + 1, w = gutter - 1)
                } else {
                    " ".repeat(gutter)
                };
                spans.push(Span::styled(label, options.theme.dim()));
            }
            spans.extend(row);
            rows.push(Line::from(spans));
        }
    }
    rows.truncate(options.height);
    rows
}

fn width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Where each row of `cells` ends: as much as fits in `room` columns (one less after a
/// wrap marker), cut after the last space (or whitespace mark: the diff shows every
/// space of a changed line as `·`) when there is one, but never right after a lone sign
/// or word: a diff line's `+ ` alone on a row, its text broken on the next, wrapped
/// worse than cutting inside the word.
pub(in crate::tui) fn breaks(cells: &[(char, Style)], room: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let room = if start == 0 { room } else { room - 1 };
        let mut used = 0;
        let mut end = start;
        while end < cells.len() && (used + width(cells[end].0) <= room || end == start) {
            used += width(cells[end].0);
            end += 1;
        }
        if end < cells.len() {
            let space = (start + 1..end).rev().find(|&i| {
                let text = || cells[start..i].iter().filter(|(c, _)| *c != ' ').count();
                is_break(cells[i - 1].0) && text() > 1
            });
            end = space.unwrap_or(end);
        }
        ends.push(end);
        start = end;
    }
    ends
}

/// A character a row may end after: a space, or the mark that shows one (`·`, `→`).
fn is_break(c: char) -> bool {
    matches!(c, ' ' | '·' | '→')
}

fn split_rows(
    cells: &[(char, Style)],
    room: usize,
    options: &WrapOptions,
) -> Vec<Vec<Span<'static>>> {
    let ends = breaks(cells, room);
    let mut rows = Vec::new();
    let mut start = 0;
    for (n, &end) in ends.iter().enumerate() {
        let mut row: Vec<Span<'static>> = Vec::new();
        if n > 0 {
            row.push(Span::styled(WRAP_MARK, options.theme.dim()));
        }
        let wrapped_after = n + 1 < ends.len();
        let wrapped_before = n > 0;
        let last_text = cells[start..end]
            .iter()
            .rposition(|(c, _)| *c != ' ')
            .map_or(start, |i| start + i + 1);
        let first_text = cells[start..end]
            .iter()
            .position(|(c, _)| *c != ' ')
            .map_or(end, |i| start + i);
        for (i, &(c, style)) in cells.iter().enumerate().take(end).skip(start) {
            let at_wrap = (wrapped_after && i >= last_text) || (wrapped_before && i < first_text);
            let (c, style) = if c == ' ' && at_wrap && options.whitespace {
                ('·', style.patch(options.theme.whitespace()))
            } else {
                (c, style)
            };
            match row.last_mut() {
                Some(last) if last.style == style && last.content != WRAP_MARK => {
                    last.content.to_mut().push(c)
                }
                _ => row.push(Span::styled(c.to_string(), style)),
            }
        }
        rows.push(row);
        start = end;
    }
    if rows.is_empty() {
        rows.push(Vec::new());
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::{wrap, WrapOptions};
    use crate::tui::theme::Theme;
    use ratatui::text::Line;

    fn text(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn options(whitespace: bool, numbers: Option<usize>) -> WrapOptions {
        WrapOptions {
            width: 6,
            height: 10,
            numbers,
            whitespace,
            theme: Theme {
                color: false,
                ..Theme::colored()
            },
        }
    }

    #[test]
    fn spaces_at_a_wrap_point_stay_visible() {
        let lines = vec![(0, Line::raw("ab   cd"))];
        assert_eq!(
            text(&wrap(lines.clone(), &options(false, None))),
            vec!["ab   ", "↪cd"]
        );
        assert_eq!(
            text(&wrap(lines, &options(true, None))),
            vec!["ab···", "↪cd"]
        );
        let lines = vec![(0, Line::raw("abcdefgh"))];
        assert_eq!(
            text(&wrap(lines, &options(true, None))),
            vec!["abcdef", "↪gh"],
            "a word longer than the row is cut"
        );
    }

    /// A changed diff line shows its spaces as `·`: it breaks there, and its sign stays
    /// with its text.
    #[test]
    fn diff_lines_break_at_marks_and_keep_their_sign() {
        let wide = |width| WrapOptions {
            width,
            ..options(false, None)
        };
        let lines = vec![(0, Line::raw("+ ab·cd·ef"))];
        assert_eq!(
            text(&wrap(lines, &wide(9))),
            vec!["+ ab·cd·", "↪ef"],
            "at the last mark that fits"
        );
        let lines = vec![(0, Line::raw("+ abcdefgh"))];
        assert_eq!(
            text(&wrap(lines, &wide(6))),
            vec!["+ abcd", "↪efgh"],
            "never `+ ` alone"
        );
    }

    #[test]
    fn line_numbers_and_wide_characters() {
        let lines = vec![(9, Line::raw("日本語x"))];
        assert_eq!(
            text(&wrap(lines, &options(false, Some(10)))),
            vec!["10 日", "   ↪本", "   ↪語", "   ↪x"]
        );
    }
}
