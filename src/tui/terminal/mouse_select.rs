//! What a click selects outside the message list: a row of the Templates list (as
//! moving the cursor there would, so the highlighted template is previewed), or a
//! prompt byte, which selects the message that produced it (the attribution `Enter`
//! in the prompt uses; the view stays where it is).

use ratatui::layout::Rect;

use crate::tui::action::Direction;

use crate::tui::action::Step;
use crate::tui::panes::prompt::click as prompt_click;
use crate::tui::panes::prompt::click::Layout;
use crate::tui::panes::templates::view::list_area;
use crate::tui::panes::templates::view::list_layout;
use crate::tui::panes::templates::view::ListRow;
use crate::tui::terminal::mouse::Hit;
use crate::tui::terminal::mouse::PointerView;

/// The template drawn at screen `row` of the Templates pane at `rect`.
pub(in crate::tui) fn template_row(view: &PointerView, rect: Rect, row: u16) -> Option<Hit> {
    let templates = view.templates;
    let area = list_area(templates, rect);
    let line = usize::from(row.checked_sub(area.y)?);
    let layout = list_layout(templates, usize::from(area.height));
    let (ListRow::Entry(target) | ListRow::Heading(target)) = *layout.get(line)?;
    let last = templates.visible().len().checked_sub(1)?;
    let (cursor, step) = match target {
        0 => (None, Step::First),
        t if t == last => (None, Step::Last),
        t => (Some(t - 1), Step::Line(Direction::Down)),
    };
    Some(Hit::TemplateRow { cursor, step })
}

/// The prompt byte drawn at the clicked cell of the Prompt pane at `rect`.
pub(in crate::tui) fn prompt_byte(
    view: &PointerView,
    rect: Rect,
    column: u16,
    row: u16,
) -> Option<Hit> {
    let prompt = view.prompt;
    if prompt.diff || view.preview.error().is_some() {
        return None;
    }
    let inner = Rect {
        x: rect.x + 1,
        y: rect.y + 1,
        width: rect.width.saturating_sub(2),
        height: rect.height.saturating_sub(2),
    };
    let top = prompt.top_line(view.preview, view.anchor, usize::from(inner.height));
    let layout = Layout {
        inner: Rect {
            height: inner.height - u16::from(prompt.search.is_some()).min(inner.height),
            ..inner
        },
        top,
        numbers: prompt.numbers,
        whitespace: prompt.whitespace,
    };
    let offset = prompt_click::offset_at(view.preview, &layout, column, row)?;
    Some(Hit::PromptByte { offset, top })
}
