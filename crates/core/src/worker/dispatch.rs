//! The dispatcher thread: one pending slot per job kind, one running job, deadlines, and
//! the bookkeeping that keeps at most one abandoned render thread alive.
//!
//! Threads: this one, the active runner, and at most one abandoned runner. A runner that
//! passes its deadline is cancelled and, if no other runner is abandoned, left to finish
//! on its own while a fresh runner takes over. A runner's renders use waiting tokens
//! ([`CancelToken::waiting`]): a stopped render returns only once its render thread has
//! ended, so an abandoned runner accounts for the render it started until that is gone. If one is already abandoned, the late
//! runner is reported as timed out but kept: nothing else starts until one of the two
//! returns, so the thread count stays bounded whatever the templates do.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chatplate_render::{CancelToken, Limits, RenderError, RenderErrorKind};

use super::last_render::{Earlier, LastRender, Started};
use super::runner::{self, Runner};
use super::snapshot::Snapshot;
use super::values::MessageValues;
use super::{Busy, BusySlot};
use super::{Job, JobKind, Output, Reply, Update};

/// What the dispatcher's inbox carries.
pub(super) enum Command {
    /// A change to the conversation.
    Update(Update),
    /// A new request from the handle.
    Submit { generation: u64, job: Job },
    /// A runner finished a job.
    Done {
        runner: u64,
        result: Result<Output, RenderError>,
    },
    /// Stop the background work ([`super::Worker::stop_background`]).
    StopBackground,
    /// Cancel the running job of this kind ([`super::Worker::cancel`]).
    Cancel(JobKind),
    /// The handle was dropped.
    Shutdown,
}

/// How long after a render is asked for, and again after it is done, the background
/// work that follows the conversation waits to start: while keys come faster than this,
/// each render would cancel the previous one's attribution part-way, and that work
/// competes with the render for the cores. Counting from the render's end too keeps a
/// render longer than this from being followed at once by an attribution that the next
/// key then has to push aside. Once typing pauses, it starts (BENCHMARKS.md has the
/// keystroke figures).
const SETTLE: Duration = Duration::from_millis(60);

/// How many times a render's deadline a background job (many renders) may take, at
/// most the deadline's cap ([`Limits::deadline_cap`]): a long conversation does not
/// buy a background job minutes.
const BACKGROUND_FACTOR: u32 = 30;

/// Hands a reply to the caller (and wakes it); shared with the threads that open things.
pub(super) type Notify = Arc<dyn Fn(Reply) + Send + Sync>;

struct Queued {
    generation: u64,
    job: Job,
    /// The caller was already told this render waits for an abandoned one.
    blocked_reported: bool,
}

struct Running {
    runner: Runner,
    kind: JobKind,
    generation: u64,
    template: Option<usize>,
    token: CancelToken,
    deadline: Instant,
    /// How long it was allowed: the base deadline, grown with the conversation.
    allowed: Duration,
    /// Reported as timed out, but not abandoned (another runner already is).
    timed_out: bool,
    /// When it started.
    started: Instant,
    /// What a render runs on, to hand its prompt to the attribution that follows.
    render: Option<Started>,
}

struct Abandoned {
    runner: Runner,
    template: Option<usize>,
    /// Set aside because a render was asked for (it was cancelled and ends at its next
    /// checkpoint), not because it ran out of time: its template may run again.
    cancelled: bool,
}

struct Dispatcher {
    deadline: Duration,
    commands: Sender<Command>,
    notify: Notify,
    /// The conversation jobs run on; a running job holds a snapshot (each message
    /// shared, so an update never copies the others).
    conversation: Snapshot,
    /// Its messages as template values, kept in step with the updates.
    values: MessageValues,
    /// The latest render's prompt, while the conversation is unchanged.
    last_render: LastRender,
    queued: [Option<Queued>; JobKind::ALL.len()],
    running: Option<Running>,
    idle: Option<Runner>,
    abandoned: Option<Abandoned>,
    next_runner: u64,
    /// Until when the work that follows the conversation waits (see [`SETTLE`]).
    settling_until: Option<Instant>,
    /// What is running, for the handle ([`super::Worker::busy`]).
    busy: BusySlot,
}

/// Starts the dispatcher thread.
pub(super) fn start(
    deadline: Duration,
    commands: Sender<Command>,
    inbox: Receiver<Command>,
    notify: Notify,
    busy: BusySlot,
) -> std::io::Result<()> {
    let dispatcher = Dispatcher {
        deadline,
        commands,
        notify,
        conversation: Snapshot::default(),
        values: MessageValues::default(),
        last_render: LastRender::default(),
        queued: Default::default(),
        running: None,
        idle: None,
        abandoned: None,
        next_runner: 0,
        settling_until: None,
        busy,
    };
    std::thread::Builder::new()
        .name("chatplate-worker".into())
        .spawn(move || dispatcher.run(&inbox))
        .map(drop)
}

