//! The shown render: the prompt (or error) the worker last answered, its line index, and
//! where each message is in it. The app takes the worker's replies in here; views only
//! read the cache and never call the engine.
//!
//! Every result is tagged with the generation of the session state it was rendered
//! from. A reply older than what is shown is dropped; one older than the current text
//! is shown, marked stale, until the newer one arrives.

use std::ops::Range;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use chatplate_core::worker::{Job, Output, Reply, Template};
use chatplate_render::{Limits, RenderError};

/// The app's render bounds: the engine's, with a 2 s deadline (a keystroke must never
/// wait long for a render, whatever the template does; the deadline still grows with the
/// conversation, so a long real one is never cut off).
pub fn app_default_limits() -> Limits {
    Limits::default().with_deadline(Duration::from_secs(2))
}

static APP_LIMITS: OnceLock<Limits> = OnceLock::new();

/// Sets the app's render bounds (the command line's `--fuel`, `--deadline`, ...), once,
/// before the first render.
pub fn set_app_limits(limits: Limits) {
    let _ = APP_LIMITS.set(limits);
}

/// The app's render bounds (see [`set_app_limits`]).
pub fn app_limits() -> Limits {
    APP_LIMITS.get().copied().unwrap_or_else(app_default_limits)
}

/// The template, the last render and where messages are in it.
#[derive(Debug)]
pub struct Preview {
    template: Result<Arc<Template>, RenderError>,
    /// The template source as the user wrote it; error positions refer to it.
    pub source: String,
    /// The prompt, or why there is none.
    pub output: Result<Arc<str>, RenderError>,
    /// Byte offset of the start of each prompt line.
    pub line_starts: Vec<usize>,
    /// Where each message shows up in the prompt, when it could be found.
    pub spans: Vec<Option<Range<usize>>>,
    /// The generation `output` answers (0: nothing rendered yet).
    pub generation: u64,
}

impl Preview {
    /// A preview on `source`; it is compiled on the worker with the first render.
    pub fn new(source: &str) -> Self {
        let template = Template::new(source, app_limits());
        Preview {
            source: template.error_source(),
            template: Ok(template),
            output: Ok(Arc::from("")),
            line_starts: vec![0],
            spans: Vec::new(),
            generation: 0,
        }
    }

    /// A preview that cannot render: every render shows `error` (a missing template).
    pub fn unavailable(error: RenderError) -> Self {
        Preview {
            template: Err(error.clone()),
            source: String::new(),
            output: Err(error),
            line_starts: vec![0],
            spans: Vec::new(),
            generation: 0,
        }
    }

    /// The template being rendered, when there is one.
    pub fn template(&self) -> Option<Arc<Template>> {
        self.template.as_ref().ok().cloned()
    }

    /// The job that renders the worker's conversation, or the error that makes rendering
    /// pointless (no template).
    pub fn render_job(&self) -> Result<Job, RenderError> {
        let template = self.template.clone()?;
        Ok(Job::Render { template })
    }

    /// Shows `error` for `generation` without asking the worker.
    pub fn fail(&mut self, generation: u64, error: RenderError) {
        self.output = Err(error);
        self.line_starts = vec![0];
        self.generation = generation;
    }

    /// Takes a reply in; returns whether anything shown changed. A reply older than the
    /// shown render is dropped.
    pub fn accept(&mut self, reply: Reply) -> bool {
        if reply.generation < self.generation {
            return false;
        }
        match reply.result {
            Ok(Output::Rendered(rendered)) => {
                self.output = Ok(rendered.prompt);
                self.line_starts = rendered.line_starts;
                self.spans = rendered.spans;
                self.generation = reply.generation;
            }
            // Message locations of the last prompt stay for when it comes back.
            Err(error) => self.fail(reply.generation, error),
            Ok(_) => return false,
        }
        true
    }

    /// The render error, if the last render failed.
    pub fn error(&self) -> Option<&RenderError> {
        self.output.as_ref().err()
    }

    /// The prompt text (empty after an error).
    pub fn text(&self) -> &str {
        self.output.as_deref().unwrap_or_default()
    }

    /// Number of prompt lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Prompt line `index` without its newline.
    pub fn line(&self, index: usize) -> &str {
        let text = self.text();
        let start = self.line_starts.get(index).copied().unwrap_or(text.len());
        let end = self
            .line_starts
            .get(index + 1)
            .copied()
            .unwrap_or(text.len());
        let line = text.get(start..end.max(start)).unwrap_or_default();
        line.strip_suffix('\n').unwrap_or(line)
    }

    /// The line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    /// Message `message`'s span, if it lies inside the shown prompt (checked, so a stale
    /// span can never index out of the text).
    pub fn span(&self, message: usize) -> Option<&Range<usize>> {
        let text = self.text();
        self.spans
            .get(message)?
            .as_ref()
            .filter(|r| r.end <= text.len() && text.is_char_boundary(r.start))
    }
}
