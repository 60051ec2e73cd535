//! The templates pane: a filterable list of every known template (bundled, `--templates`
//! folders, the opened file) and the selected template's source, with the line of a
//! render error highlighted, or its capabilities. This module holds the pane's state
//! and its action handler; `panes::templates::view` draws it.

mod answers;
pub mod badges;
pub mod info;
pub mod lint;
pub mod origin;
pub mod source;
pub mod view;

use chatplate_core::catalog::TemplateSource;
use chatplate_core::worker::Job;

use crate::tui::context::Effect;

use crate::tui::action::Pane;

use crate::tui::action::TemplateAction;
use crate::tui::context::PaneContext;
use crate::tui::matcher;
use crate::tui::panes::templates::badges::TemplateBadges;
use crate::tui::panes::templates::info::InfoView;
use crate::tui::panes::templates::lint::TemplateLints;
use crate::tui::panes::templates::origin as template_origin;
use crate::tui::panes::templates::source::SourceView;
use crate::tui::screen::Screen;

/// The template list and its filter.
#[derive(Debug)]
pub struct TemplatesPane {
    /// Every template on offer.
    pub catalog: Vec<TemplateSource>,
    /// The filter on the name (the shared matcher, `tui::matcher`).
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
    pub source_view: SourceView,
    /// The capability view (in place of the source) and its per-template cache.
    pub info: InfoView,
    /// Capability badges in the list (from the worker).
    pub badges: TemplateBadges,
    /// The lint's verdicts: a badge per row, findings in the info view.
    pub lints: TemplateLints,
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
            info: InfoView::default(),
            badges: TemplateBadges::default(),
            lints: TemplateLints::default(),
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

    /// Adds the templates not in the list yet (the cache scan's), keeping the selection.
    pub fn add_unknown(&mut self, templates: Vec<TemplateSource>) {
        for template in templates {
            let same = |t: &TemplateSource| t.name == template.name && t.origin == template.origin;
            if !self.catalog.iter().any(same) {
                self.catalog.push(template);
            }
        }
    }

    /// Catalog indices that match the filter: each section (by origin) keeps its
    /// place, its matches best first.
    pub fn visible(&self) -> Vec<usize> {
        let names: Vec<&str> = self.catalog.iter().map(|t| t.name.as_str()).collect();
        let section = |i: usize| template_origin::section(&self.catalog[i]);
        let ranked = matcher::rank(&self.filter, &names);
        matcher::in_sections(ranked, names.len(), section)
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

impl TemplatesPane {
    /// Handles a template-pane action.
    pub fn handle(&mut self, action: TemplateAction, ctx: &mut PaneContext) -> Option<Effect> {
        match action {
            TemplateAction::Select(step) => {
                let page = source::list_height(self, &ctx.screen).max(1);
                self.cursor =
                    crate::tui::dialogs::help::step(self.cursor, self.visible().len(), page, step);
                self.source_top = None;
                self.info.top = 0;
            }
            TemplateAction::Choose => self.choose(ctx),
            TemplateAction::FilterPush(c) => {
                self.filter.push(c);
                self.cursor = 0;
            }
            TemplateAction::FilterPop => {
                self.filter.pop();
                self.cursor = 0;
            }
            TemplateAction::FilterClear => {
                self.filter.clear();
                self.filtering = false;
            }
            TemplateAction::ScrollSource(direction) if self.info.open => {
                let page = usize::from(ctx.screen.height / 3).max(1);
                self.info.scroll(direction, page);
            }
            TemplateAction::ScrollSource(direction) => source::scroll(self, ctx, direction),
            TemplateAction::StartFilter => self.filtering = true,
            TemplateAction::EndFilter => self.filtering = false,
            TemplateAction::ScrollSourceSideways(direction) => {
                source::scroll_sideways(self, ctx, direction)
            }
            TemplateAction::ToggleWrap => source::toggle_wrap(self, ctx),
            TemplateAction::EditFile => return source::edit_file(self, ctx),
            TemplateAction::ToggleInfo => self.info.open = !self.info.open,
        }
        None
    }

    /// Uses the selected template for the session and goes back to where the user was.
    fn choose(&mut self, ctx: &mut PaneContext) {
        let Some(template) = self.selected().cloned() else {
            return ctx.warn("no template matches the filter");
        };
        let name = template.name.clone();
        ctx.use_template(template);
        self.filtering = false;
        ctx.focus(self.came_from);
        ctx.notify(format!("using template {name}"));
    }

    /// The job that asks about the selected template's capabilities, when the info view
    /// is open and they are neither known nor on their way.
    pub fn info_job(&mut self) -> Option<(u64, Job)> {
        let selected = self.visible().get(self.cursor).map(|&i| &self.catalog[i]);
        self.info.request(selected)
    }

    /// The job that asks for the next badges the list's window lacks.
    pub fn badge_job(&mut self, screen: &Screen) -> Option<(u64, Job)> {
        let visible = self.visible();
        self.badges
            .next_job(&self.catalog, &visible, self.cursor, screen)
    }

    /// The job that lints the next template without a verdict (the selected one first).
    pub fn lint_job(&mut self, screen: &Screen) -> Option<(u64, Job)> {
        let visible = self.visible();
        self.lints
            .next_job(&self.catalog, &visible, self.cursor, screen)
    }

    /// The selected template's capabilities, when asked for.
    pub fn selected_info(&self) -> Option<&crate::tui::panes::templates::info::InfoState> {
        self.info.get(self.selected()?)
    }

    /// Whether the shown template's capabilities are still on their way.
    pub fn info_pending(&self) -> bool {
        self.info.pending()
    }
}

#[cfg(test)]
mod tests {
    use chatplate_core::catalog::{self, Origin};

    use super::*;
    use crate::tui::action::Step;
    use crate::tui::files::workspace::Workspace;
    use crate::tui::panes::messages::conversation::example_session;
    use crate::tui::preview::Preview;
    use crate::tui::screen::Screen;

    /// The pane works on its context alone: no app needed.
    #[test]
    fn choosing_asks_the_app_for_the_template_and_the_focus() {
        let dir = std::env::temp_dir();
        let in_use = catalog::default_template();
        let session = example_session(in_use.reference(&dir));
        let mut workspace = Workspace::new(session, None, in_use.clone(), dir);
        let preview = Preview::new(&in_use.source);
        let screen = Screen {
            focus: Pane::Templates,
            left: Pane::Templates,
            width: 120,
            height: 40,
            zoom: false,
        };
        let other = TemplateSource::new("other", "{{ messages|length }}", Origin::Inline);
        let mut pane = TemplatesPane::new(vec![in_use, other], None);
        pane.came_from = Pane::Prompt;
        let mut status = None;
        let mut ctx = PaneContext::new(&mut workspace, &preview, screen, &mut status);
        pane.handle(TemplateAction::Select(Step::Last), &mut ctx);
        pane.handle(TemplateAction::Choose, &mut ctx);
        let asked = ctx.into_requests();
        assert_eq!(asked.template.map(|t| t.name), Some("other".into()));
        assert!(asked.touched, "an unsaved change");
        assert_eq!(asked.focus, Some(Pane::Prompt), "back where the user was");
        assert_eq!(status.map(|s| s.text), Some("using template other".into()));
    }
}
