//! The template source under the template list: line numbers, the render error's line
//! marked, long lines wrapped (with a `↪` on continuation rows) or scrolled sideways, and
//! scrolling that stops at the last line. `e` opens the file in `$EDITOR`; the template
//! watch reloads it when saved.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use unicode_width::UnicodeWidthChar;

use chatplate_core::catalog::{Origin, TemplateSource};

use crate::tui::action::Direction;

use crate::tui::context::Effect;

use crate::tui::action::Pane;
use crate::tui::context::PaneContext;
use crate::tui::panes::templates::view::TemplatesView;
use crate::tui::panes::templates::TemplatesPane;
use crate::tui::preview::Preview;
use crate::tui::screen::Screen;

/// Columns the source moves per sideways key.
const SIDEWAYS: usize = 8;

/// How long lines are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceView {
    /// Wrap long lines (else they are cut, scrolled with `<` `>`).
    pub wrap: bool,
    /// Columns scrolled sideways when not wrapping.
    pub left: usize,
}

impl Default for SourceView {
    fn default() -> Self {
        SourceView {
            wrap: true,
            left: 0,
        }
    }
}

/// Rows of the template list in a pane `inner_height` rows tall.
pub fn list_rows(templates: usize, inner_height: u16) -> u16 {
    let wanted = u16::try_from(templates + 1).unwrap_or(u16::MAX);
    wanted.min(inner_height / 3).max(2)
}

fn pane_inner(screen: &Screen) -> (usize, usize) {
    let areas = crate::tui::layout::areas(screen);
    areas
        .panes
        .iter()
        .find(|(p, _)| *p == Pane::Templates)
        .map_or((usize::from(screen.height), 40), |(_, r)| {
            (
                usize::from(r.height.saturating_sub(2)),
                usize::from(r.width.saturating_sub(2)),
            )
        })
}

/// Rows of the template list as drawn on `app::screen`.
pub fn list_height(pane: &TemplatesPane, screen: &Screen) -> usize {
    let (height, _) = pane_inner(screen);
    let height = u16::try_from(height).unwrap_or(u16::MAX);
    usize::from(list_rows(pane.catalog.len(), height))
}

/// Text rows and columns of the source view as drawn on `app::screen`.
fn source_size(pane: &TemplatesPane, screen: &Screen) -> (usize, usize) {
    let (height, width) = pane_inner(screen);
    // Filter line, list, the source's title rule.
    (height.saturating_sub(2 + list_height(pane, screen)), width)
}

/// The shown template's source and, when it is `in_use`, its error line.
fn shown<'a>(
    pane: &'a TemplatesPane,
    in_use: &TemplateSource,
    preview: &'a Preview,
) -> Option<(&'a TemplateSource, &'a str, Option<usize>)> {
    let template = pane.selected()?;
    let in_use = template.name == in_use.name && template.origin == in_use.origin;
    let error_line = preview
        .error()
        .and_then(|e| e.position)
        .filter(|_| in_use)
        .map(|p| p.line);
    let source = if in_use {
        preview.source.as_str()
    } else {
        template.source.as_str()
    };
    Some((template, source, error_line))
}

fn gutter_width(source: &str) -> usize {
    source.lines().count().max(1).to_string().len().max(3) + 1
}

/// Display width of a source line (tabs as four columns).
fn width_of(line: &str) -> usize {
    line.chars().map(char_width).sum()
}

fn char_width(c: char) -> usize {
    if c == '\t' {
        4
    } else {
        c.width().unwrap_or(0)
    }
}

/// Screen rows `line` takes at `width` columns.
fn rows_of(line: &str, width: usize, wrap: bool) -> usize {
    if !wrap || width == 0 {
        return 1;
    }
    width_of(line).div_ceil(width).max(1)
}

/// The first line to show so that the view ends at the last line.
fn last_top(source: &str, height: usize, width: usize, wrap: bool) -> usize {
    let lines: Vec<&str> = source.lines().collect();
    let mut rows = 0;
    for (index, line) in lines.iter().enumerate().rev() {
        rows += rows_of(line, width, wrap);
        if rows > height {
            return index + 1;
        }
    }
    0
}

/// The first source line shown in a view `height` rows tall: the user's scroll, or the
/// error line's neighbourhood.
fn top_now(pane: &TemplatesPane, error_line: Option<usize>, height: usize) -> usize {
    pane.source_top
        .unwrap_or_else(|| error_line.map_or(0, |line| line.saturating_sub(height / 2 + 1)))
}

/// Scrolls the source a page.
pub fn scroll(pane: &mut TemplatesPane, ctx: &PaneContext, direction: Direction) {
    let (height, width) = source_size(pane, &ctx.screen);
    let Some((_, source, error_line)) = shown(pane, &ctx.workspace.template, ctx.preview) else {
        return;
    };
    let text_width = width.saturating_sub(gutter_width(source));
    let last = last_top(source, height, text_width, pane.source_view.wrap);
    let top = top_now(pane, error_line, height).min(last);
    let page = height.saturating_sub(1).max(1);
    pane.source_top = Some(match direction {
        Direction::Up => top.saturating_sub(page),
        Direction::Down => (top + page).min(last),
    });
}

