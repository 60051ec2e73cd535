//! The lint's verdict on the templates in the Templates pane: a badge on each row (the
//! most serious finding's rule id) and the findings, each with its fix, at the top of
//! the info view (`i`).
//!
//! The lint runs on the worker as [`Job::Lint`] at the lowest priority, one template
//! per request, the selected one first, then the list's window (as the capability
//! badges do), so browsing and typing never wait for it; a render cancels it and it is
//! asked again. Results are kept for the session by template (its source and where it
//! came from, since a GGUF's or a model folder's surroundings change the verdict). The
//! config file's `"lint"` policy applies ([`set_policy`]).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use ratatui::text::Line;

use chatplate_core::catalog::TemplateSource;
use chatplate_core::lint::{LintOptions, Policy, Severity, TemplateLint};
use chatplate_core::worker::{Job, Output, Reply};
use chatplate_render::RenderErrorKind;

use crate::tui::screen::Screen;
use crate::tui::theme::Theme;

static POLICY: OnceLock<Policy> = OnceLock::new();

/// Sets the app's lint policy (the config file's `"lint"` section), once, at start.
pub fn set_policy(policy: Policy) {
    let _ = POLICY.set(policy);
}

/// One template's verdict, once asked for.
#[derive(Debug, Clone)]
pub enum LintState {
    /// The findings.
    Done(Arc<TemplateLint>),
    /// The lint could not run (it timed out).
    Failed(String),
}

/// What identifies a linted template: its source and where it came from.
type LintKey = (String, String);

fn key_of(template: &TemplateSource) -> LintKey {
    (template.source.clone(), template.origin_label())
}

/// The verdicts on every template linted so far.
#[derive(Debug, Default)]
pub struct TemplateLints {
    cache: HashMap<LintKey, LintState>,
    /// The request on its way: its id and template.
    in_flight: Option<(u64, LintKey)>,
    requests: u64,
}

impl TemplateLints {
    /// The job that lints the next template without a verdict: the one at `cursor`
    /// first, then the list's window; `None` while one is on its way.
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
        let template = super::badges::in_reach(catalog, visible, cursor, screen)
            .find(|t| !self.cache.contains_key(&key_of(t)))?;
        let mut options = LintOptions::default();
        options.policy = POLICY.get().cloned().unwrap_or_default();
        options.limits = crate::tui::preview::app_limits();
        let job = Job::Lint {
            template: Box::new(template.clone()),
            options: Box::new(options),
        };
        self.requests += 1;
        self.in_flight = Some((self.requests, key_of(template)));
        Some((self.requests, job))
    }

    /// Takes a lint reply in. `None`: not the answer awaited; else whether anything
    /// shown changed.
    pub fn receive(&mut self, reply: Reply) -> Option<bool> {
        let matches = (self.in_flight.as_ref()).is_some_and(|(id, _)| *id == reply.generation);
        let (_, key) = self.in_flight.take().filter(|_| matches)?;
        let state = match reply.result {
            Ok(Output::Lint(report)) => LintState::Done(report),
            // Cancelled by a render: asked again once the worker is free.
            Err(err) if err.kind == RenderErrorKind::Cancelled => return Some(false),
            Err(err) => LintState::Failed(err.message),
            Ok(_) => return Some(false),
        };
        self.cache.insert(key, state);
        Some(true)
    }

    /// Whether a lint is on its way.
    pub fn pending(&self) -> bool {
        self.in_flight.is_some()
    }

    /// `template`'s verdict, when known.
    pub fn get(&self, template: &TemplateSource) -> Option<&LintState> {
        self.cache.get(&key_of(template))
    }
}

/// The row's badge: the most serious finding's rule id (`+N` more), marked by its
/// severity (`✗` error, `!` warning); nothing for a template with only info findings or
/// none, or not linted yet.
pub fn badge(state: Option<&LintState>) -> Option<(String, Severity)> {
    let Some(LintState::Done(report)) = state else {
        return None;
    };
    let worst = (report.findings.iter())
        .filter(|f| f.severity > Severity::Info)
        .max_by_key(|f| f.severity)?;
    let serious = (report.findings.iter())
        .filter(|f| f.severity > Severity::Info)
        .count();
    let mark = if worst.severity == Severity::Error {
        "✗"
    } else {
        "!"
    };
    let more = if serious > 1 {
        format!("+{}", serious - 1)
    } else {
        String::new()
    };
    Some((format!("{mark}{}{more}", worst.rule), worst.severity))
}

/// The info view's lint section: each finding's severity and rule, what happens and its
/// fix, wrapped to `width`.
pub fn info_lines(theme: Theme, state: Option<&LintState>, width: usize) -> Vec<Line<'static>> {
    let wrap = |text: &str| crate::tui::dialogs::help::wrap(text, width.saturating_sub(2).max(10));
    let mut lines = vec![Line::styled("lint", theme.dim())];
    let report = match state {
        None => return [lines, vec![Line::styled("  computing…", theme.dim())]].concat(),
        Some(LintState::Failed(error)) => {
            lines.extend(
                wrap(error)
                    .into_iter()
                    .map(|l| Line::styled(format!("  {l}"), theme.error())),
            );
            return lines;
        }
        Some(LintState::Done(report)) => report,
    };
    if report.findings.is_empty() {
        lines.push(Line::raw("  no findings"));
    }
    for finding in &report.findings {
        let style = match finding.severity {
            Severity::Error => theme.error(),
            Severity::Warning => theme.key(),
            Severity::Info => theme.dim(),
        };
        let mut head = format!("{} {}", finding.severity, finding.rule);
        if let Some(at) = finding.location {
            head.push_str(&format!(" (line {}, column {})", at.line, at.column));
        }
        lines.push(Line::styled(head, style));
        for part in wrap(&finding.message) {
            lines.push(Line::raw(format!("  {part}")));
        }
        for part in wrap(&format!("fix: {}", finding.fix)) {
            lines.push(Line::styled(format!("  {part}"), theme.dim()));
        }
    }
    lines
}
