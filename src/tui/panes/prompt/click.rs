//! Which prompt byte a click in the prompt pane hit: the pane's lines are laid out as
//! the view draws them (line-number gutter, tabs and whitespace marks, rows broken as
//! `panes::prompt::wrap` breaks them, the wrap mark at the start of a continued row), and the
//! screen cell is looked up in that layout.

use ratatui::layout::Rect;
use ratatui::style::Style;
use unicode_width::UnicodeWidthChar;

use crate::tui::preview::Preview;

/// How the prompt pane shows the prompt, as far as where bytes land is concerned.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// The pane's inside (borders excluded).
    pub inner: Rect,
    /// The first prompt line in view.
    pub top: usize,
    /// Line numbers are shown.
    pub numbers: bool,
    /// Whitespace marks are shown.
    pub whitespace: bool,
}

/// The byte offset of the character drawn at screen cell (`column`, `row`), or the end
/// of the row's text when the click is past it; `None` outside the text.
pub fn offset_at(preview: &Preview, layout: &Layout, column: u16, row: u16) -> Option<usize> {
    let inner = layout.inner;
    let x = usize::from(column.checked_sub(inner.x)?);
    let mut y = usize::from(row.checked_sub(inner.y)?);
    if x >= usize::from(inner.width) || y >= usize::from(inner.height) {
        return None;
    }
    let gutter = if layout.numbers {
        preview.line_count().max(1).to_string().len() + 1
    } else {
        0
    };
    let room = usize::from(inner.width).saturating_sub(gutter).max(2);
    for line in layout.top..preview.line_count() {
        let start = preview.line_starts[line];
        let rows = line_rows(preview.line(line), room, layout.whitespace);
        if y < rows.len() {
            let cells = &rows[y];
            let column = x.checked_sub(gutter)?;
            let hit = cells.iter().find(|cell| column < cell.column + cell.width);
            let byte = hit
                .or(cells.last())
                .map_or(0, |cell| cell.byte + usize::from(hit.is_none()) * cell.len);
            return Some(start + byte);
        }
        y -= rows.len();
    }
    None
}

/// One drawn cell: the source character's byte offset and length, and where it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cell {
    byte: usize,
    len: usize,
    column: usize,
    width: usize,
}

/// The rows `line` is drawn as in `room` columns.
fn line_rows(line: &str, room: usize, whitespace: bool) -> Vec<Vec<Cell>> {
    let text_end = line.trim_end_matches([' ', '\t']).len();
    // One entry per drawn character (a tab is four spaces), pointing at its source.
    let mut drawn: Vec<(char, Style)> = Vec::new();
    let mut sources = Vec::new();
    for (byte, ch) in line.char_indices() {
        let (shown, _) =
            crate::tui::panes::prompt::highlight::display(ch, byte >= text_end, whitespace);
        for c in shown.chars() {
            drawn.push((c, Style::default()));
            sources.push((byte, ch.len_utf8()));
        }
    }
    let mut rows = Vec::new();
    let mut start = 0;
    for end in crate::tui::panes::prompt::wrap::breaks(&drawn, room) {
        // A continued row starts with the one-column wrap mark.
        let mut column = usize::from(start > 0);
        let mut row = Vec::new();
        for i in start..end {
            let width = drawn[i].0.width().unwrap_or(0);
            let (byte, len) = sources[i];
            row.push(Cell {
                byte,
                len,
                column,
                width: width.max(1),
            });
            column += width;
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
    use super::*;

    fn layout(width: u16, height: u16) -> Layout {
        Layout {
            inner: Rect::new(1, 1, width, height),
            top: 0,
            numbers: false,
            whitespace: false,
        }
    }

    #[test]
    fn a_click_finds_the_byte_drawn_there() {
        let text = "<user>\nhello world again\n\tx";
        let mut preview = Preview::new("");
        preview.output = Ok(text.into());
        preview.line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let at = |layout: &Layout, column, row| offset_at(&preview, layout, column, row);
        let plain = layout(10, 10);
        assert_eq!(at(&plain, 1, 1), Some(0));
        assert_eq!(at(&plain, 3, 1), Some(2));
        // Past the end of a row: its end.
        assert_eq!(at(&plain, 9, 1), Some(6));
        // "hello world again" wraps after "hello " and "world ": rows 2, 3, 4; the
        // continued rows start with the wrap mark.
        assert_eq!(at(&plain, 1, 2), Some(7));
        assert_eq!(at(&plain, 3, 3), Some(7 + 7));
        // The tab is four columns.
        assert_eq!(at(&plain, 4, 5), Some(25));
        assert_eq!(at(&plain, 5, 5), Some(26));
        // Below the text, or on the border.
        assert_eq!(at(&plain, 1, 7), None);
        assert_eq!(at(&plain, 0, 1), None);
        let numbered = Layout {
            numbers: true,
            top: 1,
            ..plain
        };
        // The gutter ("2 ") comes first; the view starts at the second line.
        assert_eq!(at(&numbered, 3, 1), Some(7));
    }
}
