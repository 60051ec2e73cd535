//! The render worker: engine jobs run off the caller's thread, requests in, replies out.
//!
//! A caller (the terminal app) submits [`Job`]s tagged with a generation number and never
//! waits: replies come back on a channel, and an optional waker tells the caller's event
//! loop that one is ready. The worker knows nothing about terminals.
//!
//! * **The conversation lives on the worker too**: the caller sends what changed
//!   ([`Update`]: one edited message, the settings, or everything) and the worker keeps
//!   its own copy up to date, so a keystroke in a 10,000-message session costs the
//!   caller a copy of one message, not of the whole conversation; the worker shares
//!   each message with running jobs, so applying it copies no message either
//!   ([`snapshot`]).
//! * **Coalescing**: each [`JobKind`] has one pending slot; a newer request of a kind
//!   replaces the queued one, so a burst of edits costs one render, not one per edit.
//!   Updates are applied as they arrive, so none is lost to coalescing.
//! * **Generations**: every reply carries the generation it answers, so the caller can drop
//!   a result older than what it shows and mark one older than its text as stale.
//! * **Deadlines**: a job running past the deadline is cancelled through its
//!   [`CancelToken`](chatplate_render::CancelToken) and reported as timed out. Its thread is
//!   abandoned until it returns; at most one abandoned thread exists at any time, and the
//!   template it was rendering is not started again while it runs.
//! * **Panics** in a job are caught and reported as a render error; the worker lives on.
//!
//! New job kinds (inspection, tokenizing) add a [`Job`] variant, a [`JobKind`] and an
//! [`Output`] variant, and run against the same conversation; the dispatcher needs no
//! other change.

mod busy;
pub mod capabilities;
pub mod comparing;
mod dispatch;
pub mod generation_marks;
pub mod inspection;
mod knobs;
mod last_render;
mod linting;
pub mod locate;
mod opening;
pub mod parsing;
mod relocate;
pub mod round_trips;
mod runner;
mod snapshot;
pub mod tokenizing;
pub mod training_mask;
pub mod turn_costs;
pub mod unused;
mod values;

pub use busy::Busy;
use busy::BusySlot;

use std::ops::Range;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value as Json;

use chatplate_render::{normalize_newlines, CompiledTemplate, Conversation, Limits, RenderError};

use dispatch::Command;

/// A template compiled on first use, on the worker (compiling is engine work too).
/// Shared through an `Arc`; the pointer identifies the template to the dispatcher.
#[derive(Debug)]
pub struct Template {
    source: String,
    limits: Limits,
    compiled: OnceLock<Result<CompiledTemplate, RenderError>>,
}

impl Template {
    /// A template for `source`, not compiled yet.
    pub fn new(source: &str, limits: Limits) -> Arc<Self> {
        Arc::new(Template {
            source: source.to_string(),
            limits,
            compiled: OnceLock::new(),
        })
    }

    /// The source as the user wrote it, newlines normalised: error positions refer to it.
    pub fn error_source(&self) -> String {
        normalize_newlines(&self.source)
    }

