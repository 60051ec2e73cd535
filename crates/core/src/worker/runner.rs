//! A runner thread: runs one job at a time for the dispatcher, catching panics so a bug
//! in the engine becomes an error message instead of a dead worker.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;

use chatplate_render::{CancelToken, PreparedMessages, RenderError, RenderErrorKind};

use super::dispatch::Command;
use super::last_render::Earlier;
use super::relocate::locate_again;
use super::snapshot::Snapshot;
use super::{Job, Output, Rendered};

/// The dispatcher's handle on one runner thread; dropping it ends the thread once its
/// current job returns.
pub(super) struct Runner {
    /// Distinguishes the active runner from an abandoned one.
    pub(crate) id: u64,
    jobs: Sender<Task>,
}

/// A job with the conversation snapshot it runs on (and its messages as template
/// values), what it may take from the latest render (see `last_render`) and its cancel
/// token.
type Task = (Job, Snapshot, Arc<PreparedMessages>, Earlier, CancelToken);

impl Runner {
    /// Hands the runner a job on `conversation`.
    pub(crate) fn run(
        &self,
        job: Job,
        conversation: Snapshot,
        values: Arc<PreparedMessages>,
        earlier: Earlier,
        token: CancelToken,
    ) {
        let _ = self.jobs.send((job, conversation, values, earlier, token));
    }
}

/// Runs `job`, a panic in it becoming an error.
pub(super) fn run_caught(
    job: Job,
    conversation: &Snapshot,
    values: &PreparedMessages,
    earlier: Earlier,
    token: &CancelToken,
) -> Result<Output, RenderError> {
    catch_unwind(AssertUnwindSafe(|| {
        run(job, conversation, values, earlier, token)
    }))
    .unwrap_or_else(|payload| Err(panic_error(payload.as_ref())))
}

/// Starts runner `id`; it reports each finished job to `done`.
pub(super) fn spawn(id: u64, done: Sender<Command>) -> std::io::Result<Runner> {
    let (jobs, inbox) = mpsc::channel::<Task>();
    std::thread::Builder::new()
        .name(format!("chatplate-render-{id}"))
        .spawn(move || {
            for (job, conversation, values, earlier, token) in inbox {
                let result = run_caught(job, &conversation, &values, earlier, &token);
                if done.send(Command::Done { runner: id, result }).is_err() {
                    return;
                }
            }
        })?;
    Ok(Runner { id, jobs })
}

fn run(
    job: Job,
    conversation: &Snapshot,
    values: &PreparedMessages,
    earlier: Earlier,
    token: &CancelToken,
) -> Result<Output, RenderError> {
    let rendered = earlier.prompt;
    match job {
        Job::Render { template } => {
            #[cfg(debug_assertions)]
            test_panic(conversation);
            let prompt = render_prompt(&template, conversation, values, token)?;
            // From where the previous render's search left off (see `relocate`).
            let (spans, line_starts) =
                locate_again(&prompt, &conversation.messages, earlier.located.as_deref());
            Ok(Output::Rendered(Rendered {
                line_starts,
                spans,
                prompt: prompt.into(),
            }))
        }
        Job::Attribute {
            template,
            previous,
            focus,
        } => {
            // The one job that needs the whole conversation: built here, off the
            // dispatcher, and kept by the result for the next incremental attribution
            // (not when a render has already cancelled it: the copy takes milliseconds
            // at 10,000 messages, and the render may be waiting for this runner).
            if token.is_cancelled() {
                return Err(RenderError::cancelled());
            }
            let conversation = Arc::new(conversation.conversation());
            super::inspection::attribute(
                &template,
                (&conversation, values),
                previous.as_deref(),
                (rendered, focus),
                token,
            )
        }
        Job::Open { target } => super::opening::open(&target),
        Job::OpenRevision { model, revision } => super::opening::open_revision(&model, &revision),
        Job::ScanCache => Ok(super::opening::scan_cache()),
        Job::Tokenize {
            choice,
            prompt,
            template,
        } => super::tokenizing::tokenize(
            &choice,
            &prompt,
            template.as_deref(),
            &conversation.conversation(),
            token,
        ),
        Job::Capabilities { template, settings } | Job::Badges { template, settings } => {
            super::capabilities::probe(&template, &settings, token)
        }
        Job::Values { template, message } => super::unused::probe(
            &template,
            message,
            &conversation.conversation(),
            values,
            rendered.as_ref().map(|(prompt, took)| (&**prompt, *took)),
            token,
        ),
        Job::Compare {
            counterpart,
            against,
        }
        | Job::Matrix {
            counterpart,
            against,
        } => super::comparing::render(&counterpart, against, conversation, values, token),
        Job::Parse {
            template,
            lookup,
            output,
        } => super::parsing::parse_pasted(&template, &lookup, &output, conversation, token),
        Job::GenerationMarks { template } => {
            super::generation_marks::mark(&template, conversation, token)
        }
        Job::RoundTrips { template, lookup } => {
            super::round_trips::check(&template, &lookup, conversation, token)
        }
        Job::Lint { template, options } => super::linting::lint(&template, &options, token),
        Job::Knobs { template } => super::knobs::find(&template, conversation, token),
        Job::TurnCosts {
            template,
            choice,
            previous,
        } => super::turn_costs::count(&template, &choice, previous.as_deref(), conversation, token),
    }
}

/// The prompt `template` renders from `conversation`.
pub(super) fn render_prompt(
    template: &super::Template,
    conversation: &Snapshot,
    values: &PreparedMessages,
    token: &CancelToken,
) -> Result<String, RenderError> {
    let compiled = template.compiled()?;
    let settings = &conversation.settings;
    // Continuing the final message renders from the messages themselves.
    if settings.continue_final_message.field().is_some() {
        compiled.render_cancellable(conversation.conversation(), token)
    } else {
        compiled.render_prepared(settings, values, token)
    }
}

/// A caught panic as a render error; the session it was rendering is unharmed.
fn panic_error(payload: &(dyn Any + Send)) -> RenderError {
    let what = payload
        .downcast_ref::<&str>()
        .map(std::string::ToString::to_string)
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    RenderError::new(
        RenderErrorKind::Runtime,
        format!(
            "chatplate bug: the template engine crashed ({what}). Your session is unharmed; \
             please report this template and conversation."
        ),
    )
}

/// Debug builds only: panics when a message contains `$CHATPLATE_TEST_PANIC`, so tests
/// can prove a crash on the worker is contained (no template is known to crash it).
#[cfg(debug_assertions)]
fn test_panic(conversation: &Snapshot) {
    let Some(marker) = std::env::var("CHATPLATE_TEST_PANIC")
        .ok()
        .filter(|m| !m.is_empty())
    else {
        return;
    };
    let hit = conversation.messages.iter().any(|message| {
        message
            .get("content")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|text| text.contains(&marker))
    });
    assert!(!hit, "test panic requested through CHATPLATE_TEST_PANIC");
}
