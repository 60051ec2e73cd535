//! Exact attribution in the app: which message produced which prompt bytes.
//!
//! After every render of the current session the app asks the worker for an
//! attribution ([`chatplate_core::worker::Job::Attribute`]), handing back the previous result so
//! only the prefixes an edit touched are rendered again. The worker cancels a running
//! attribution as soon as a newer render is asked for, so typing in a 10,000-message
//! session never waits for it; the result is used only when it explains the shown
//! prompt. Until then the selected-message highlight falls back to the worker's quick
//! content search ([`chatplate_core::worker::locate`]) and the prompt title says so.

use std::ops::Range;
use std::sync::Arc;

use chatplate_core::inspect::Source;
use chatplate_core::worker::inspection::Attributed;
use chatplate_core::worker::{Job, Output, Reply, Template};
use chatplate_render::{RenderError, RenderErrorKind};

use super::preview::Preview;

/// The app's attribution state.
#[derive(Debug, Default)]
pub struct Explanation {
    /// The latest attribution received (possibly of an older prompt): shown when its
    /// generation is the preview's, and reused by the next request either way.
    pub attributed: Option<Arc<Attributed>>,
    /// The generation `attributed` answers.
    pub generation: u64,
    /// The generation last asked for (0: none).
    pub requested: u64,
    /// Why the attribution of the shown prompt failed, if it did.
    pub error: Option<String>,
    /// The template `attributed` comes from (a result is reused only with it).
    template: Option<Arc<Template>>,
}

/// What the prompt pane says about attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributionState {
    /// Being computed (the highlight is the quick content search meanwhile).
    Pending,
    /// Exact, and the template is prefix-monotone.
    Exact,
    /// Exact where possible: the template rewrites earlier output.
    NotMonotone,
    /// Failed (the error is in [`Explanation::error`]).
    Failed,
}

impl Explanation {
    /// The attribution of the shown prompt, when it has arrived.
    pub fn current(&self, preview: &Preview) -> Option<&Attributed> {
        let attributed = self.attributed.as_deref()?;
        // The generation names the session state; the length is a cheap sanity check
        // (comparing megabytes of prompt on every frame would not be).
        let current = self.generation == preview.generation
            && preview.error().is_none()
            && attributed.prompt.len() == preview.text().len();
        current.then_some(attributed)
    }

    /// How far attribution of the shown prompt has got.
    pub fn state(&self, preview: &Preview) -> AttributionState {
        match self.current(preview) {
            Some(a) if a.attribution.monotone() => AttributionState::Exact,
            Some(_) => AttributionState::NotMonotone,
            None if self.error.is_some() => AttributionState::Failed,
            None => AttributionState::Pending,
        }
    }

    /// The prompt byte ranges message `index` produced: exact when attributed, else the
    /// quick search's guess.
    pub fn ranges(&self, preview: &Preview, index: usize) -> Vec<Range<usize>> {
        match self.current(preview) {
            Some(a) => merged(a.attribution.ranges_of(index)),
            None => preview.span(index).cloned().into_iter().collect(),
        }
    }

    /// After a render of the current session arrived (not `stale`): the job that asks
    /// for its attribution, with its generation, unless asked already.
    pub fn request(&mut self, preview: &Preview, stale: bool) -> Option<(u64, Job)> {
        let generation = preview.generation;
        if stale || preview.error().is_some() || self.requested >= generation {
            return None;
        }
        let Ok(Job::Render { template }) = preview.render_job() else {
            return None;
        };
        self.requested = generation;
        self.error = None;
        let same = (self.template.as_ref()).is_some_and(|t| Arc::ptr_eq(t, &template));
        if !same {
            self.attributed = None;
            self.generation = 0;
        }
        let previous = self.attributed.clone();
        self.template = Some(Arc::clone(&template));
        Some((generation, Job::Attribute { template, previous }))
    }

    /// Takes an attribution reply in; returns whether anything shown changed (the
    /// shown render is of generation `shown`).
    pub fn receive(&mut self, reply: Reply, shown: u64) -> bool {
        match reply.result {
            Ok(Output::Attributed(attributed)) => {
                if reply.generation >= self.generation {
                    self.attributed = Some(attributed);
                    self.generation = reply.generation;
                }
                reply.generation == shown
            }
            Ok(_) => false,
            Err(RenderError {
                kind: RenderErrorKind::Cancelled,
                ..
            }) => false,
            Err(err) => {
                let current = reply.generation == shown;
                if current {
                    self.error = Some(err.message);
                }
                current
            }
        }
    }

    /// Whether an attribution of the shown render (of generation `shown`) is still on
    /// its way.
    pub fn pending(&self, shown: u64) -> bool {
        self.requested == shown && self.generation < shown && self.error.is_none()
    }
}

/// Adjacent ranges joined, so a message's turn markers and text highlight as one run.
fn merged(ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match out.last_mut() {
            Some(last) if last.end == range.start => last.end = range.end,
            _ => out.push(range),
        }
    }
    out
}

/// A short description of a prompt byte's producer, for the status line.
pub fn describe(source: Source) -> String {
    use chatplate_core::inspect::Part;
    let part = |p: Part| match p {
        Part::Preamble => "the preamble".to_string(),
        Part::Message(i) => format!("message {}", i + 1),
        Part::End => "the end".to_string(),
    };
    match source {
        Source::Preamble => "the template's preamble (before the first message)".into(),
        Source::Tools => "the tool definitions block".into(),
        Source::Message(i) => format!("message {}", i + 1),
        Source::Continuation(i) => format!("message {} (continued)", i + 1),
        Source::GenerationPrompt => "the generation prompt".into(),
        Source::Ambiguous { from, to } => format!(
            "one of {} … {} (the template is not prefix-monotone here)",
            part(from),
            part(to)
        ),
        Source::Unattributed => "nothing exactly (the prefix renders contradict)".into(),
    }
}
