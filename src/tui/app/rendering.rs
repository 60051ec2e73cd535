//! The app's side of the render worker: generations, one request per batch of input,
//! replies taken in, and actions that wait for an up-to-date render.
//!
//! Every change to the session or template bumps the app's generation and records what
//! changed; [`App::request_render`] (called once per batch of input by the event loop)
//! sends the worker that change (one edited message, or everything) and one job. Replies
//! update the [`Preview`](crate::tui::preview::Preview); a prompt older than the current
//! generation is shown as stale until the newer one arrives.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use chatplate_core::session::{Expected, Session};
use chatplate_core::worker::{JobKind, MessageUpdate, Reply, Update, Worker};
use chatplate_render::RenderError;

use crate::tui::context::Deferred;
use crate::tui::context::Effect;
use crate::tui::jobs::Background;
use crate::tui::jobs::JobRequest;

use crate::tui::app::App;
use crate::tui::app::Message;
use crate::tui::dialogs::Confirm;
use crate::tui::dialogs::Overlay;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;

/// The worker and what the app is waiting for from it.
#[derive(Debug)]
pub struct Pending {
    worker: Worker,
    /// The generation of the current session and template.
    generation: u64,
    /// A change happened since the last request.
    wanted: bool,
    /// What the worker's copy of the conversation lacks.
    changes: Changes,
    /// An action that needs a render at least as new as this generation.
    deferred: Option<(u64, Deferred)>,
    /// The user stopped the background work of this generation (`Ctrl+T`): nothing more
    /// is asked until the next change.
    stopped: Option<u64>,
    /// What the status line last said the worker is on (kind, whole seconds).
    shown_work: Option<(JobKind, u64)>,
}

impl Pending {
    /// Nothing wanted yet.
    pub fn new(worker: Worker) -> Self {
        Pending {
            worker,
            generation: 0,
            wanted: false,
            changes: Changes::everything(),
            deferred: None,
            stopped: None,
            shown_work: None,
        }
    }
}

/// What changed since the worker's conversation was last brought up to date.
#[derive(Debug, Clone, Default)]
struct Changes {
    /// Anything but the messages (or unknown: send everything).
    settings: bool,
    /// The message list itself.
    all_messages: bool,
    /// Single messages edited in place.
    messages: BTreeSet<usize>,
    /// The message count the worker has.
    count: usize,
}

impl Changes {
    fn everything() -> Self {
        Changes {
            settings: true,
            all_messages: true,
            ..Changes::default()
        }
    }

    /// The update that brings the worker level with `session`. Message conversion is
    /// `Session::conversation`'s, one message at a time.
    fn update(&self, session: &mut Session) -> Result<Update, RenderError> {
        let settings = if self.settings {
            // The settings alone: the messages are set aside, not copied.
            let messages = std::mem::take(&mut session.messages);
            let settings = session.conversation();
            session.messages = messages;
            Some(settings.map_err(|err| RenderError::input(err.to_string()))?)
        } else {
            None
        };
        let message = |m: &chatplate_core::session::Message| Json::Object(m.0.clone());
        let messages = if self.all_messages || session.messages.len() != self.count {
            MessageUpdate::All(session.messages.iter().map(message).collect())
        } else if self.messages.is_empty() {
            MessageUpdate::Unchanged
        } else {
            let changed = self.messages.iter();
            MessageUpdate::Some(
                changed
                    .filter_map(|&i| Some((i, message(session.messages.get(i)?))))
                    .collect(),
            )
        };
        Ok(Update { settings, messages })
    }
}

/// What the background jobs read of `$app`: its fields lent one by one, so the jobs
/// themselves can be borrowed mutably beside it.
macro_rules! job_view {
    ($app:ident) => {
        JobView {
            preview: &$app.preview,
            workspace: &$app.workspace,
            generation: $app.pending.generation,
            screen: $app.screen,
            row: $app.messages.row(&$app.workspace.session),
            selected: $app.messages.selected,
            prompt: &$app.prompt,
        }
    };
}

impl App {
    /// The session or template changed: the shown render is out of date.
    pub fn invalidate(&mut self) {
        self.pending.changes.settings = true;
        self.pending.changes.all_messages = true;
        self.outdated();
    }