/// The identity of the template a render job uses.
fn template_of(job: &Job) -> Option<usize> {
    match job {
        Job::Render { template }
        | Job::Attribute { template, .. }
        | Job::Capabilities { template, .. }
        | Job::Badges { template, .. }
        | Job::Values { template, .. }
        | Job::Parse { template, .. }
        | Job::RoundTrips { template, .. }
        | Job::GenerationMarks { template }
        | Job::Knobs { template }
        | Job::TurnCosts { template, .. } => Some(Arc::as_ptr(template) as usize),
        Job::Compare { counterpart, .. } | Job::Matrix { counterpart, .. } => {
            counterpart.template().map(|t| Arc::as_ptr(t) as usize)
        }
        Job::Open { .. }
        | Job::OpenRevision { .. }
        | Job::ScanCache
        | Job::Tokenize { .. }
        | Job::Lint { .. } => None,
    }
}

/// Work that answers the current conversation (and so is cancelled by a render, and
/// waits for typing to settle): attribution, tokens, value probes, badges, comparisons,
/// round trips, generation marks and lints (which follow no conversation, but are as
/// heavy as the badges and as happy to be asked again).
fn follows_the_conversation(kind: JobKind) -> bool {
    matches!(
        kind,
        JobKind::Attribute
            | JobKind::Tokenize
            | JobKind::Values
            | JobKind::Badges
            | JobKind::Compare
            | JobKind::Matrix
            | JobKind::RoundTrips
            | JobKind::GenerationMarks
            | JobKind::Lint
            | JobKind::Knobs
            | JobKind::TurnCosts
    )
}

/// Jobs with no deadline of the worker's: opening (as long as the network takes),
/// scanning the cache, and external engines (bounded by their own time and output
/// limits, in a child process that takes seconds to start).
fn runs_alone(job: &Job) -> bool {
    match job {
        Job::Open { .. } | Job::OpenRevision { .. } | Job::ScanCache => true,
        Job::Compare { counterpart, .. } | Job::Matrix { counterpart, .. } => {
            counterpart.is_external()
        }
        _ => false,
    }
}

