//! The prompt of the latest render, handed to the jobs that explain it.
//!
//! The app asks for an attribution (and the selected message's unused values) right
//! after each render arrives, on the same conversation: rendering the prompt again cost
//! each a whole render per keystroke (seconds on a quadratic template at 10,000
//! messages). The dispatcher notes which conversation version and template each render
//! ran on; a later job on that very version and template gets the prompt instead of
//! rendering it. The next render, after an edit, gets where the latest one found each
//! message (see `relocate`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use chatplate_render::RenderError;

use super::relocate::Located;
use super::snapshot::Snapshot;
use super::{Job, Output, Template};

/// The conversation version, messages and template a running render started on.
#[derive(Debug, Clone)]
pub(super) struct Started {
    version: u64,
    template: Arc<Template>,
    messages: Arc<Vec<Arc<Json>>>,
    at: Instant,
}

/// A prompt the latest render made, and how long that took (what one more render of
/// this conversation is expected to cost).
pub(super) type EarlierPrompt = (Arc<str>, Duration);

/// What a job may take from the latest render instead of doing it again.
#[derive(Debug, Default)]
pub(super) struct Earlier {
    /// The prompt, when the job would render exactly it.
    pub(crate) prompt: Option<EarlierPrompt>,
    /// Where the messages were found (for a render).
    pub(crate) located: Option<Arc<Located>>,
}

/// The latest render's prompt, with what it was rendered from.
#[derive(Debug, Default)]
pub(super) struct LastRender {
    /// Bumped by every update of the conversation.
    version: u64,
    latest: Option<(Started, Arc<str>, Duration)>,
    /// The latest render's messages found, whatever the conversation became since.
    located: Option<Arc<Located>>,
}

impl LastRender {
    /// The conversation changed: no earlier render describes it any more.
    pub(crate) fn changed(&mut self) {
        self.version += 1;
        self.latest = None;
    }

    /// What a job about to start on `conversation` renders from, when it is a render.
    pub(crate) fn started(&self, job: &Job, conversation: &Snapshot) -> Option<Started> {
        match job {
            Job::Render { template } => Some(Started {
                version: self.version,
                template: Arc::clone(template),
                messages: Arc::clone(&conversation.messages),
                at: Instant::now(),
            }),
            _ => None,
        }
    }

    /// A render started as `started` finished with `result`.
    pub(crate) fn finished(
        &mut self,
        started: Option<Started>,
        result: &Result<Output, RenderError>,
    ) {
        if let (Some(started), Ok(Output::Rendered(rendered))) = (started, result) {
            self.located = Some(Arc::new(Located {
                prompt: Arc::clone(&rendered.prompt),
                messages: Arc::clone(&started.messages),
                spans: rendered.spans.clone(),
                line_starts: rendered.line_starts.clone(),
            }));
            if started.version == self.version {
                let took = started.at.elapsed();
                self.latest = Some((started, Arc::clone(&rendered.prompt), took));
            }
        }
    }

    /// What `job` may take from the latest render.
    pub(crate) fn earlier_for(&self, job: &Job) -> Earlier {
        Earlier {
            prompt: self.prompt_for(job),
            located: matches!(job, Job::Render { .. })
                .then(|| self.located.clone())
                .flatten(),
        }
    }

    /// The prompt `job` would render first, and how long it took, when the latest
    /// render made it from the current conversation with the same template
    /// (attribution and the unused-value probe ask).
    fn prompt_for(&self, job: &Job) -> Option<(Arc<str>, Duration)> {
        let (Job::Attribute { template, .. } | Job::Values { template, .. }) = job else {
            return None;
        };
        let (started, prompt, took) = self.latest.as_ref()?;
        (started.version == self.version && Arc::ptr_eq(&started.template, template))
            .then(|| (Arc::clone(prompt), *took))
    }
}
