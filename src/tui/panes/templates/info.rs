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

use crate::tui::action::Direction;
use crate::tui::panes::messages::view::truncate;
use crate::tui::panes::templates::badges;
use crate::tui::panes::templates::TemplatesPane;
use crate::tui::theme::Theme;

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
pub(in crate::tui) fn settings_for(template: &TemplateSource) -> ProbeSettings {
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

impl InfoView {
    /// With the view open, the job that asks the worker about `template` (the selected
    /// one) unless its answers are cached or on their way: its generation and the job.
    pub fn request(&mut self, template: Option<&TemplateSource>) -> Option<(u64, Job)> {
        if !self.open {
            return None;
        }
        let template = template?;
        let settings = settings_for(template);
        let key = key_of(template, &settings);
        if self.cache.contains_key(&key) {
            return None;
        }
        let job = Job::Capabilities {
            template: Template::new(&template.source, crate::tui::preview::app_limits()),
            settings,
        };
        self.generation += 1;
        // A replaced request is cancelled on the worker: forget it so it is asked again.
        if let Some((_, old)) = self.in_flight.take() {
            self.cache.remove(&old);
        }
        self.cache.insert(key.clone(), InfoState::Computing);
        self.in_flight = Some((self.generation, key));
        Some((self.generation, job))
    }

    /// Takes a capabilities reply in; returns whether anything shown changed.
    pub fn receive(&mut self, reply: Reply) -> bool {
        let Some((generation, _)) = &self.in_flight else {
            return false;
        };
        if reply.generation != *generation {
            return false;
        }
        let Some((_, key)) = self.in_flight.take() else {
            return false;
        };
        let state = match reply.result {
            Ok(Output::Capabilities(info)) => InfoState::Done(info),
            Ok(_) => return false,
            Err(err) if err.kind == RenderErrorKind::Cancelled => {
                self.cache.remove(&key);
                return false;
            }
            Err(err) => InfoState::Failed(err.message),
        };
        self.cache.insert(key, state);
        self.open
    }

    /// Whether the shown template's capabilities are still on their way.
    pub fn pending(&self) -> bool {
        self.open && self.in_flight.is_some()
    }

    /// `template`'s capabilities, when asked for.
    pub fn get(&self, template: &TemplateSource) -> Option<&InfoState> {
        self.cache.get(&key_of(template, &settings_for(template)))
    }

    /// Scrolls the view a page.
    pub fn scroll(&mut self, direction: Direction, page: usize) {
        self.top = match direction {
            Direction::Down => self.top.saturating_add(page),
            Direction::Up => self.top.saturating_sub(page),
        };
    }
}

/// Draws the selected template's capabilities in `area` (where the source goes).
pub fn draw(frame: &mut Frame, area: Rect, pane: &TemplatesPane, theme: Theme) {
    let Some(template) = pane.selected() else {
        return;
    };
    let block = Block::default().borders(Borders::TOP).title(Span::styled(
        format!(" {} · lint and capabilities · i: source ", template.name),
        theme.dim(),
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let mut lines =
        crate::tui::panes::templates::lint::info_lines(theme, pane.lints.get(template), width);
    lines.push(Line::styled("capabilities", theme.dim()));
    lines.extend(match pane.info.get(template) {
        Some(InfoState::Done(info)) => info_lines(theme, info, width),
        Some(InfoState::Failed(error)) => error
            .lines()
            .map(|l| Line::styled(truncate(l, width), theme.error()))
            .collect(),
        Some(InfoState::Computing) | None => vec![Line::styled("computing…", theme.dim())],
    });
    let last = lines.len().saturating_sub(usize::from(inner.height));
    let top = u16::try_from(pane.info.top.min(last)).unwrap_or(u16::MAX);
    let paragraph = Paragraph::new(lines).scroll((top, 0));
    frame.render_widget(paragraph, inner);
}

/// One row per answer (`key  value`, the key cut with `…` where the pane is narrow),
/// then the template's own variables and the probes it rejected.
fn info_lines(theme: Theme, info: &TemplateInfo, width: usize) -> Vec<Line<'static>> {
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
                Json::Bool(false) | Json::Null => theme.dim(),
                _ => Style::default(),
            };
            row(&entry.key, entry.value_text(), style)
        })
        .collect();
    if !info.variables.is_empty() {
        lines.push(Line::styled("variables", theme.dim()));
        for (name, effect) in &info.variables {
            lines.push(row(name, effect.clone(), Style::default()));
        }
    }
    if !info.failures.is_empty() {
        lines.push(Line::styled("probes it rejected", theme.dim()));
        for failure in &info.failures {
            lines.push(Line::raw(truncate(failure, width)));
        }
    }
    lines.extend(legend_lines(theme, width));
    lines
}

/// The badges of the list explained, under the answers they summarise.
fn legend_lines(theme: Theme, width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled("badges in the list", theme.dim())];
    for (word, meaning) in badges::LEGEND {
        // Wrapped, not cut: the pane is narrow and the meaning is the point.
        let parts = crate::tui::dialogs::help::wrap(meaning, width.saturating_sub(6).max(10));
        for (i, part) in parts.into_iter().enumerate() {
            let word = if i == 0 { word } else { "" };
            lines.push(Line::raw(format!("{word:<6}{part}")));
        }
    }
    lines
}
