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

use super::app::App;

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

impl App {
    /// The attribution of the shown prompt, when it has arrived.
    pub fn attribution(&self) -> Option<&Attributed> {
        let attributed = self.explanation.attributed.as_deref()?;
        // The generation names the session state; the length is a cheap sanity check
        // (comparing megabytes of prompt on every frame would not be).
        let current = self.explanation.generation == self.preview.generation
            && self.preview.error().is_none()
            && attributed.prompt.len() == self.preview.text().len();
        current.then_some(attributed)
    }

    /// How far attribution of the shown prompt has got.
    pub fn attribution_state(&self) -> AttributionState {
        match self.attribution() {
            Some(a) if a.attribution.monotone() => AttributionState::Exact,
            Some(_) => AttributionState::NotMonotone,
            None if self.explanation.error.is_some() => AttributionState::Failed,
            None => AttributionState::Pending,
        }
    }

    /// The prompt byte ranges the selected message produced: exact when attributed,
    /// else the quick search's guess.
    pub fn selected_ranges(&self) -> Vec<Range<usize>> {
        let selected = self.messages.selected;
        match self.attribution() {
            Some(a) => merged(a.attribution.ranges_of(selected)),
            None => self.preview.span(selected).cloned().into_iter().collect(),
        }
    }

    /// Bytes each message produced exactly, when attributed.
    pub fn message_bytes(&self) -> Option<Vec<usize>> {
        self.attribution().map(|a| a.attribution.message_bytes())
    }

    /// The producer of prompt byte `offset`, when attributed.
    pub fn source_at(&self, offset: usize) -> Option<Source> {
        self.attribution()?.attribution.source_at(offset)
    }

    /// After a render of the current session arrived: asks for its attribution.
    pub(super) fn request_attribution(&mut self) {
        let generation = self.preview.generation;
        if self.is_stale() || self.preview.error().is_some() {
            return;
        }
        if self.explanation.requested >= generation {
            return;
        }
        let Ok(Job::Render { template }) = self.preview.render_job() else {
            return;
        };
        self.explanation.requested = generation;
        self.explanation.error = None;
        let explanation = &mut self.explanation;
        let same = explanation
            .template
            .as_ref()
            .is_some_and(|t| Arc::ptr_eq(t, &template));
        if !same {
            explanation.attributed = None;
            explanation.generation = 0;
        }
        let previous = explanation.attributed.clone();
        explanation.template = Some(Arc::clone(&template));
        self.submit_job(generation, Job::Attribute { template, previous });
    }

    /// Takes an attribution reply in; returns whether anything shown changed.
    pub(super) fn receive_attribution(&mut self, reply: Reply) -> bool {
        match reply.result {
            Ok(Output::Attributed(attributed)) => {
                if reply.generation >= self.explanation.generation {
                    self.explanation.attributed = Some(attributed);
                    self.explanation.generation = reply.generation;
                }
                reply.generation == self.preview.generation
            }
            Ok(_) => false,
            Err(RenderError {
                kind: RenderErrorKind::Cancelled,
                ..
            }) => false,
            Err(err) => {
                let current = reply.generation == self.preview.generation;
                if current {
                    self.explanation.error = Some(err.message);
                }
                current
            }
        }
    }

    /// Whether an attribution of the shown render is still on its way (tests wait for
    /// it through [`App::settle`]).
    pub fn attribution_pending(&self) -> bool {
        self.explanation.requested == self.preview.generation
            && self.explanation.generation < self.preview.generation
            && self.explanation.error.is_none()
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

impl App {
    /// From the start of the selected message's first range to the end of its last.
    pub fn selected_extent(&self) -> Option<Range<usize>> {
        let ranges = self.selected_ranges();
        Some(ranges.first()?.start..ranges.last()?.end)
    }
}