    /// Compiles on first call; later calls return the same result.
    pub(crate) fn compiled(&self) -> Result<&CompiledTemplate, RenderError> {
        self.compiled
            .get_or_init(|| CompiledTemplate::compile(&self.source, self.limits))
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// What changed in the conversation since the last update.
#[derive(Debug, Clone, Default)]
pub struct Update {
    /// Everything but the messages (tools, flags, variables, clock), when it changed;
    /// its `messages` are ignored.
    pub settings: Option<Conversation>,
    /// The messages.
    pub messages: MessageUpdate,
}

/// Which messages changed.
#[derive(Debug, Clone, Default)]
pub enum MessageUpdate {
    /// None.
    #[default]
    Unchanged,
    /// All of them (the list itself changed): the new list.
    All(Vec<Json>),
    /// These, by index; the list has the same length as before.
    Some(Vec<(usize, Json)>),
}

impl Update {
    /// Everything: the whole conversation.
    pub fn all(conversation: Conversation) -> Self {
        let mut settings = conversation;
        let messages = std::mem::take(&mut settings.messages);
        Update {
            settings: Some(settings),
            messages: MessageUpdate::All(messages),
        }
    }
}

/// Work for the worker; every job runs on the worker's current conversation.
#[derive(Debug, Clone)]
pub enum Job {
    /// Render the conversation with a template, then find each message in the prompt
    /// (see [`locate`]; done here, so the caller never handles the conversation).
    Render {
        /// The template.
        template: Arc<Template>,
    },
    /// Attribute every prompt byte to the message (or other part) that produced it,
    /// reusing what still holds from `previous` (see [`inspection`]). A newer render
    /// or attribution request cancels a running one.
    Attribute {
        /// The template.
        template: Arc<Template>,
        /// An earlier result by the same template.
        previous: Option<Arc<inspection::Attributed>>,
        /// The messages on screen: where the template's prefixes cannot be predicted,
        /// only theirs are rendered, and the result may be partial (see
        /// [`crate::inspect::attribute_focused`]); `None` for the whole attribution.
        focus: Option<std::ops::Range<usize>>,
    },
    /// Resolve what the user typed in an open dialog ([`crate::target::open`]).
    Open {
        /// A path, a model folder, a model id, a `.gguf`, ...
        target: String,
    },
    /// Open a cached model at another revision (the app's compare view): from the
    /// cache its path pointed into, else the configured cache, else the Hub.
    OpenRevision {
        /// The model.
        model: crate::catalog::CachedModel,
        /// The branch, tag or commit.
        revision: String,
    },
    /// List the local Hugging Face cache's models that have a chat template.
    ScanCache,
    /// Tokenize a prompt with the session's tokenizer (see [`tokenizing`]). A newer
    /// render or tokenize request cancels a running one.
    Tokenize {
        /// Where the tokenizer is.
        choice: tokenizing::TokenizerChoice,
        /// The prompt (the app's shown render).
        prompt: Arc<str>,
        /// The template that rendered it: with it the job also computes the assistant
        /// mask (rendering once more, with generation spans, when the template has
        /// `{% generation %}`).
        template: Option<Arc<Template>>,
    },
    /// Probe what a template can render (see [`capabilities`]). Only a newer request of
    /// this kind cancels a running one: the probes do not read the conversation.
    Capabilities {
        /// The template.
        template: Arc<Template>,
        /// Variables and clock for the probes.
        settings: crate::inspect::ProbeSettings,
    },
    /// The same probes for the template list's badges (see [`capabilities`]): the
    /// lowest priority, one template per request, cancelled by a render or a newer
    /// request of this kind (the app asks again), so it never delays typing.
    Badges {
        /// The template.
        template: Arc<Template>,
        /// Variables and clock for the probes.
        settings: crate::inspect::ProbeSettings,
    },
    /// Which values of one message and of the settings the template ignores (see
    /// [`unused`]). A render request cancels it, running or queued.
    Values {
        /// The template.
        template: Arc<Template>,
        /// The message whose values to probe, if any.
        message: Option<usize>,
    },
    /// Render the conversation on the other side of a comparison: another template or
    /// another engine (see [`comparing`]). A newer render or comparison cancels a
    /// running one; an external engine runs on a thread of its own, bounded by its
    /// [`crate::compare::Bounds`], so the caller should keep one in flight at a time.
    Compare {
        /// What renders it.
        counterpart: comparing::Counterpart,
        /// The caller's prompt (of this conversation) the other side is diffed from.
        against: Arc<str>,
    },
    /// The same as [`Job::Compare`] for one row of the app's engine matrix, in a slot
    /// of its own so that the matrix and the compare view never replace each other's
    /// queued job: an in-process engine waits in that slot, an external one runs on a
    /// thread of its own (the caller keeps one in flight per engine).
    Matrix {
        /// What renders it.
        counterpart: comparing::Counterpart,
        /// The caller's prompt (of this conversation) the other side is diffed from.
        against: Arc<str>,
    },
    /// Parse a model's raw output as the answer to the conversation with the session's
    /// `response_template` (see [`parsing`]); the conversation renders with the
    /// generation prompt as the prefix.
    Parse {
        /// The template that renders the prefix.
        template: Arc<Template>,
        /// Where the `response_template` is.
        lookup: Box<parsing::SchemaLookup>,
        /// The pasted output.
        output: Arc<str>,
    },
    /// Parse each assistant message back, as `check`'s `assert_round_trip` does (see
    /// [`round_trips`]): background work, cancelled by a render.
    RoundTrips {
        /// The template.
        template: Arc<Template>,
        /// Where the `response_template` is.
        lookup: Box<parsing::SchemaLookup>,
    },
    /// Where the template's `{% generation %}` blocks land in the conversation's prompt
    /// (see [`generation_marks`]): background work, cancelled by a render.
    GenerationMarks {
        /// The template.
        template: Arc<Template>,
    },
    /// The template's knobs with what flipping each does to the conversation's prompt
    /// ([`crate::inspect::knobs`]): background work, cancelled by a render.
    Knobs {
        /// The template.
        template: Arc<Template>,
    },
    /// What each turn makes a server with a prefix cache process again (see
    /// [`turn_costs`]): background work, cancelled by a render; a run answers after
    /// [`turn_costs::BUDGET`] with what it counted, and is asked again from there.
    TurnCosts {
        /// The template.
        template: Arc<Template>,
        /// Where the tokenizer is (bytes without one).
        choice: tokenizing::TokenizerChoice,
        /// The previous answer, whose unchanged turns are kept.
        previous: Option<Arc<turn_costs::TurnCostReport>>,
    },
    /// Lint a template ([`crate::lint`]), reading what is around it (its model folder,
    /// tokenizer, GGUF): the lowest priority, cancelled by a render or a newer request of
    /// this kind (the caller asks again), like the badges.
    Lint {
        /// The template, with where it came from.
        template: Box<crate::TemplateSource>,
        /// The policy and bounds.
        options: Box<crate::lint::LintOptions>,
    },
}

/// The kinds of job; each has its own coalescing slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// [`Job::Render`].
    Render,
    /// [`Job::Attribute`].
    Attribute,
    /// [`Job::Open`].
    Open,
    /// [`Job::ScanCache`].
    ScanCache,
    /// [`Job::Tokenize`].
    Tokenize,
    /// [`Job::Capabilities`].
    Capabilities,
    /// [`Job::Badges`].
    Badges,
    /// [`Job::Values`].
    Values,
    /// [`Job::Compare`].
    Compare,
    /// [`Job::Parse`].
    Parse,
    /// [`Job::RoundTrips`].
    RoundTrips,
    /// [`Job::GenerationMarks`].
    GenerationMarks,
    /// [`Job::Lint`].
    Lint,
    /// [`Job::Matrix`].
    Matrix,
    /// [`Job::Knobs`].
    Knobs,
    /// [`Job::TurnCosts`].
    TurnCosts,
}

impl JobKind {
    /// Every kind, in the order the dispatcher prefers when several are queued.
    pub(crate) const ALL: [JobKind; 16] = [
        JobKind::Render,
        JobKind::Parse,
        JobKind::Compare,
        JobKind::Matrix,
        JobKind::Open,
        JobKind::ScanCache,
        JobKind::Tokenize,
        JobKind::Capabilities,
        JobKind::Values,
        JobKind::Attribute,
        JobKind::GenerationMarks,
        JobKind::Knobs,
        JobKind::TurnCosts,
        JobKind::RoundTrips,
        JobKind::Badges,
        JobKind::Lint,
    ];

