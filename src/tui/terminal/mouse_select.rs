//! What a click selects outside the message list: a row of the Templates list (as
//! moving the cursor there would, so the highlighted template is previewed), or a
//! prompt byte, which selects the message that produced it (the attribution `Enter`
//! in the prompt uses; the view stays where it is).

use ratatui::layout::Rect;

use crate::tui::app::action::{Action, Direction, Effect, PromptAction, Step, TemplateAction};
use crate::tui::app::App;
use crate::tui::panes::prompt::click::{self as prompt_click, Layout};
use crate::tui::panes::templates::view::{list_area, list_layout, ListRow};

impl App {
    /// Selects the template drawn at screen `row` of the Templates pane at `rect`.
    pub(in crate::tui) fn click_template_row(&mut self, rect: Rect, row: u16) -> Option<Effect> {
        let area = list_area(&self.templates, rect);
        let line = usize::from(row.checked_sub(area.y)?);
        let layout = list_layout(&self.templates, usize::from(area.height));
        let (ListRow::Entry(target) | ListRow::Heading(target)) = *layout.get(line)?;
        let last = self.templates.visible().len().checked_sub(1)?;
        // The last step goes through the pane's own Select, so the preview, the info
        // view and the source follow the cursor as they do for `j` / `k`.
        let step = match target {
            0 => Step::First,
            t if t == last => Step::Last,
            t => {
                self.templates.cursor = t - 1;
                Step::Line(Direction::Down)
            }
        };
        self.update(Action::Template(TemplateAction::Select(step)))
    }

    /// Selects the message that produced the prompt byte drawn at the clicked cell.
    pub(in crate::tui) fn click_prompt(
        &mut self,
        rect: Rect,
        column: u16,
        row: u16,
    ) -> Option<Effect> {
        if self.prompt.diff || self.preview.error().is_some() {
            return None;
        }
        let inner = Rect {
            x: rect.x + 1,
            y: rect.y + 1,
            width: rect.width.saturating_sub(2),
            height: rect.height.saturating_sub(2),
        };
        let top = (self.prompt).top_line(
            &self.preview,
            self.prompt_anchor(),
            usize::from(inner.height),
        );
        let layout = Layout {
            inner: Rect {
                height: inner.height - u16::from(self.prompt.search.is_some()).min(inner.height),
                ..inner
            },
            top,
            numbers: self.prompt.numbers,
            whitespace: self.prompt.whitespace,
        };
        let offset = prompt_click::offset_at(&self.preview, &layout, column, row)?;
        self.prompt.cursor.offset = Some(offset);
        let effect = self.update(Action::Prompt(PromptAction::JumpToSource));
        // Jumping re-centres the view on the message; a click keeps what was clicked in
        // place.
        self.prompt.top = Some(top);
        effect
    }
}
