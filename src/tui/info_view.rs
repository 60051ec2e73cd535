//! The templates pane's info view: `i` shows what the selected template can render
//! (system role, tools, tool calls and responses, parallel calls, argument and content
//! requirements, reasoning, ...) in place of its source, and `i` again shows the source.
//!
//! The answers come from probe renders ([`chatplate_core::inspect`]) run on the worker as a
//! [`Job::Capabilities`] (one coalesced slot; moving to another template replaces the
//! request), so browsing never waits for them: the view says "computing…" until they
//! arrive. Results are cached per template source and probe variables, so coming back
//! to a template shows them at once.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value as Json;

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use chatplate_core::catalog::TemplateSource;
use chatplate_core::inspect::ProbeSettings;
use chatplate_core::worker::capabilities::TemplateInfo;
use chatplate_core::worker::{Job, Output, Reply, Template};
use chatplate_render::RenderErrorKind;

use super::action::Direction;
use super::app::App;
use super::messages_view::truncate;

/// What identifies a probed template: its source and the probe variables (JSON).
type InfoKey = (String, String);

/// One template's capabilities, once asked for.
#[derive(Debug, Clone)]
pub enum InfoState {
    /// The worker is probing it.
    Computing,
    /// The answers.
    Done(Arc<TemplateInfo>),
    /// The probes could not run (the template does not compile, or they timed out).
    Failed(String),
}

/// The info view's state.
#[derive(Debug, Default)]
pub struct InfoView {
    /// The view is shown instead of the template source.
    pub open: bool,
    /// First row shown (`]` / `[` scroll).
    pub top: usize,
    /// Every template asked about, by source and variables.
    cache: HashMap<InfoKey, InfoState>,
    /// The request in flight: its generation and template.
    in_flight: Option<(u64, InfoKey)>,
    /// The last generation used (requests count up on their own).
    generation: u64,
}

/// The probe settings for `template`: its special tokens, `""` where it names none
/// (as `chatplate inspect` does).
pub(super) fn settings_for(template: &TemplateSource) -> ProbeSettings {
    let mut variables = template.token_variables();
    for key in ["bos_token", "eos_token"] {
        variables.entry(key).or_insert_with(|| "".into());
    }
    ProbeSettings {
        variables,
        ..ProbeSettings::default()
    }
}

fn key_of(template: &TemplateSource, settings: &ProbeSettings) -> InfoKey {
    let variables = serde_json::Value::Object(settings.variables.clone()).to_string();
    (template.source.clone(), variables)
}

impl App {
    /// With the info view open, asks the worker about the selected template unless
    /// its answers are cached or on their way.
    pub(super) fn request_info(&mut self) {
        if !self.info.open {
            return;
        }
        let Some(template) = self.templates.selected() else {
            return;
        };
        let settings = settings_for(template);
        let key = key_of(template, &settings);
        if self.info.cache.contains_key(&key) {
            return;
        }
        let job = Job::Capabilities {
            template: Template::new(&template.source, super::preview::app_limits()),
            settings,
        };
        self.info.generation += 1;
        let generation = self.info.generation;
        // A replaced request is cancelled on the worker: forget it so it is asked again.
        if let Some((_, old)) = self.info.in_flight.take() {
            self.info.cache.remove(&old);
        }
        self.info.cache.insert(key.clone(), InfoState::Computing);
        self.info.in_flight = Some((generation, key));
        self.submit_job(generation, job);
    }

    /// Takes a capabilities reply in; returns whether anything shown changed.
    pub(super) fn receive_info(&mut self, reply: Reply) -> bool {
        let Some((generation, _)) = &self.info.in_flight else {
            return false;
        };
        if reply.generation != *generation {
            return false;
        }
        let Some((_, key)) = self.info.in_flight.take() else {
            return false;
        };
        let state = match reply.result {
            Ok(Output::Capabilities(info)) => InfoState::Done(info),
            Ok(_) => return false,
            Err(err) if err.kind == RenderErrorKind::Cancelled => {
                self.info.cache.remove(&key);
                return false;
            }
            Err(err) => InfoState::Failed(err.message),
        };
        self.info.cache.insert(key, state);
        self.info.open
    }

    /// Whether the shown template's capabilities are still on their way.
    pub fn info_pending(&self) -> bool {
        self.info.open && self.info.in_flight.is_some()
    }

    /// The selected template's capabilities, when asked for.
    pub fn selected_info(&self) -> Option<&InfoState> {
        let template = self.templates.selected()?;
        self.info
            .cache
            .get(&key_of(template, &settings_for(template)))
    }

    /// Scrolls the info view a page.
    pub(super) fn scroll_info(&mut self, direction: Direction, page: usize) {
        let top = &mut self.info.top;
        *top = match direction {
            Direction::Down => top.saturating_add(page),
            Direction::Up => top.saturating_sub(page),
        };
    }
}

/// Draws the selected template's capabilities in `area` (where the source goes).
pub fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let Some(template) = app.templates.selected() else {
        return;
    };
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        format!(" {} · capabilities · i: source ", template.name),
        app.theme.dim(),
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let lines = match app.selected_info() {
        Some(InfoState::Done(info)) => info_lines(app, info, usize::from(inner.width)),
        Some(InfoState::Failed(error)) => error
            .lines()
            .map(|l| Line::styled(truncate(l, usize::from(inner.width)), app.theme.error()))
            .collect(),
        Some(InfoState::Computing) | None => vec![Line::styled("computing…", app.theme.dim())],
    };
    let last = lines.len().saturating_sub(usize::from(inner.height));
    let top = u16::try_from(app.info.top.min(last)).unwrap_or(u16::MAX);
    let paragraph = Paragraph::new(lines).scroll((top, 0));
    frame.render_widget(paragraph, inner);
}

/// One row per answer (`key  value`, the key cut with `…` where the pane is narrow),
/// then the template's own variables and the probes it rejected.
fn info_lines(app: &App, info: &TemplateInfo, width: usize) -> Vec<Line<'static>> {
    let longest = info.entries.iter().map(|e| e.key.len()).max().unwrap_or(0);
    let column = longest.min(width.saturating_sub(4));
    let row = |key: &str, value: String, style: Style| {
        let room = column.min(width.saturating_sub(value.chars().count() + 1));
        let key = truncate(key, room);
        Line::from(vec![
            Span::raw(format!("{key:<room$} ")),
            Span::styled(value, style),
        ])
    };
    let mut lines: Vec<Line> = (info.entries.iter())
        .map(|entry| {
            let style = match entry.value {
                Json::Bool(false) | Json::Null => app.theme.dim(),
                _ => Style::default(),
            };
            row(&entry.key, entry.value_text(), style)
        })
        .collect();
    if !info.variables.is_empty() {
        lines.push(Line::styled("variables", app.theme.dim()));
        for (name, effect) in &info.variables {
            lines.push(row(name, effect.clone(), Style::default()));
        }
    }
    if !info.failures.is_empty() {
        lines.push(Line::styled("probes it rejected", app.theme.dim()));
        for failure in &info.failures {
            lines.push(Line::raw(truncate(failure, width)));
        }
    }
    lines
}
