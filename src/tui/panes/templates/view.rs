//! Drawing the templates pane: the filter line, the list (sections by origin, the
//! template in use marked, capability badges on the right), then the selected template's
//! source or capabilities.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use chatplate_core::catalog::TemplateSource;

use crate::tui::panes::messages::view::pane_block;
use crate::tui::panes::messages::view::truncate;
use crate::tui::panes::messages::view::window_start;
use chatplate_core::lint::Severity;

use crate::tui::panes::templates::badges::badge_text;
use crate::tui::panes::templates::lint;
use crate::tui::panes::templates::origin as template_origin;
use crate::tui::panes::templates::TemplatesPane;
use crate::tui::preview::Preview;
use crate::tui::theme::Theme;

/// What the templates pane draws.
#[derive(Debug, Clone, Copy)]
pub struct TemplatesView<'a> {
    /// The pane's state.
    pub pane: &'a TemplatesPane,
    /// The template the session uses.
    pub in_use: &'a TemplateSource,
    /// The shown render (its error line is marked in the source).
    pub preview: &'a Preview,
    /// The colours.
    pub theme: Theme,
}

/// Draws the pane: filter line, list, then the source.
pub fn draw(frame: &mut Frame, area: Rect, view: TemplatesView, focused: bool) {
    let theme = view.theme;
    let block = pane_block("Templates", focused, theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let pane = view.pane;
    let list_height =
        crate::tui::panes::templates::source::list_rows(pane.catalog.len(), inner.height);
    let [filter_area, list_area, source_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(list_height),
        Constraint::Min(0),
    ])
    .areas(inner);
    let filter = if pane.filtering || !pane.filter.is_empty() {
        Line::from(vec![
            Span::styled("filter: ", theme.dim()),
            Span::raw(pane.filter.clone()),
            Span::styled(if pane.filtering { "▏" } else { "" }, theme.dim()),
        ])
    } else {
        Line::styled("/ filters · Enter uses", theme.dim())
    };
    frame.render_widget(Paragraph::new(filter), filter_area);
    frame.render_widget(
        Paragraph::new(list_lines(view, list_area, focused)),
        list_area,
    );
    if pane.info.open {
        crate::tui::panes::templates::info::draw(frame, source_area, pane, theme);
    } else {
        crate::tui::panes::templates::source::draw(frame, source_area, view);
    }
}

/// A list row: the name, then its lint badge (the most serious finding's rule) and its
/// capability badges right-aligned in what room the name leaves (badges go first when
/// the pane is narrow, capabilities before the lint's; the name is cut only when it
/// alone is too wide).
fn badged_line(
    view: TemplatesView,
    template: &TemplateSource,
    name: &str,
    width: u16,
) -> Line<'static> {
    use unicode_width::UnicodeWidthStr;
    let width = usize::from(width);
    let name = truncate(name, width);
    let mut room = width.saturating_sub(name.width() + 1);
    let lint = lint_badge(view, template, room);
    if let Some((text, _)) = &lint {
        room = room.saturating_sub(text.width() + 1);
    }
    let badges = badge_text(view.pane.badges.get(&template.source), room);
    let mut spans = vec![Span::raw(name.clone())];
    let used = name.width()
        + lint
            .as_ref()
            .map_or(0, |(t, _)| t.width() + usize::from(!badges.is_empty()))
        + badges.width();
    spans.push(Span::raw(" ".repeat(width.saturating_sub(used))));
    if let Some((text, style)) = lint {
        spans.push(Span::styled(text, style));
        if !badges.is_empty() {
            spans.push(Span::raw(" "));
        }
    }
    spans.push(Span::styled(badges, view.theme.dim()));
    Line::from(spans)
}

/// The lint badge and its colour, when it fits in `room`.
fn lint_badge(
    view: TemplatesView,
    template: &TemplateSource,
    room: usize,
) -> Option<(String, ratatui::style::Style)> {
    use unicode_width::UnicodeWidthStr;
    let (text, severity) = lint::badge(view.pane.lints.get(template))?;
    let style = match severity {
        Severity::Error => view.theme.error(),
        _ => view.theme.key(),
    };
    (text.width() <= room).then_some((text, style))
}

/// A line of the template list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRow {
    /// The section heading above the template at this position of the visible list.
    Heading(usize),
    /// The template at this position of the visible list.
    Entry(usize),
}

/// The lines the list shows in `height` rows: the window around the cursor, with a
/// heading where a section starts (the mouse reads it to know what a click hit).
pub fn list_layout(pane: &TemplatesPane, height: usize) -> Vec<ListRow> {
    let visible = pane.visible();
    let start = window_start(pane.cursor, visible.len(), height);
    let mut rows = Vec::new();
    let mut cursor_line = None;
    for (row, &index) in visible.iter().enumerate().skip(start) {
        let section = template_origin::section(&pane.catalog[index]);
        let first_of_section = match row.checked_sub(1).map(|r| visible[r]) {
            Some(before) => template_origin::section(&pane.catalog[before]) != section,
            None => section != "Bundled",
        };
        if first_of_section {
            rows.push(ListRow::Heading(row));
        }
        if row == pane.cursor {
            cursor_line = Some(rows.len());
        }
        rows.push(ListRow::Entry(row));
    }
    // Headings can push the cursor row below the window: scroll it back into view.
    if let Some(at) = cursor_line.filter(|&at| at >= height) {
        rows.drain(..=at - height);
    }
    rows.truncate(height);
    rows
}

/// Where the list is drawn in the pane at `area`.
pub fn list_area(pane: &TemplatesPane, area: Rect) -> Rect {
    let inner = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    };
    let height = crate::tui::panes::templates::source::list_rows(pane.catalog.len(), inner.height);
    Rect {
        y: inner.y + 1,
        height: height.min(inner.height.saturating_sub(1)),
        ..inner
    }
}

fn list_lines(view: TemplatesView, area: Rect, focused: bool) -> Vec<Line<'static>> {
    let (pane, theme) = (view.pane, view.theme);
    let visible = pane.visible();
    if visible.is_empty() {
        return vec![Line::styled("no match", theme.dim())];
    }
    let in_use = view.in_use;
    let layout = list_layout(pane, usize::from(area.height));
    let line = |row: ListRow| match row {
        ListRow::Heading(at) => {
            let section = template_origin::section(&pane.catalog[visible[at]]);
            Line::styled(format!("─ {section}"), theme.dim())
        }
        ListRow::Entry(at) => {
            let index = visible[at];
            let template = &pane.catalog[index];
            let mark = if template.name == in_use.name && template.origin == in_use.origin {
                "● "
            } else {
                "  "
            };
            let label = template_origin::label(&pane.catalog, index);
            let line = badged_line(view, template, &format!("{mark}{label}"), area.width);
            if focused && at == pane.cursor {
                line.patch_style(theme.cursor())
            } else {
                line
            }
        }
    };
    layout.into_iter().map(line).collect()
}