    fn index(self) -> usize {
        match self {
            JobKind::Render => 0,
            JobKind::Attribute => 1,
            JobKind::Open => 2,
            JobKind::ScanCache => 3,
            JobKind::Tokenize => 4,
            JobKind::Capabilities => 5,
            JobKind::Badges => 6,
            JobKind::Values => 7,
            JobKind::Compare => 8,
            JobKind::Parse => 9,
            JobKind::RoundTrips => 10,
            JobKind::GenerationMarks => 11,
            JobKind::Lint => 12,
            JobKind::Matrix => 13,
            JobKind::Knobs => 14,
            JobKind::TurnCosts => 15,
        }
    }

    /// Background work: a running job of this kind is cancelled when a render or a
    /// newer job of its kind is submitted (it answers an older conversation), and it
    /// may run longer than a render.
    pub(crate) fn background(self) -> bool {
        !matches!(self, JobKind::Render)
    }
}

impl Job {
    /// This job's kind.
    pub(crate) fn kind(&self) -> JobKind {
        match self {
            Job::Render { .. } => JobKind::Render,
            Job::Attribute { .. } => JobKind::Attribute,
            Job::Open { .. } | Job::OpenRevision { .. } => JobKind::Open,
            Job::ScanCache => JobKind::ScanCache,
            Job::Tokenize { .. } => JobKind::Tokenize,
            Job::Capabilities { .. } => JobKind::Capabilities,
            Job::Badges { .. } => JobKind::Badges,
            Job::Values { .. } => JobKind::Values,
            Job::Compare { .. } => JobKind::Compare,
            Job::Parse { .. } => JobKind::Parse,
            Job::RoundTrips { .. } => JobKind::RoundTrips,
            Job::GenerationMarks { .. } => JobKind::GenerationMarks,
            Job::Lint { .. } => JobKind::Lint,
            Job::Matrix { .. } => JobKind::Matrix,
            Job::Knobs { .. } => JobKind::Knobs,
            Job::TurnCosts { .. } => JobKind::TurnCosts,
        }
    }
}

/// A successful render.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The prompt.
    pub prompt: Arc<str>,
    /// Byte offset of the start of each prompt line (computed here, off the caller's thread).
    pub line_starts: Vec<usize>,
    /// Each message's byte range in the prompt, when found.
    pub spans: Vec<Option<Range<usize>>>,
}

