//! A wall-clock bound on one render, the safety net behind fuel.
//!
//! Fuel stops loops and large allocations, but a few MiniJinja internals walk data
//! without charging it (repeatedly doubling a list with `l + l` builds a lazy chain
//! that is later walked item by item, uncharged). Running the render on a worker
//! thread with a deadline keeps the caller responsive whatever the template does: past
//! the deadline the caller gets a limit error, and the abandoned worker is left to
//! finish or be ended with the process.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use super::{CompiledTemplate, Conversation, RenderError, RenderErrorKind};

/// Renders `conversation` on a worker thread, giving up after `deadline`.
pub fn render_with_deadline(
    template: &Arc<CompiledTemplate>,
    conversation: Conversation,
    deadline: Duration,
) -> Result<String, RenderError> {
    let (sender, receiver) = mpsc::channel();
    let worker = Arc::clone(template);
    let spawned = std::thread::Builder::new()
        .name("chatplate-render".into())
        .spawn(move || {
            // The receiver may be gone after a timeout; nothing to report then.
            let _ = sender.send(worker.render(&conversation));
        });
    if spawned.is_err() {
        return Err(RenderError::input("could not start a render thread"));
    }
    match receiver.recv_timeout(deadline) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(RenderError {
            kind: RenderErrorKind::Timeout,
            message: format!(
                "the template did not finish within {:.1} s and was abandoned",
                deadline.as_secs_f64()
            ),
            position: None,
        }),
        // The worker ended without answering: it panicked, which is a chatplate bug.
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(RenderError::input(
            "internal error while rendering (please report this template and input)",
        )),
    }
}