    /// Only message `index` changed (in place): the cheap path for typing.
    pub fn invalidate_message(&mut self, index: usize) {
        self.pending.changes.messages.insert(index);
        self.outdated();
    }

    fn outdated(&mut self) {
        self.pending.generation += 1;
        self.pending.wanted = true;
        self.messages.clamp(&self.workspace.session);
    }

    /// The generation of the current session and template.
    pub fn generation(&self) -> u64 {
        self.pending.generation
    }

    /// Whether the shown prompt is older than the session.
    pub fn is_stale(&self) -> bool {
        self.preview.generation < self.pending.generation
    }

    /// Sends one render request for everything changed since the last one.
    pub fn request_render(&mut self) {
        if !std::mem::take(&mut self.pending.wanted) {
            self.ask_jobs(false);
            return;
        }
        let generation = self.pending.generation;
        let update = self.pending.changes.update(&mut self.workspace.session);
        let job = update.and_then(|update| Ok((update, self.preview.render_job()?)));
        match job {
            Ok((update, job)) => {
                self.pending.changes = Changes {
                    count: self.workspace.session.messages.len(),
                    ..Changes::default()
                };
                self.pending.worker.update(update);
                self.pending.worker.submit(generation, job);
            }
            // Nothing sent: the changes stay recorded for the next request.
            Err(err) => {
                self.preview.fail(generation, err);
                self.prompt.after_render(&self.preview);
                self.ask_jobs(false);
            }
        }
    }

    /// Calls `wake` from the worker whenever a reply is ready to [`App::collect`].
    pub fn set_waker(&self, wake: impl Fn() + Send + 'static) {
        self.pending.worker.set_waker(wake);
    }

    /// Takes in every reply that is ready, each through [`App::update`]. Returns
    /// whether the screen changed and the file work the replies led to.
    pub fn collect(&mut self) -> (bool, Vec<Effect>) {
        let mut effects = Vec::new();
        while let Some(reply) = self.pending.worker.try_recv() {
            effects.extend(self.update(Message::Worker(reply)));
        }
        (std::mem::take(&mut self.redraw), effects)
    }

    /// Waits until the shown render is current. For tests and benchmarks; the event loop
    /// never waits.
    pub fn settle(&mut self) -> Vec<Effect> {
        self.request_render();
        let mut effects = Vec::new();
        let patience = Instant::now() + Duration::from_secs(120);
        while (self.is_stale() || self.background_pending()) && Instant::now() < patience {
            if let Some(reply) = self.pending.worker.recv_timeout(Duration::from_secs(1)) {
                effects.extend(self.update(Message::Worker(reply)));
            }
        }
        effects
    }

    /// Applies a worker reply: a render, or a background job's answer.
    pub(super) fn receive(&mut self, reply: Reply) -> Option<Effect> {
        if reply.kind != JobKind::Render {
            return self.receive_background(reply);
        }
        let changed = self.preview.accept(reply);
        self.redraw |= changed;
        if !changed {
            return None;
        }
        self.prompt.after_render(&self.preview);
        let effect = self.run_deferred();
        self.ask_jobs(true);
        effect
    }

    /// Hands a background answer to the job that takes it, then asks every job what it
    /// wants next.
    fn receive_background(&mut self, reply: Reply) -> Option<Effect> {
        let mut effect = None;
        let changed = self.receive_job(reply, &mut effect);
        self.redraw |= changed;
        self.ask_jobs(false);
        effect
    }

    /// Hands `reply` to the background job that takes it (of
    /// [`Jobs`](crate::tui::jobs::Jobs), the templates pane, the opening, the open
    /// dialog), then does what the job said.
    fn receive_job(&mut self, reply: Reply, effect: &mut Option<Effect>) -> bool {
        let mut said = Said::default();
        let (view, jobs) = self.every_job();
        let changed = match jobs.into_iter().find(|job| job.takes(&reply, &view)) {
            Some(job) => job.receive(reply, &view, &mut said),
            None => false,
        };
        self.status = said.status.or(self.status.take());
        *effect = said.effect;
        for request in said.requests {
            self.carry_out_job(request);
        }
        changed
    }

