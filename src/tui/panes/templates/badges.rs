//! Capability badges beside each template in the Templates pane: the answers users ask
//! first (system role, tools, tool-call ids, parallel calls, reasoning) as short words.
//!
//! They come from the same probe renders as the info view (`i`), run on the worker as
//! [`Job::Badges`]: one template per request, the lowest priority, cancelled by any
//! render (and asked again afterwards), so browsing and typing never wait for them.
//! Only templates in the list's window are probed (at most a screenful around the
//! cursor, whatever the catalog's size), the selected one first. Results are cached for the session by
//! template source; a row shows `…` until its answer is known and `✗` when the probes
//! could not run (the template does not compile, fails on a plain user message, or they
//! timed out).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value as Json;

use chatplate_core::catalog::TemplateSource;
use chatplate_core::worker::capabilities::TemplateInfo;
use chatplate_core::worker::{Job, Output, Reply, Template};
use chatplate_render::RenderErrorKind;

use crate::tui::action::Pane;
use crate::tui::panes::messages::view::window_start;
use crate::tui::screen::Screen;

/// Each badge: the capability key (as `chatplate inspect --json` names it) and its word.
pub const BADGES: [(&str, &str); 5] = [
    ("supports_system_role", "sys"),
    ("supports_tools", "tools"),
    ("supports_tool_call_id", "ids"),
    ("supports_parallel_tool_calls", "par"),
    ("supports_reasoning", "think"),
];

/// What each badge and mark in the Templates list means, for the help (`?`) and the
/// info view (`i`).
pub const LEGEND: [(&str, &str); 8] = [
    ("sys", "A system message's text appears in the prompt"),
    ("tools", "The tool definitions given appear in the prompt"),
    ("ids", "A tool result's tool_call_id appears in the prompt"),
    ("par", "Two tool calls in one message both appear"),
    (
        "think",
        "Reasoning (thinking) content appears in the prompt",
    ),
    (
        "✗",
        "Not probed: the template does not compile, fails on a plain user message, or \
         timed out",
    ),
    (
        "+",
        "More badges than the row has room for (i lists them all)",
    ),
    ("…", "Being probed"),
];

/// The heading the legend is shown under.
pub const LEGEND_TITLE: &str = "Templates pane: the badges beside each template";

/// One template's badges, once probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadgeState {
    /// The words of the capabilities it has, in [`BADGES`] order.
    Done(Vec<&'static str>),
    /// The probes could not run.
    Failed,
}

/// The badges of every template probed so far.
#[derive(Debug, Default)]
pub struct TemplateBadges {
    /// By template source.
    cache: HashMap<String, BadgeState>,
    /// The whole answers behind the badges, by template source (the conversation's
    /// warnings read the session's template's, see `panes::messages::needs`).
    infos: HashMap<String, Arc<TemplateInfo>>,
    /// The request on its way: its id and template source.
    in_flight: Option<(u64, String)>,
    /// The last request id.
    requests: u64,
}

/// The words for the capabilities `info` reports as present.
pub fn badges_of(info: &TemplateInfo) -> Vec<&'static str> {
    BADGES
        .iter()
        .filter(|(key, _)| {
            (info.entries.iter()).any(|e| e.key == *key && e.value == Json::Bool(true))
        })
        .map(|(_, word)| *word)
        .collect()
}

/// Whether the probes rendered at all (`renders_user_message`).
fn renders(info: &TemplateInfo) -> bool {
    (info.entries.iter()).any(|e| e.key == "renders_user_message" && e.value == Json::Bool(true))
}

impl TemplateBadges {
    /// The job that asks for the badges of the next template in the list's window that
    /// has none (the one at `cursor` first), unless one is on its way: its id and the
    /// job. `visible` are the catalog indices the filter shows.
    pub fn next_job(
        &mut self,
        catalog: &[TemplateSource],
        visible: &[usize],
        cursor: usize,
        screen: &Screen,
    ) -> Option<(u64, Job)> {
        if self.in_flight.is_some() {
            return None;
        }
        let template = in_reach(catalog, visible, cursor, screen)
            .find(|t| !self.cache.contains_key(&t.source))?;
        let job = Job::Badges {
            template: Template::new(&template.source, crate::tui::preview::app_limits()),
            settings: crate::tui::panes::templates::info::settings_for(template),
        };
        self.requests += 1;
        self.in_flight = Some((self.requests, template.source.clone()));
        Some((self.requests, job))
    }

