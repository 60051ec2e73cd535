//! The templates pane: a filterable list of every known template (bundled, `--templates`
//! folders, the opened file) and the selected template's source, with the line of a
//! render error highlighted.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use chatplate_core::catalog::TemplateSource;

use super::action::Effect;
use super::action::{Pane, TemplateAction};
use super::app::App;
use super::badges::badge_text;
use super::messages_view::{pane_block, truncate, window_start};
use super::template_origin;

/// The template list and its filter.
#[derive(Debug, Clone)]
pub struct TemplatesPane {
    /// Every template on offer.
    pub catalog: Vec<TemplateSource>,
    /// Case-insensitive substring filter on the name.
    pub filter: String,
    /// The cursor, as an index into [`TemplatesPane::visible`].
    pub cursor: usize,
    /// First source line shown; `None` follows the error line.
    pub source_top: Option<usize>,
    /// Keys go to the filter (after `/`).
    pub filtering: bool,
    /// Where focus returns once a template is chosen.
    pub came_from: Pane,
    /// How the source view shows long lines.
    pub source_view: super::template_source::SourceView,
}

impl TemplatesPane {
    /// The pane with `current` selected (added to the list if it is not there).
    pub fn new(catalog: Vec<TemplateSource>, current: Option<&TemplateSource>) -> Self {
        let mut pane = TemplatesPane {
            catalog,
            filter: String::new(),
            cursor: 0,
            source_top: None,
            filtering: false,
            came_from: Pane::Messages,
            source_view: Default::default(),
        };
        if let Some(current) = current {
            pane.remember(current);
        }
        pane
    }

    /// Adds or refreshes `template` in the list and puts the cursor on it.
    pub fn remember(&mut self, template: &TemplateSource) {
        let same = |t: &TemplateSource| t.name == template.name && t.origin == template.origin;
        match self.catalog.iter().position(same) {
            Some(index) => self.catalog[index] = template.clone(),
            None => self.catalog.push(template.clone()),
        }
        self.filter.clear();
        self.cursor = self.catalog.iter().position(same).unwrap_or(0);
    }

    /// Catalog indices that match the filter.
    pub fn visible(&self) -> Vec<usize> {
        let filter = self.filter.to_lowercase();
        (0..self.catalog.len())
            .filter(|&i| self.catalog[i].name.to_lowercase().contains(&filter))
            .collect()
    }

    /// The template under the cursor.
    pub fn selected(&self) -> Option<&TemplateSource> {
        self.visible().get(self.cursor).map(|&i| &self.catalog[i])
    }

    /// Appends pasted text to the filter (first line only).
    pub fn filter_paste(&mut self, text: &str) {
        self.filter
            .push_str(text.lines().next().unwrap_or_default());
        self.cursor = 0;
    }
}

impl App {
    /// Handles a template-pane action.
    pub(super) fn update_templates(&mut self, action: TemplateAction) -> Option<Effect> {
        let pane = &mut self.templates;
        match action {
            TemplateAction::Select(step) => {
                let page = super::template_source::list_height(self).max(1);
                let pane = &mut self.templates;
                pane.cursor = super::help::step(pane.cursor, pane.visible().len(), page, step);
                pane.source_top = None;
                self.info.top = 0;
            }
            TemplateAction::Choose => self.choose_template(),
            TemplateAction::FilterPush(c) => {
                pane.filter.push(c);
                pane.cursor = 0;
            }
            TemplateAction::FilterPop => {
                pane.filter.pop();
                pane.cursor = 0;
            }
            TemplateAction::FilterClear => {
                pane.filter.clear();
                pane.filtering = false;
            }
            TemplateAction::ScrollSource(direction) if self.info.open => {
                let page = usize::from(self.screen.height / 3).max(1);
                self.scroll_info(direction, page);
            }
            TemplateAction::ScrollSource(direction) => self.scroll_source(direction),
            TemplateAction::StartFilter => pane.filtering = true,
            TemplateAction::EndFilter => pane.filtering = false,
            TemplateAction::ScrollSourceSideways(direction) => self.scroll_sideways(direction),
            TemplateAction::ToggleWrap => self.toggle_source_wrap(),
            TemplateAction::EditFile => return self.edit_template_file(),
            TemplateAction::ToggleInfo => self.info.open = !self.info.open,
        }
        self.request_info();
        None
    }