    /// Does what a background job's answer asked for.
    fn carry_out_job(&mut self, request: JobRequest) {
        match request {
            JobRequest::AddTemplates(templates) => self.templates.add_unknown(templates),
            JobRequest::Remember(template) => self.templates.remember(&template),
            JobRequest::UseTemplate(template) => {
                self.use_template(template);
                // The session now names another template: an unsaved change.
                self.workspace.touch();
            }
            JobRequest::Render => self.request_render(),
            JobRequest::Ask(question) => self.overlay = Some(*question),
            JobRequest::Knobs(rows) => self.messages.knobs = rows,
        }
    }

    /// Asks every background job what it wants (after a new render, what it wants of
    /// that render first) and submits it, in the order [`Jobs`](crate::tui::jobs::Jobs)
    /// lists them.
    pub(in crate::tui) fn ask_jobs(&mut self, after_render: bool) {
        // The matrix asks only while the compare view leaves it on screen.
        self.jobs.matrix.follow(&self.jobs.sides);
        let mut said = Said::default();
        let mut asked = Vec::new();
        // Once stopped, only what the user asks for directly: the Templates pane, the
        // opening, a dialog.
        let with_jobs = !self.work_stopped();
        let (view, mut jobs) = self.some_jobs(with_jobs);
        if after_render {
            asked.extend(
                jobs.iter_mut()
                    .filter_map(|j| j.after_render(&view, &mut said)),
            );
        }
        asked.extend(
            jobs.iter_mut()
                .flat_map(|j| j.request_all(&view, &mut said)),
        );
        for (id, job) in asked {
            self.pending.worker.submit(id, job);
        }
        self.status = said.status.or(self.status.take());
    }

    /// Whether a background result for the shown render is still on its way.
    pub fn background_pending(&self) -> bool {
        let view = job_view!(self);
        let mut jobs = self.jobs.each_ref();
        jobs.push(&self.templates);
        jobs.push(&self.opening);
        jobs.extend(self.overlay.as_ref().map(|o| o as &dyn Background));
        jobs.iter().any(|job| job.pending(&view))
    }

    /// What the background jobs read, and every job: those of
    /// [`Jobs`](crate::tui::jobs::Jobs), then the components that are jobs too (the
    /// templates pane, the opening, the open dialog), in the order they ask the worker.
    /// `background_pending` lists the same, read only.
    fn every_job(&mut self) -> (JobView<'_>, Vec<&mut dyn Background>) {
        self.some_jobs(true)
    }

    /// [`App::every_job`], without those of [`Jobs`](crate::tui::jobs::Jobs) unless
    /// `with_jobs`.
    fn some_jobs(&mut self, with_jobs: bool) -> (JobView<'_>, Vec<&mut dyn Background>) {
        let view = job_view!(self);
        let mut jobs = if with_jobs {
            self.jobs.each()
        } else {
            Vec::new()
        };
        jobs.push(&mut self.templates);
        jobs.push(&mut self.opening);
        jobs.extend(self.overlay.as_mut().map(|o| o as &mut dyn Background));
        (view, jobs)
    }

    /// Runs `app::action` now when the shown render is current, else once a render at least
    /// as new as the current session arrives (the status line says so).
    pub(in crate::tui) fn when_current(&mut self, action: Deferred) -> Option<Effect> {
        if !self.is_stale() {
            return self.run(action);
        }
        self.pending.deferred = Some((self.pending.generation, action));
        if action != Deferred::FirstDifference {
            self.notify("waiting for the render in progress…");
        }
        None
    }

    fn run(&mut self, action: Deferred) -> Option<Effect> {
        match action {
            Deferred::Expected => {
                self.take_expected();
                None
            }
            Deferred::Copy(target) => {
                let extent = self.selected_extent();
                match self.prompt.copy(target, &self.preview, extent) {
                    Ok(effect) => Some(effect),
                    Err(why) => {
                        self.warn(why);
                        None
                    }
                }
            }
            Deferred::FirstDifference => {
                let expected = self.workspace.session.expected.as_ref();
                self.prompt.top = Some(self.prompt.first_change_row(expected, &self.preview));
                None
            }
        }
    }

    fn run_deferred(&mut self) -> Option<Effect> {
        let ready = self
            .pending
            .deferred
            .as_ref()
            .is_some_and(|(generation, _)| self.preview.generation >= *generation);
        if !ready {
            return None;
        }
        let (_, action) = self.pending.deferred.take()?;
        self.run(action)
    }