    /// Takes a badge reply in. `None`: not the answer awaited; else whether the list
    /// changed (the next template is asked about either way).
    pub fn receive(&mut self, reply: Reply) -> Option<bool> {
        let matches = (self.in_flight.as_ref()).is_some_and(|(id, _)| *id == reply.generation);
        let (_, source) = self.in_flight.take().filter(|_| matches)?;
        let state = match reply.result {
            // A template that fails on a plain user message (it may need variables)
            // has no answers worth a badge.
            Ok(Output::Capabilities(info)) if renders(&info) => {
                self.infos.insert(source.clone(), Arc::clone(&info));
                BadgeState::Done(badges_of(&info))
            }
            // Cancelled by a render: asked again once the worker is free.
            Err(err) if err.kind == RenderErrorKind::Cancelled => return Some(false),
            _ => BadgeState::Failed,
        };
        self.cache.insert(source, state);
        Some(true)
    }

    /// The job that probes `template` (the session's own, which the list may not show)
    /// unless its answers are known or a request is on its way.
    pub fn job_for(&mut self, template: &TemplateSource) -> Option<(u64, Job)> {
        if self.in_flight.is_some() || self.cache.contains_key(&template.source) {
            return None;
        }
        let job = Job::Badges {
            template: Template::new(&template.source, crate::tui::preview::app_limits()),
            settings: crate::tui::panes::templates::info::settings_for(template),
        };
        self.requests += 1;
        self.in_flight = Some((self.requests, template.source.clone()));
        Some((self.requests, job))
    }

    /// The probe answers for the template with `source`, when known.
    pub fn info(&self, source: &str) -> Option<&Arc<TemplateInfo>> {
        self.infos.get(source)
    }

    /// Whether a badge request is on its way.
    pub fn pending(&self) -> bool {
        self.in_flight.is_some()
    }

    /// The badges of the template with `source`, when known.
    pub fn get(&self, source: &str) -> Option<&BadgeState> {
        self.cache.get(source)
    }
}

/// The badge text for a list row, cut to fit `room` columns: whole badges are dropped
/// from the right (names matter more), with a `+` saying some were; `…` while unknown.
pub fn badge_text(state: Option<&BadgeState>, room: usize) -> String {
    let words: Vec<&str> = match state {
        None => vec!["…"],
        Some(BadgeState::Failed) => vec!["✗"],
        Some(BadgeState::Done(words)) => words.clone(),
    };
    let width = |text: &str| text.chars().count();
    for keep in (0..=words.len()).rev() {
        let mut text = words[..keep].join(" ");
        if keep < words.len() {
            text.push('+');
        }
        if width(&text) <= room {
            return text;
        }
    }
    String::new()
}

/// The templates a background job works through, in order: the one at `cursor`, then a
/// screenful of the list around it, whether or not the pane is shown right now (a few
/// milliseconds per template, once per session). `visible` are the catalog indices the
/// filter shows. Shared by the badges and the lint verdicts.
pub(super) fn in_reach<'a>(
    catalog: &'a [TemplateSource],
    visible: &'a [usize],
    cursor: usize,
    screen: &Screen,
) -> impl Iterator<Item = &'a TemplateSource> {
    let shown = crate::tui::layout::pane_height(screen, Pane::Templates);
    let height = shown.max(usize::from(screen.height));
    let start = window_start(cursor, visible.len(), height);
    let window = visible.iter().skip(start).take(height);
    let selected = visible.get(cursor).into_iter();
    selected.chain(window).map(|&index| &catalog[index])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legend_explains_every_badge() {
        for (_, word) in BADGES {
            assert!(LEGEND.iter().any(|(w, _)| *w == word), "{word}");
        }
    }

    #[test]
    fn badges_drop_from_the_right_to_fit() {
        let done = BadgeState::Done(vec!["sys", "tools", "par"]);
        assert_eq!(badge_text(Some(&done), 20), "sys tools par");
        assert_eq!(badge_text(Some(&done), 12), "sys tools+");
        assert_eq!(badge_text(Some(&done), 9), "sys+");
        assert_eq!(badge_text(Some(&done), 1), "+");
        assert_eq!(badge_text(Some(&done), 0), "");
        assert_eq!(badge_text(None, 5), "…");
        assert_eq!(badge_text(Some(&BadgeState::Failed), 1), "✗");
        assert_eq!(badge_text(Some(&BadgeState::Done(vec![])), 9), "");
    }
}
