//! The prompt pane's cursor: a byte offset in the shown prompt, moved by lines (the
//! view follows it) and by characters or, in token mode, by tokens. `Enter` jumps to
//! the message that produced the byte under it (exact attribution).

use super::action::{Direction, Pane, Step};
use super::app::App;
use super::attribution::describe;

/// Where the cursor is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PromptCursor {
    /// Byte offset in the prompt; `None` until the user moves it (it then starts on
    /// the first line in view).
    pub offset: Option<usize>,
}

impl App {
    /// The cursor's byte offset, kept inside the shown prompt and on a character boundary.
    pub fn cursor_offset(&self) -> Option<usize> {
        let text = self.preview.text();
        let mut offset = self.prompt_cursor.offset?.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        Some(offset)
    }

    /// What the cursor covers on screen: the token or character under it, while the
    /// prompt pane has the focus.
    pub fn cursor_range(&self) -> Option<std::ops::Range<usize>> {
        if self.screen.focus != Pane::Prompt {
            return None;
        }
        let offset = self.cursor_offset()?;
        if let Some(range) = self.token_range_at(offset) {
            return Some(range);
        }
        let width = self.preview.text()[offset..]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        Some(offset..offset + width)
    }

    /// The token at `offset` in token mode.
    fn token_range_at(&self, offset: usize) -> Option<std::ops::Range<usize>> {
        self.token_mode.token_range(&self.preview, offset)
    }

    fn view_height(&self) -> usize {
        super::ui::pane_height(&self.screen, Pane::Prompt).max(1)
    }

    fn view_width(&self) -> usize {
        super::ui::areas(&self.screen)
            .panes
            .iter()
            .find(|(pane, _)| *pane == Pane::Prompt)
            .map_or(80, |(_, rect)| usize::from(rect.width.saturating_sub(2)))
            .max(1)
    }

    fn view_top(&self) -> usize {
        let height = self.view_height();
        self.prompt
            .top_line(&self.preview, self.prompt_anchor(), height)
    }

    /// How many prompt lines from `top` fit in the view, wrapped.
    fn lines_in_view(&self, top: usize) -> usize {
        let (height, width) = (self.view_height(), self.view_width());
        let mut rows = 0;
        let mut count = 0;
        for line in top..self.preview.line_count() {
            rows += line_rows(self.preview.line(line), width);
            if rows > height && count > 0 {
                break;
            }
            count += 1;
        }
        count.max(1)
    }

    /// The first line of a view that ends with `line`.
    fn top_ending_at(&self, line: usize) -> usize {
        let (height, width) = (self.view_height(), self.view_width());
        let mut rows = 0;
        let mut top = line;
        while top > 0 {
            rows += line_rows(self.preview.line(top), width);
            let above = line_rows(self.preview.line(top - 1), width);
            if rows + above > height {
                break;
            }
            top -= 1;
        }
        top
    }

    fn cursor_in_view(&self, top: usize) -> bool {
        let shown = self.lines_in_view(top);
        self.cursor_offset()
            .is_some_and(|offset| (top..top + shown).contains(&self.preview.line_of(offset)))
    }

    /// Moves the cursor by lines (keeping its column) and scrolls it into view.
    pub(super) fn move_prompt_cursor(&mut self, step: Step) {
        let height = self.view_height();
        let top = self.view_top();
        let last = self.preview.line_count().saturating_sub(1);
        let placed = self.prompt_cursor.offset.is_some() && self.cursor_in_view(top);
        let (line, column) = match self.cursor_offset().filter(|_| placed) {
            Some(offset) => {
                let line = self.preview.line_of(offset);
                (line, offset - self.preview.line_starts[line])
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
        let text = self.preview.line(line);
        let mut column = column.min(text.len());
        while !text.is_char_boundary(column) {
            column -= 1;
        }
        self.prompt_cursor.offset = Some(self.preview.line_starts[line] + column);
        self.scroll_to_cursor(top);
    }

    /// Scrolls the least that shows the cursor's line.
    fn scroll_to_cursor(&mut self, top: usize) {
        let Some(offset) = self.cursor_offset() else {
            return;
        };
        let line = self.preview.line_of(offset);
        self.prompt.top = Some(if line < top {
            line
        } else if line >= top + self.lines_in_view(top) {
            self.top_ending_at(line)
        } else {
            top
        });
    }

    /// Moves the cursor one character (or token, in token mode) left or right.
    pub(super) fn move_prompt_column(&mut self, direction: Direction) {
        let top = self.view_top();
        if self.prompt_cursor.offset.is_none() || !self.cursor_in_view(top) {
            return self.move_prompt_cursor(Step::Line(Direction::Down));
        }
        let Some(offset) = self.cursor_offset() else {
            return;
        };
        let text = self.preview.text();
        let next = match self.token_step(offset, direction) {
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
        self.prompt_cursor.offset = Some(next.min(text.len()));
        self.scroll_to_cursor(top);
    }

    /// The next token boundary in token mode (`None`: move by character).
    fn token_step(&self, offset: usize, direction: Direction) -> Option<usize> {
        self.token_mode
            .token_boundary(&self.preview, offset, direction)
    }

    /// Selects the message that produced the byte under the cursor (or, without a
    /// cursor, the first line in view) and shows it in the Messages pane.
    pub(super) fn jump_to_source(&mut self) {
        if self.preview.error().is_some() {
            return self.warn("nothing to jump to: the render failed");
        }
        let offset = self.cursor_offset().unwrap_or_else(|| {
            let top = self.view_top();
            self.preview.line_starts.get(top).copied().unwrap_or(0)
        });
        let Some(source) = self.source_at(offset) else {
            return self.warn(match self.attribution_state() {
                super::attribution::AttributionState::Failed => {
                    "attribution failed: see the prompt pane's title"
                }
                _ => "attribution is still being computed: try again in a moment",
            });
        };
        match source.message() {
            Some(index) => {
                self.messages.selected = index;
                self.messages.in_fields = false;
                self.prompt.follow();
                self.update(super::action::Action::Focus(Pane::Messages));
                self.notify(format!("produced by {}", describe(source)));
            }
            None => self.notify(format!("produced by {}", describe(source))),
        }
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