    /// Stores the shown render (or error) as the session's expected outcome.
    pub(in crate::tui) fn take_expected(&mut self) {
        let expected = match &self.preview.output {
            Ok(prompt) => Expected::Prompt(prompt.to_string()),
            Err(err) => Expected::Error(err.summary()),
        };
        let what = match expected {
            Expected::Prompt(_) => "prompt",
            Expected::Error(_) | Expected::Exception(_) => "error",
        };
        self.workspace.session.expected = Some(expected);
        self.workspace.touch();
        self.notify(format!("expected {what} set from the current render"));
        // The usual next step, offered (a dialog already open, e.g. one this deferred
        // action waited behind, is left alone). An untitled session goes straight to
        // its name (Esc: not now), rather than asking first and then for the name.
        if self.overlay.is_none() {
            self.overlay = Some(match self.workspace.path {
                Some(_) => Overlay::Confirm(Confirm::SaveExpected),
                None => Overlay::save_as(&self.workspace.sessions_dir, false),
            });
        }
    }
}

/// The longest the whole attribution after a partial (on-screen) one may run before the
/// app cancels it and keeps the screen's exact attribution only: the worker's estimate
/// of it ([`crate::tui::jobs::attribution`]'s budget) missed by minutes on Qwen3.5 and
/// Step-3.5-Flash at 10,000 messages (20-35 s of both cores after every edit), and the
/// app is to be idle within 5 s of an edit.
const REST_BUDGET: Duration = Duration::from_secs(3);

/// How long a background job runs before the status line names it: shorter ones come and
/// go while typing and would only flicker.
const NAMED_AFTER: Duration = Duration::from_secs(1);

impl App {
    /// Whether the user stopped the background work of the current session state.
    pub(super) fn work_stopped(&self) -> bool {
        self.pending.stopped == Some(self.pending.generation)
    }

    /// `Ctrl+T`: stops the background work until the next change, and says what it was.
    pub(super) fn stop_work(&mut self) {
        let running = self.pending.worker.busy().map(|busy| busy.kind);
        self.pending.worker.stop_background();
        self.pending.stopped = Some(self.pending.generation);
        let what = running
            .filter(|&kind| kind != JobKind::Render)
            .map_or("the background work", JobKind::what);
        self.notify(format!(
            "stopped {what}; it starts again after the next change"
        ));
    }

    /// The background job the status line names (with the key that stops it) and its
    /// whole seconds so far: one the worker has been on for at least a second, as the
    /// event loop's last [`App::working_changed`] saw it (so a frame never depends on
    /// when it is drawn).
    pub fn working(&self) -> Option<(JobKind, u64)> {
        self.pending.shown_work
    }

    /// Looks at what the worker is on; returns whether [`App::working`] changed (a job
    /// started being named, its seconds went on, it ended).
    pub fn working_changed(&mut self, now: Instant) -> bool {
        let busy = self.pending.worker.busy();
        if let Some(busy) = busy.filter(|busy| busy.kind == JobKind::Attribute) {
            let ran = now.saturating_duration_since(busy.since);
            if ran >= REST_BUDGET && self.jobs.explanation.asking_rest() {
                // The rest of a partial attribution: the screen is exact already.
                self.pending.worker.cancel(JobKind::Attribute);
                let reason = self.jobs.explanation.rest_too_slow(ran);
                self.notify(reason);
                self.pending.shown_work = None;
                return true;
            }
        }
        let shown = busy.and_then(|busy| {
            let running = now.saturating_duration_since(busy.since);
            (busy.kind != JobKind::Render && running >= NAMED_AFTER)
                .then_some((busy.kind, running.as_secs()))
        });
        shown != std::mem::replace(&mut self.pending.shown_work, shown)
    }

    /// When the status line's note on a running background job next changes (its next
    /// whole second), if a job is running.
    pub fn next_work_tick(&self, now: Instant) -> Option<Instant> {
        let busy = self.pending.worker.busy()?;
        if busy.kind == JobKind::Render {
            return None;
        }
        let running = now.saturating_duration_since(busy.since);
        let next = Duration::from_secs(running.as_secs() + 1).max(NAMED_AFTER);
        Some(busy.since + next)
    }
}
