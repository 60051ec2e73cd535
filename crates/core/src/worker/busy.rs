//! What the worker is computing right now, readable from the caller's thread without
//! waiting for a reply: the app shows a background job that has run for a while (the
//! attribution of a template whose prefixes cannot be predicted can take seconds at
//! 10,000 messages) and offers to stop it ([`super::Worker::stop_background`]).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::JobKind;

/// The job the worker's runner is on, and since when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy {
    /// Its kind.
    pub kind: JobKind,
    /// When it started.
    pub since: Instant,
}

/// The dispatcher's side writes it, the handle's side reads it.
#[derive(Debug, Clone, Default)]
pub(super) struct BusySlot(Arc<Mutex<Option<Busy>>>);

impl BusySlot {
    /// What runs now (`None`: the runner is idle).
    pub(super) fn set(&self, busy: Option<Busy>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = busy;
    }

    /// The running job, if any.
    pub(super) fn get(&self) -> Option<Busy> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl JobKind {
    /// What a job of this kind computes, for the status line: `attribution`.
    pub fn what(self) -> &'static str {
        match self {
            JobKind::Render => "the render",
            JobKind::Attribute => "attribution",
            JobKind::Open => "opening",
            JobKind::ScanCache => "the model cache scan",
            JobKind::Tokenize => "tokens",
            JobKind::Capabilities => "capability probes",
            JobKind::Badges => "template badges",
            JobKind::Values => "the unused-value probe",
            JobKind::Compare => "the comparison",
            JobKind::Parse => "the output parser",
            JobKind::RoundTrips => "round trips",
            JobKind::GenerationMarks => "generation marks",
            JobKind::Lint => "lint",
            JobKind::Matrix => "the engine matrix",
            JobKind::Knobs => "the template's knobs",
            JobKind::TurnCosts => "turn costs",
        }
    }
}