/// Scrolls cut lines sideways.
pub fn scroll_sideways(pane: &mut TemplatesPane, ctx: &mut PaneContext, direction: Direction) {
    let view = &mut pane.source_view;
    if view.wrap {
        return ctx.warn("the source is wrapped: w scrolls sideways instead");
    }
    view.left = match direction {
        Direction::Up => view.left.saturating_sub(SIDEWAYS),
        Direction::Down => view.left + SIDEWAYS,
    };
}

/// Wraps long lines, or cuts them.
pub fn toggle_wrap(pane: &mut TemplatesPane, ctx: &mut PaneContext) {
    let view = &mut pane.source_view;
    view.wrap = !view.wrap;
    view.left = 0;
    let text = if view.wrap {
        "source: long lines wrapped"
    } else {
        "source: long lines cut (< > scroll sideways)"
    };
    ctx.notify(text);
}

/// `$EDITOR` on the selected template's file; the watch reloads it once saved.
pub fn edit_file(pane: &TemplatesPane, ctx: &mut PaneContext) -> Option<Effect> {
    let template = pane.selected()?;
    match &template.origin {
        Origin::File(path) => Some(Effect::EditFile(path.clone())),
        Origin::Bundled => {
            ctx.warn("a bundled template is compiled in: open a copy of its file to edit it");
            None
        }
        _ => {
            ctx.warn("only a template file can be edited here (not a model's or an inline one)");
            None
        }
    }
}

/// Draws the source view into `area` (a title rule, then the text).
pub fn draw(frame: &mut Frame, area: Rect, shows: TemplatesView) {
    let Some((template, source, error_line)) = shown(shows.pane, shows.in_use, shows.preview)
    else {
        return;
    };
    let theme = shows.theme;
    let view = shows.pane.source_view;
    let mode = if view.wrap { "wrap" } else { "cut" };
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        format!(" {} · {} · {mode} ", template.name, template.origin_label()),
        theme.dim(),
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height);
    let gutter = gutter_width(source);
    let width = usize::from(inner.width).saturating_sub(gutter);
    let last = last_top(source, height, width, view.wrap);
    let top = top_now(shows.pane, error_line, height).min(last);
    let mut lines = Vec::new();
    for (index, text) in source.lines().enumerate().skip(top) {
        if lines.len() >= height {
            break;
        }
        let is_error = error_line == Some(index + 1);
        let rows = source_rows(text, width, view);
        for (row, body) in rows.into_iter().enumerate() {
            let mark = match (row, is_error) {
                (0, true) => format!("{:>w$}>", index + 1, w = gutter - 1),
                (0, false) => format!("{:>w$} ", index + 1, w = gutter - 1),
                (_, _) => format!("{:>w$} ", "↪", w = gutter - 1),
            };
            let style = if is_error {
                theme.error()
            } else {
                ratatui::style::Style::new()
            };
            let gutter_style = if is_error { theme.error() } else { theme.dim() };
            lines.push(Line::from(vec![
                Span::styled(mark, gutter_style),
                Span::styled(body, style),
            ]));
        }
    }
    lines.truncate(height);
    frame.render_widget(Paragraph::new(lines), inner);
}

/// A source line as screen rows of at most `width` columns: wrapped, or cut after
/// `view.left` columns. Tabs become four spaces.
fn source_rows(text: &str, width: usize, view: SourceView) -> Vec<String> {
    let expanded = text.replace('\t', "    ");
    let width = width.max(1);
    let mut rows = vec![String::new()];
    let mut used = 0;
    let mut skipped = 0;
    for c in expanded.chars() {
        let w = char_width(c);
        if !view.wrap {
            if skipped < view.left {
                skipped += w.max(1);
                continue;
            }
            if used + w > width {
                break;
            }
        } else if used + w > width {
            rows.push(String::new());
            used = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        used += w;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::{last_top, source_rows, SourceView};

    #[test]
    fn wraps_and_cuts_by_display_width() {
        let wrap = SourceView {
            wrap: true,
            left: 0,
        };
        assert_eq!(source_rows("abcdef", 4, wrap), vec!["abcd", "ef"]);
        assert_eq!(source_rows("日本語", 4, wrap), vec!["日本", "語"]);
        let cut = SourceView {
            wrap: false,
            left: 2,
        };
        assert_eq!(source_rows("abcdefgh", 3, cut), vec!["cde"]);
    }

    #[test]
    fn scrolling_stops_with_the_last_line_at_the_bottom() {
        let source = "1\n2\n3\n4\n5\n";
        assert_eq!(last_top(source, 3, 10, true), 2);
        assert_eq!(last_top(source, 10, 10, true), 0);
        // A long last line takes two rows.
        assert_eq!(last_top("1\n2\n3\nabcdefghijkl", 3, 10, true), 2);
    }
}