/// What a job produced.
#[derive(Debug, Clone)]
pub enum Output {
    /// From [`Job::Render`].
    Rendered(Rendered),
    /// From [`Job::Attribute`].
    Attributed(Arc<inspection::Attributed>),
    /// From [`Job::Open`].
    Opened(Box<crate::target::Opened>),
    /// From [`Job::ScanCache`].
    Cached(Vec<crate::catalog::TemplateSet>),
    /// From [`Job::Tokenize`].
    Tokens(Arc<tokenizing::TokenizedPrompt>),
    /// From [`Job::Capabilities`] and [`Job::Badges`].
    Capabilities(Arc<capabilities::TemplateInfo>),
    /// From [`Job::Values`].
    Values(Arc<unused::ValueChecks>),
    /// From [`Job::Compare`] and [`Job::Matrix`]: the other side's prompt or error, and
    /// the diff.
    Compared(Arc<comparing::Compared>),
    /// From [`Job::Parse`].
    Pasted(parsing::Pasted),
    /// From [`Job::RoundTrips`].
    RoundTrips(Arc<round_trips::RoundTrips>),
    /// From [`Job::GenerationMarks`].
    GenerationMarks(Arc<generation_marks::GenerationMarks>),
    /// From [`Job::Lint`].
    Lint(Arc<crate::lint::TemplateLint>),
    /// From [`Job::Knobs`].
    Knobs(Arc<Vec<crate::inspect::Knob>>),
    /// From [`Job::TurnCosts`].
    TurnCosts(Arc<turn_costs::TurnCostReport>),
}

