//! The turn-cost column of the message list (`$` toggles it): on each user message that
//! follows a reply, what a server with a prefix cache processes again when it arrives,
//! summed in the pane's title; in tokens of the session's tokenizer, else in bytes.
//! Counted on the worker ([`chatplate_core::worker::Job::TurnCosts`]) a slice of time
//! at a time: an incomplete answer is shown and asked again from where it stopped, and
//! turns whose messages did not change are reused.

use std::sync::Arc;

use chatplate_core::worker::turn_costs::TurnCostReport;
use chatplate_core::worker::{Job, JobKind, Output, Reply};
use chatplate_render::RenderErrorKind;

use crate::tui::jobs::Background;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;
use crate::tui::panes::prompt::tokens::tokenizer_choice;

/// The column's state: on or off, the latest answer, what is asked.
#[derive(Debug, Default)]
pub struct TurnCostState {
    enabled: bool,
    latest: Option<Arc<TurnCostReport>>,
    /// The generation `latest` (or `error`) answers.
    answered: u64,
    /// The generation asked for, while a request is in flight.
    asked: Option<u64>,
    error: Option<String>,
}

impl TurnCostState {
    /// Shows or hides the column (asking for the costs when shown).
    pub fn toggle(&mut self) {
        self.enabled = !self.enabled;
        self.answered = 0;
        self.error = None;
    }

    /// Whether the column is shown.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The column's text for message `index`: `↻123t` on a turn's user message.
    pub fn cell(&self, index: usize) -> Option<String> {
        let report = self.latest.as_ref().filter(|_| self.enabled)?;
        let turn = report.costs.at(index)?;
        Some(match &turn.cost {
            Ok(cost) => format!("↻{}{}", cost.reprocessed, report.costs.unit.suffix()),
            Err(_) => "↻?".into(),
        })
    }

    /// The pane title's note: `↻` and the sum over the turns (`t` tokens, `B` bytes),
    /// `…` while counting.
    pub fn title(&self, generation: u64) -> Option<String> {
        if !self.enabled {
            return None;
        }
        if self.error.is_some() {
            // The status line has room for why; the pane's title does not.
            return Some("↻ failed".into());
        }
        let Some(report) = &self.latest else {
            return Some("↻…".into());
        };
        let costs = &report.costs;
        let counting = !costs.complete || self.answered < generation;
        Some(format!(
            "↻{}{}{}",
            costs.total(),
            costs.unit.suffix(),
            if counting { "…" } else { "" }
        ))
    }

    fn done(&self, generation: u64) -> bool {
        self.answered >= generation
            && (self.error.is_some() || self.latest.as_ref().is_some_and(|l| l.costs.complete))
    }
}

impl Background for TurnCostState {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::TurnCosts
    }

    /// While shown: the costs of the shown render, again until complete.
    fn request(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        let generation = view.preview.generation;
        if !self.enabled || view.stale() || self.asked.is_some() || self.done(generation) {
            return None;
        }
        let template = view.preview.template()?;
        self.asked = Some(generation);
        let job = Job::TurnCosts {
            template,
            choice: tokenizer_choice(view.workspace),
            previous: self.latest.clone(),
        };
        Some((generation, job))
    }

    fn receive(&mut self, reply: Reply, _view: &JobView, said: &mut Said) -> bool {
        if self.asked != Some(reply.generation) {
            return false;
        }
        self.asked = None;
        match reply.result {
            Ok(Output::TurnCosts(report)) => {
                // Why the counts are bytes, once: the title's `B` alone does not say.
                let before = self.latest.as_ref().and_then(|l| l.no_tokenizer.clone());
                match &report.no_tokenizer {
                    Some(why) if before.as_ref() != Some(why) => {
                        said.notify(format!("turn cost in bytes: {why}"));
                    }
                    _ => {}
                }
                self.latest = Some(report);
                self.error = None;
            }
            // A newer render replaced it: asked again for that one.
            Err(err) if err.kind == RenderErrorKind::Cancelled => return false,
            Err(err) => {
                said.warn(format!("turn cost: {}", err.message));
                self.error = Some(err.message);
            }
            Ok(_) => return false,
        }
        self.answered = reply.generation;
        true
    }

    /// Shown and not complete for the shown render (never without a template to count
    /// with: nothing is asked then).
    fn pending(&self, view: &JobView) -> bool {
        self.enabled && view.preview.template().is_some() && !self.done(view.preview.generation)
    }
}
