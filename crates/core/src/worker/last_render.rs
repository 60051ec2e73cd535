//! The prompt of the latest render, handed to the jobs that explain it.
//!
//! The app asks for an attribution (and the selected message's unused values) right
//! after each render arrives, on the same conversation: rendering the prompt again cost
//! each a whole render per keystroke (seconds on a quadratic template at 10,000 messages). The dispatcher notes
//! which conversation version and template each render ran on; a later job on that very
//! version and template gets the prompt instead of rendering it.

use std::sync::Arc;

use chatplate_render::RenderError;

use super::{Job, Output, Template};

/// The conversation version and template a running render started on.
#[derive(Debug, Clone)]
pub(super) struct Started {
    version: u64,
    template: Arc<Template>,
}

/// The latest render's prompt, with what it was rendered from.
#[derive(Debug, Default)]
pub(super) struct LastRender {
    /// Bumped by every update of the conversation.
    version: u64,
    latest: Option<(Started, Arc<str>)>,
}

impl LastRender {
    /// The conversation changed: no earlier render describes it any more.
    pub(crate) fn changed(&mut self) {
        self.version += 1;
        self.latest = None;
    }

    /// What a job about to start renders from, when it is a render.
    pub(crate) fn started(&self, job: &Job) -> Option<Started> {
        match job {
            Job::Render { template } => Some(Started {
                version: self.version,
                template: Arc::clone(template),
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
            if started.version == self.version {
                self.latest = Some((started, Arc::clone(&rendered.prompt)));
            }
        }
    }

    /// The prompt `job` would render first, when the latest render made it from the
    /// current conversation with the same template (attribution and the unused-value
    /// probe ask).
    pub(crate) fn prompt_for(&self, job: &Job) -> Option<Arc<str>> {
        let (Job::Attribute { template, .. } | Job::Values { template, .. }) = job else {
            return None;
        };
        let (started, prompt) = self.latest.as_ref()?;
        (started.version == self.version && Arc::ptr_eq(&started.template, template))
            .then(|| Arc::clone(prompt))
    }
}