/// The answer to one request.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The kind of job answered.
    pub kind: JobKind,
    /// The generation the request was submitted with.
    pub generation: u64,
    /// The output, or why there is none (a render error, a timeout, a caught panic).
    pub result: Result<Output, RenderError>,
}

type Waker = Box<dyn Fn() + Send>;

/// The handle: submit jobs, collect replies. Dropping it stops the worker (an abandoned
/// render thread ends with the process).
pub struct Worker {
    commands: Sender<Command>,
    replies: Receiver<Reply>,
    waker: Arc<Mutex<Option<Waker>>>,
    busy: BusySlot,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").finish_non_exhaustive()
    }
}

impl Worker {
    /// Starts the dispatcher thread; jobs running longer than `deadline`, grown with the
    /// conversation ([`Limits::deadline_for`]), time out.
    pub fn spawn(deadline: Duration) -> std::io::Result<Self> {
        let (commands, inbox) = mpsc::channel();
        let (replies_out, replies) = mpsc::channel();
        let waker: Arc<Mutex<Option<Waker>>> = Arc::default();
        let notify = {
            let waker = Arc::clone(&waker);
            move |reply: Reply| {
                if replies_out.send(reply).is_ok() {
                    if let Some(wake) = waker.lock().ok().as_deref().and_then(Option::as_ref) {
                        wake();
                    }
                }
            }
        };
        let busy = BusySlot::default();
        let notify = Arc::new(notify);
        dispatch::start(deadline, commands.clone(), inbox, notify, busy.clone())?;
        Ok(Worker {
            commands,
            replies,
            waker,
            busy,
        })
    }

    /// Brings the worker's conversation up to date; jobs submitted afterwards see it.
    pub fn update(&self, update: Update) {
        let _ = self.commands.send(Command::Update(update));
    }

    /// Queues `job`, replacing any queued job of the same kind.
    pub fn submit(&self, generation: u64, job: Job) {
        let _ = self.commands.send(Command::Submit { generation, job });
    }

    /// Stops the background work: the running background job is cancelled (and set
    /// aside, as a render sets it aside) and the queued ones are dropped, each answered
    /// as cancelled. Renders, opening, the cache scan and the output parser go on: the
    /// user asked for those.
    pub fn stop_background(&self) {
        let _ = self.commands.send(Command::StopBackground);
    }

    /// Cancels the running job if it is of `kind` (a background kind), as
    /// [`Worker::stop_background`] does, leaving queued jobs alone: the app's own time
    /// budget for a job it can do without.
    pub fn cancel(&self, kind: JobKind) {
        let _ = self.commands.send(Command::Cancel(kind));
    }

    /// The job the worker is running now and since when (`None`: idle). A job set aside
    /// after its cancellation may still be winding down; it is not counted.
    pub fn busy(&self) -> Option<Busy> {
        self.busy.get()
    }

    /// Calls `wake` (from the worker's thread) after each reply is queued, so an event
    /// loop can sleep until there is something to collect.
    pub fn set_waker(&self, wake: impl Fn() + Send + 'static) {
        if let Ok(mut slot) = self.waker.lock() {
            *slot = Some(Box::new(wake));
        }
    }

    /// The next reply, if one is ready.
    pub fn try_recv(&self) -> Option<Reply> {
        self.replies.try_recv().ok()
    }

    /// Waits up to `timeout` for the next reply; `None` when none came.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Reply> {
        self.replies.recv_timeout(timeout).ok()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Shutdown);
    }
}

/// Byte offset of the start of each line of `text` (no entry after a final newline).
pub fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    if text.ends_with('\n') {
        starts.pop();
    }
    starts
}

#[cfg(test)]
mod scheduling_tests;
#[cfg(test)]
mod tests;
