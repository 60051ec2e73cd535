//! The prompt pane's cursor: a byte offset in the shown prompt, moved by lines (the
//! view follows it) and by characters or, in token mode, by tokens. `Enter` jumps to
//! the message that produced the byte under it (exact attribution; see
//! [`crate::tui::panes::prompt`]).

use std::ops::Range;

use crate::tui::action::Direction;

use crate::tui::action::Pane;

use crate::tui::action::Step;
use crate::tui::panes::prompt::tokens::TokenMode;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::preview::Preview;
use crate::tui::screen::Screen;

/// Where the cursor is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PromptCursor {
    /// Byte offset in the prompt; `None` until the user moves it (it then starts on
    /// the first line in view).
    pub offset: Option<usize>,
}

/// The prompt as the cursor moves over it: the shown render, the view's size, where the
/// view follows, and token mode (the cursor moves by tokens).
#[derive(Debug, Clone, Copy)]
pub struct Viewport<'a> {
    preview: &'a Preview,
    height: usize,
    width: usize,
    anchor: Option<usize>,
    tokens: &'a TokenMode,
}

impl<'a> Viewport<'a> {
    /// The prompt pane's view on `app::screen`.
    pub fn new(
        preview: &'a Preview,
        screen: &Screen,
        anchor: Option<usize>,
        tokens: &'a TokenMode,
    ) -> Self {
        let width = (crate::tui::layout::areas(screen).panes.iter())
            .find(|(pane, _)| *pane == Pane::Prompt)
            .map_or(80, |(_, rect)| usize::from(rect.width.saturating_sub(2)));
        Viewport {
            preview,
            height: crate::tui::layout::pane_height(screen, Pane::Prompt).max(1),
            width: width.max(1),
            anchor,
            tokens,
        }
    }
}

impl PromptPane {
    /// The cursor's byte offset, kept inside the shown prompt and on a character boundary.
    pub fn cursor_offset(&self, preview: &Preview) -> Option<usize> {
        let text = preview.text();
        let mut offset = self.cursor.offset?.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        Some(offset)
    }

    /// What the cursor covers on screen: the token (in token mode) or character under it.
    pub fn cursor_range(&self, preview: &Preview, tokens: &TokenMode) -> Option<Range<usize>> {
        let offset = self.cursor_offset(preview)?;
        if let Some(range) = tokens.token_range(preview, offset) {
            return Some(range);
        }
        let width = preview.text()[offset..]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        Some(offset..offset + width)
    }

    pub(in crate::tui) fn view_top(&self, view: &Viewport) -> usize {
        self.top_line(view.preview, view.anchor, view.height)
    }

    /// How many prompt lines from `top` fit in the view, wrapped.
    fn lines_in_view(view: &Viewport, top: usize) -> usize {
        let mut rows = 0;
        let mut count = 0;
        for line in top..view.preview.line_count() {
            rows += line_rows(view.preview.line(line), view.width);
            if rows > view.height && count > 0 {
                break;
            }
            count += 1;
        }
        count.max(1)
    }

    /// The first line of a view that ends with `line`.
    fn top_ending_at(view: &Viewport, line: usize) -> usize {
        let mut rows = 0;
        let mut top = line;
        while top > 0 {
            rows += line_rows(view.preview.line(top), view.width);
            let above = line_rows(view.preview.line(top - 1), view.width);
            if rows + above > view.height {
                break;
            }
            top -= 1;
        }
        top
    }

    fn cursor_in_view(&self, view: &Viewport, top: usize) -> bool {
        let shown = Self::lines_in_view(view, top);
        self.cursor_offset(view.preview)
            .is_some_and(|offset| (top..top + shown).contains(&view.preview.line_of(offset)))
    }

    /// Moves the cursor by lines (keeping its column) and scrolls it into view.
    pub(in crate::tui) fn move_cursor(&mut self, view: &Viewport, step: Step) {
        let preview = view.preview;
        let height = view.height;
        let top = self.view_top(view);
        let last = preview.line_count().saturating_sub(1);
        let placed = self.cursor.offset.is_some() && self.cursor_in_view(view, top);
        let (line, column) = match self.cursor_offset(preview).filter(|_| placed) {
            Some(offset) => {
                let line = preview.line_of(offset);
                (line, offset - preview.line_starts[line])
            }
            // Placed (or brought back) on the first line in view.
            None => (top, 0),
        };
        let line = match step {
            Step::Line(_) | Step::Page(_) if !placed => line,
            Step::Line(Direction::Up) => line.saturating_sub(1),
            Step::Line(Direction::Down) => (line + 1).min(last),
            Step::Page(Direction::Up) => line.saturating_sub(height),
            Step::Page(Direction::Down) => (line + height).min(last),
            Step::First => 0,
            Step::Last => last,
        };
        let text = preview.line(line);
        let mut column = column.min(text.len());
        while !text.is_char_boundary(column) {
            column -= 1;
        }
        self.cursor.offset = Some(preview.line_starts[line] + column);
        self.scroll_to_cursor(view, top);
    }

    /// Scrolls the least that shows the cursor's line.
    fn scroll_to_cursor(&mut self, view: &Viewport, top: usize) {
        let Some(offset) = self.cursor_offset(view.preview) else {
            return;
        };
        let line = view.preview.line_of(offset);
        self.top = Some(if line < top {
            line
        } else if line >= top + Self::lines_in_view(view, top) {
            Self::top_ending_at(view, line)
        } else {
            top
        });
    }

    /// Moves the cursor one character (or token, in token mode) left or right.
    pub(in crate::tui) fn move_column(&mut self, view: &Viewport, direction: Direction) {
        let top = self.view_top(view);
        if self.cursor.offset.is_none() || !self.cursor_in_view(view, top) {
            return self.move_cursor(view, Step::Line(Direction::Down));
        }
        let Some(offset) = self.cursor_offset(view.preview) else {
            return;
        };
        let text = view.preview.text();
        let next = match view.tokens.token_boundary(view.preview, offset, direction) {
            Some(next) => next,
            None => match direction {
                Direction::Up => text[..offset]
                    .char_indices()
                    .next_back()
                    .map_or(0, |(i, _)| i),
                Direction::Down => text[offset..]
                    .chars()
                    .next()
                    .map_or(offset, |c| offset + c.len_utf8()),
            },
        };
        self.cursor.offset = Some(next.min(text.len()));
        self.scroll_to_cursor(view, top);
    }
}

/// Rows `line` takes when wrapped at word boundaries to `width` columns (as the prompt
/// view wraps it; tabs count as the four spaces they are drawn as).
fn line_rows(line: &str, width: usize) -> usize {
    let mut rows = 1;
    let mut column = 0;
    for word in line.split_inclusive(' ') {
        let len: usize = word.chars().map(|c| if c == '\t' { 4 } else { 1 }).sum();
        let visible = len - usize::from(word.ends_with(' '));
        if column > 0 && column + visible > width {
            rows += 1;
            column = 0;
        }
        column += len;
        while column > width {
            rows += 1;
            column -= width;
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::line_rows;

    #[test]
    fn rows_follow_word_wrapping() {
        assert_eq!(line_rows("", 10), 1);
        assert_eq!(line_rows("0123456789", 10), 1);
        assert_eq!(line_rows("hello world again", 10), 3);
        assert_eq!(line_rows("aaaaaaaaaaaaaaaaaaaaaaaaa", 10), 3);
    }
}