impl Dispatcher {
    fn run(mut self, inbox: &Receiver<Command>) {
        loop {
            let command = match self.running.as_ref().filter(|r| !r.timed_out) {
                Some(running) => {
                    let wait = running.deadline.saturating_duration_since(Instant::now());
                    match inbox.recv_timeout(wait) {
                        Ok(command) => Some(command),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
                None => match self.settle_wait() {
                    Some(wait) => match inbox.recv_timeout(wait) {
                        Ok(command) => Some(command),
                        Err(RecvTimeoutError::Timeout) => {
                            self.start_next();
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => return,
                    },
                    None => match inbox.recv() {
                        Ok(command) => Some(command),
                        Err(_) => return,
                    },
                },
            };
            match command {
                None => self.time_out(),
                Some(Command::Update(update)) => {
                    self.values.note(&update);
                    self.last_render.changed();
                    self.conversation.apply(update);
                }
                Some(Command::Submit { generation, job }) if runs_alone(&job) => {
                    self.run_alone(generation, job);
                }
                Some(Command::Submit { generation, job }) => {
                    self.cancel_background(job.kind());
                    if job.kind() == JobKind::Render {
                        self.drop_superseded();
                        self.set_aside_cancelled();
                        self.settling_until = Some(Instant::now() + SETTLE);
                    }
                    let slot = job.kind().index();
                    self.queued[slot] = Some(Queued {
                        generation,
                        job,
                        blocked_reported: false,
                    });
                }
                Some(Command::Done { runner, result }) => self.finished(runner, result),
                Some(Command::StopBackground) => self.stop_background(),
                Some(Command::Cancel(kind)) => self.cancel(kind),
                Some(Command::Shutdown) => return,
            }
            self.start_next();
            self.publish_busy();
        }
    }

    /// Tells the handle what runs now (a timed-out job no longer counts: its time-out
    /// was reported).
    fn publish_busy(&self) {
        let running = (self.running.as_ref()).filter(|r| !r.timed_out);
        self.busy.set(running.map(|r| Busy {
            kind: r.kind,
            since: r.started,
        }));
    }

    /// Cancels the running job if it is a background job of `kind`, and sets it aside.
    fn cancel(&mut self, kind: JobKind) {
        if let Some(running) = self
            .running
            .as_ref()
            .filter(|r| r.kind == kind && kind.background())
        {
            running.token.cancel();
            self.set_aside_cancelled();
        }
    }

    /// The user stopped the background work: queued background jobs are dropped and the
    /// running one is cancelled and set aside, each answered as cancelled. What the user
    /// asked for (renders, opening, the cache scan, the output parser) goes on.
    fn stop_background(&mut self) {
        let stoppable = |kind: JobKind| {
            kind.background()
                && !matches!(kind, JobKind::Open | JobKind::ScanCache | JobKind::Parse)
        };
        for kind in JobKind::ALL.into_iter().filter(|&kind| stoppable(kind)) {
            if let Some(queued) = self.queued[kind.index()].take() {
                self.reply(kind, queued.generation, Err(cancelled_error()));
            }
        }
        if let Some(running) = self.running.as_ref().filter(|r| stoppable(r.kind)) {
            running.token.cancel();
            self.set_aside_cancelled();
        }
    }

    /// Opening a target (which may download from the Hub for as long as the network
    /// takes), scanning the cache and external engines have no deadline of the worker's: they run on a thread of their own,
    /// through the runners' own job code and panic guard, so renders never wait behind
    /// them.
    fn run_alone(&mut self, generation: u64, job: Job) {
        let kind = job.kind();
        let conversation = self.conversation.clone();
        // Cached: the same values the next render uses.
        let values = self.values.current(&self.conversation);
        let notify = Arc::clone(&self.notify);
        let spawned = std::thread::Builder::new()
            .name("chatplate-open".into())
            .spawn(move || {
                let result = runner::run_caught(
                    job,
                    &conversation,
                    &values,
                    Earlier::default(),
                    &CancelToken::new(),
                );
                notify(Reply {
                    kind,
                    generation,
                    result,
                });
            });
        if let Err(err) = spawned {
            let message = format!("could not start a thread to open it: {err}");
            self.reply(kind, generation, Err(RenderError::input(message)));
        }
    }

    fn reply(&self, kind: JobKind, generation: u64, result: Result<Output, RenderError>) {
        (self.notify)(Reply {
            kind,
            generation,
            result,
        });
    }

    fn finished(&mut self, runner: u64, result: Result<Output, RenderError>) {
        if self.running.as_ref().is_some_and(|r| r.runner.id == runner) {
            if let Some(done) = self.running.take() {
                if done.kind == JobKind::Render {
                    self.settling_until = Some(Instant::now() + SETTLE);
                }
                self.last_render.finished(done.render, &result);
                if !done.timed_out {
                    self.reply(done.kind, done.generation, result);
                }
                self.idle = Some(done.runner);
            }
        } else if self
            .abandoned
            .as_ref()
            .is_some_and(|a| a.runner.id == runner)
        {
            // Dropping the runner closes its job channel; its thread ends.
            self.abandoned = None;
            if self.running.as_ref().is_some_and(|r| r.timed_out) {
                self.abandon_running();
            }
        }
    }

    /// A running background job answers an older conversation once a render or a
    /// newer job of its kind is asked for: it is cancelled (it ends at its next
    /// checkpoint and its cancellation is reported), so typing never waits for it.
    fn cancel_background(&mut self, submitted: JobKind) {
        if let Some(running) = self.running.as_ref() {
            let stale = submitted == JobKind::Render || submitted == running.kind;
            let cancellable = follows_the_conversation(running.kind);
            // Capability probes ignore the conversation: only a newer request replaces them.
            let replaced = running.kind == JobKind::Capabilities && submitted == running.kind;
            if (cancellable && stale) || replaced {
                running.token.cancel();
            }
        }
    }

    /// A render does not wait for a cancelled background job to reach its next
    /// checkpoint: between its renders a job such as the attribution works through the
    /// whole conversation (tens of milliseconds at 10,000 messages), and the keystroke's
    /// render would wait that long. The job is set aside like a timed-out one (its
    /// cancellation reported now) and the render starts on another runner, unless a
    /// runner is already set aside: the thread count stays bounded.
    fn set_aside_cancelled(&mut self) {
        let cancelled = self
            .running
            .as_ref()
            .is_some_and(|r| r.kind.background() && r.token.is_cancelled() && !r.timed_out);
        if !cancelled || self.abandoned.is_some() {
            return;
        }
        if let Some(running) = self.running.take() {
            self.reply(running.kind, running.generation, Err(cancelled_error()));
            self.abandoned = Some(Abandoned {
                runner: running.runner,
                template: running.template,
                cancelled: true,
            });
        }
    }

    /// How long the idle dispatcher waits before starting settled work: `None` when no
    /// such work is queued or it may start now.
    fn settle_wait(&self) -> Option<Duration> {
        let until = self.settling_until?;
        let waiting = JobKind::ALL
            .iter()
            .any(|&kind| follows_the_conversation(kind) && self.queued[kind.index()].is_some());
        let wait = until.saturating_duration_since(Instant::now());
        (waiting && !wait.is_zero()).then_some(wait)
    }

    /// A queued value probe or comparison answers the conversation before this
    /// render's change: it is dropped (reported as cancelled, so the caller asks again
    /// for the new one).
    fn drop_superseded(&mut self) {
        for kind in [JobKind::Values, JobKind::Compare, JobKind::Matrix] {
            if let Some(queued) = self.queued[kind.index()].take() {
                self.reply(kind, queued.generation, Err(cancelled_error()));
            }
        }
    }

    /// The running job passed its deadline.
    fn time_out(&mut self) {
        let Some(running) = self.running.as_mut() else {
            return;
        };
        running.token.cancel();
        running.timed_out = true;
        let (kind, generation, allowed) = (running.kind, running.generation, running.allowed);
        let can_abandon = self.abandoned.is_none();
        self.reply(kind, generation, Err(timeout_error(allowed, can_abandon)));
        if can_abandon {
            self.abandon_running();
        }
    }

    /// Leaves the running job's thread to end on its own; a fresh runner takes over.
    fn abandon_running(&mut self) {
        if let Some(running) = self.running.take() {
            self.abandoned = Some(Abandoned {
                runner: running.runner,
                template: running.template,
                cancelled: false,
            });
        }
    }

    fn start_next(&mut self) {
        if self.running.is_some() {
            return;
        }
        let settling = self
            .settling_until
            .is_some_and(|until| Instant::now() < until);
        for kind in JobKind::ALL {
            let slot = kind.index();
            if settling && follows_the_conversation(kind) {
                continue;
            }
            let Some(queued) = self.queued[slot].as_mut() else {
                continue;
            };
            let template = template_of(&queued.job);
            let blocked = template.is_some()
                && self
                    .abandoned
                    .as_ref()
                    .is_some_and(|a| !a.cancelled && a.template == template);
            if blocked {
                if !queued.blocked_reported {
                    queued.blocked_reported = true;
                    let generation = queued.generation;
                    self.reply(kind, generation, Err(blocked_error()));
                }
                continue;
            }
            if let Some(queued) = self.queued[slot].take() {
                self.start(kind, queued, template);
            }
            return;
        }
    }

    fn start(&mut self, kind: JobKind, queued: Queued, template: Option<usize>) {
        let runner = if let Some(runner) = self.idle.take() {
            runner
        } else {
            self.next_runner += 1;
            match runner::spawn(self.next_runner, self.commands.clone()) {
                Ok(runner) => runner,
                Err(err) => {
                    let message = format!("could not start a render thread: {err}");
                    return self.reply(kind, queued.generation, Err(RenderError::input(message)));
                }
            }
        };
        // A stopped render returns only once its thread has ended, so a runner counts
        // as running (and abandoned, after a timeout) for as long as its render does.
        let token = CancelToken::new().waiting();
        let allowed = if kind.background() {
            self.limits().capped(self.allowed() * BACKGROUND_FACTOR)
        } else {
            self.allowed()
        };
        let values = self.values.current(&self.conversation);
        let render = self.last_render.started(&queued.job, &self.conversation);
        let earlier = self.last_render.earlier_for(&queued.job);
        runner.run(
            queued.job,
            self.conversation.clone(),
            values,
            earlier,
            token.clone(),
        );
        self.running = Some(Running {
            runner,
            kind,
            generation: queued.generation,
            template,
            token,
            deadline: Instant::now() + allowed,
            allowed,
            timed_out: false,
            started: Instant::now(),
            render,
        });
    }

    /// The time a job on the current conversation may take: the engine's own deadline
    /// for it ([`Limits::deadline_for`]), which grows with the square of the input up
    /// to a minute, so a long real conversation on a template that rescans it per
    /// message is not cut off, and a long hostile one does not buy more.
    fn allowed(&self) -> Duration {
        self.limits().deadline_for(self.conversation.items())
    }

    /// The worker's deadline as render limits: what grows with the conversation, and
    /// the most a job may take ([`Limits::deadline_cap`]).
    fn limits(&self) -> Limits {
        Limits::default().with_deadline(self.deadline)
    }
}

fn timeout_error(deadline: Duration, abandoned: bool) -> RenderError {
    let after = if abandoned {
        "it was stopped and is left to end on its own"
    } else {
        "another stopped render is still running, so nothing else starts until one ends"
    };
    RenderError::new(
        RenderErrorKind::Timeout,
        format!(
            "the template did not finish within {:.1} s; {after}",
            deadline.as_secs_f64()
        ),
    )
}

fn cancelled_error() -> RenderError {
    RenderError::new(
        RenderErrorKind::Cancelled,
        "cancelled: a newer request replaced it",
    )
}

fn blocked_error() -> RenderError {
    RenderError::new(
        RenderErrorKind::Timeout,
        "not rendered: an earlier render of this template timed out and is still \
                  running; at most one is left running, so this one starts when it ends",
    )
}
