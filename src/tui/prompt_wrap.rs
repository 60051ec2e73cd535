//! Soft-wrapping the prompt by display width, keeping every character: ratatui's word
//! wrap drops the spaces at a wrap point, which hid whitespace that matters to a
//! template. Continuation rows start with a `↪` wrap marker; with whitespace marks on,
//! spaces at either side of a wrap point are drawn as `·`. Optional line numbers go in a
//! gutter.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use super::theme::Theme;

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
        let mut builder = RowBuilder::new(room, options);
        for span in &line.spans {
            for c in span.content.chars() {
                builder.push(c, span.style);
            }
        }
        for (n, row) in builder.finish().into_iter().enumerate() {
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

/// Rows of one prompt line under construction.
struct RowBuilder<'o> {
    rows: Vec<Vec<Span<'static>>>,
    used: usize,
    room: usize,
    options: &'o WrapOptions,
    /// Only spaces so far on this continuation row (they get marks).
    leading: bool,
}

impl<'o> RowBuilder<'o> {
    fn new(room: usize, options: &'o WrapOptions) -> Self {
        RowBuilder {
            rows: vec![Vec::new()],
            used: 0,
            room,
            options,
            leading: false,
        }
    }

    fn push(&mut self, c: char, style: Style) {
        let width = c.width().unwrap_or(0);
        if self.used + width > self.room {
            self.break_row();
        }
        let (c, style) = if c == ' ' && self.leading && self.options.whitespace {
            ('·', style.patch(self.options.theme.whitespace()))
        } else {
            (c, style)
        };
        if c != '·' {
            self.leading = false;
        }
        push_char(self.rows.last_mut(), c, style);
        self.used += width;
    }

    fn break_row(&mut self) {
        if self.options.whitespace {
            if let Some(row) = self.rows.last_mut() {
                mark_trailing_spaces(row, self.options.theme);
            }
        }
        let marker = Span::styled(WRAP_MARK, self.options.theme.dim());
        self.rows.push(vec![marker]);
        self.used = 1;
        self.leading = true;
    }

    fn finish(self) -> Vec<Vec<Span<'static>>> {
        self.rows
    }
}

fn push_char(row: Option<&mut Vec<Span<'static>>>, c: char, style: Style) {
    let Some(row) = row else { return };
    match row.last_mut() {
        Some(last) if last.style == style && last.content != WRAP_MARK => {
            last.content.to_mut().push(c)
        }
        _ => row.push(Span::styled(c.to_string(), style)),
    }
}

/// Spaces at the end of a row that wrapped become `·`, so they stay visible.
fn mark_trailing_spaces(row: &mut Vec<Span<'static>>, theme: Theme) {
    let mut tail = 0;
    'outer: for span in row.iter().rev() {
        for c in span.content.chars().rev() {
            if c != ' ' {
                break 'outer;
            }
            tail += 1;
        }
    }
    if tail == 0 {
        return;
    }
    let mut kept: Vec<Span<'static>> = Vec::new();
    let mut remaining = tail;
    while remaining > 0 {
        let Some(mut span) = row.pop() else { break };
        let len = span.content.chars().count();
        if len <= remaining {
            remaining -= len;
            continue;
        }
        let keep: String = span.content.chars().take(len - remaining).collect();
        span.content = keep.into();
        kept.push(span);
        remaining = 0;
    }
    row.extend(kept);
    row.push(Span::styled("·".repeat(tail), theme.whitespace()));
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
            theme: Theme { color: false },
        }
    }

    #[test]
    fn spaces_at_a_wrap_point_stay_visible() {
        let lines = vec![(0, Line::raw("ab   cd"))];
        assert_eq!(
            text(&wrap(lines.clone(), &options(false, None))),
            vec!["ab   c", "↪d"]
        );
        let lines = vec![(0, Line::raw("abcd   ef"))];
        assert_eq!(
            text(&wrap(lines, &options(true, None))),
            vec!["abcd··", "↪·ef"]
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