    fn choose_template(&mut self) {
        let Some(template) = self.templates.selected().cloned() else {
            return self.warn("no template matches the filter");
        };
        let name = template.name.clone();
        self.use_template(template);
        self.workspace.touch();
        self.templates.filtering = false;
        let back = self.templates.came_from;
        self.focus_pane(back);
        self.notify(format!("using template {name}"));
    }
}

/// Draws the pane: filter line, list, then the source.
pub fn draw(frame: &mut Frame, area: Rect, app: &App, focused: bool) {
    let block = pane_block("Templates", focused, app.theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let pane = &app.templates;
    let list_height = super::template_source::list_rows(pane.catalog.len(), inner.height);
    let [filter_area, list_area, source_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(list_height),
        Constraint::Min(0),
    ])
    .areas(inner);
    let filter = if pane.filtering || !pane.filter.is_empty() {
        Line::from(vec![
            Span::styled("filter: ", app.theme.dim()),
            Span::raw(pane.filter.clone()),
            Span::styled(if pane.filtering { "▏" } else { "" }, app.theme.dim()),
        ])
    } else {
        Line::styled("/ filters · Enter uses", app.theme.dim())
    };
    frame.render_widget(Paragraph::new(filter), filter_area);
    frame.render_widget(
        Paragraph::new(list_lines(app, list_area, focused)),
        list_area,
    );
    if app.info.open {
        super::info_view::draw(frame, source_area, app);
    } else {
        super::template_source::draw(frame, source_area, app);
    }
}

/// A list row: the name, then its capability badges right-aligned in what room the
/// name leaves (badges go first when the pane is narrow; the name is cut only when it
/// alone is too wide).
fn badged_line(app: &App, template: &TemplateSource, name: &str, width: u16) -> Line<'static> {
    use unicode_width::UnicodeWidthStr;
    let width = usize::from(width);
    let name = truncate(name, width);
    let room = width.saturating_sub(name.width() + 1);
    let badges = badge_text(app.badges_for(&template.source), room);
    if badges.is_empty() {
        return Line::raw(name);
    }
    let pad = width.saturating_sub(name.width() + badges.width());
    Line::from(vec![
        Span::raw(name),
        Span::raw(" ".repeat(pad)),
        Span::styled(badges, app.theme.dim()),
    ])
}

fn list_lines(app: &App, area: Rect, focused: bool) -> Vec<Line<'static>> {
    let pane = &app.templates;
    let visible = pane.visible();
    if visible.is_empty() {
        return vec![Line::styled("no match", app.theme.dim())];
    }
    let height = usize::from(area.height);
    let start = window_start(pane.cursor, visible.len(), height);
    let in_use = &app.workspace.template;
    let mut lines = Vec::new();
    let mut cursor_line = None;
    for (row, &index) in visible.iter().enumerate().skip(start) {
        let template = &pane.catalog[index];
        let section = template_origin::section(template);
        let first_of_section = match row.checked_sub(1).map(|r| visible[r]) {
            Some(before) => template_origin::section(&pane.catalog[before]) != section,
            None => section != "Bundled",
        };
        if first_of_section {
            lines.push(Line::styled(format!("─ {section}"), app.theme.dim()));
        }
        let mark = if template.name == in_use.name && template.origin == in_use.origin {
            "● "
        } else {
            "  "
        };
        let label = template_origin::label(&pane.catalog, index);
        let line = badged_line(app, template, &format!("{mark}{label}"), area.width);
        if row == pane.cursor {
            cursor_line = Some(lines.len());
        }
        lines.push(if focused && row == pane.cursor {
            line.patch_style(app.theme.cursor())
        } else {
            line
        });
    }
    // Headings can push the cursor row below the window: scroll it back into view.
    if let Some(at) = cursor_line.filter(|&at| at >= height) {
        lines.drain(..=at - height);
    }
    lines.truncate(height);
    lines
}
