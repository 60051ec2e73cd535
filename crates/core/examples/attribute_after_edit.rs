//! Times the attribution the app runs after an edit: a session fixture is attributed
//! once, one message gets a character appended, and the new prompt is attributed
//! `N` times from the first attribution, as the app's worker does after its render
//! (`attribute_prepared`: given the prompt and the messages the render converted).
//!
//! ```sh
//! cargo build --release -p chatplate-core --example attribute_after_edit
//! target/release/examples/attribute_after_edit FIXTURE.json [MESSAGE] [N]
//! ```
//!
//! `MESSAGE` is the index of the edited message (default: the last), `N` the number of
//! attributions (default 5), each timed on stderr. With `CHATPLATE_FOCUS=A..B` in the
//! environment, the first attribution on screen first (`attribute_focused`, messages
//! `A..B` in focus, as the app asks when it opens a session) is timed before it. For the CPU time of one attribution,
//! run it under `/usr/bin/time` with two values of `N` and divide the difference by the
//! difference in `N` (BENCHMARKS.md, "Attribution after an edit").

use std::path::{Path, PathBuf};
use std::time::Instant;

use chatplate_core::inspect::{
    attribute_focused, attribute_incremental_with_prompt, attribute_prepared, Previous,
};
use chatplate_core::{catalog, Session, TemplateAccess};
use chatplate_render::{CancelToken, CompiledTemplate, Limits, PreparedMessages};

/// The allocator the chatplate binary installs: its bookkeeping and mimalloc's speed are
/// part of what a user's run costs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path: PathBuf = args
        .next()
        .ok_or("usage: FIXTURE.json [MESSAGE] [N]")?
        .into();
    let message: Option<usize> = args.next().map(|a| a.parse()).transpose()?;
    let times: usize = args.next().map_or(Ok(5), |a| a.parse())?;
    let session = Session::load(&path)?;
    // The bench fixtures point into the conformance corpus, outside their folder.
    let template = catalog::resolve(
        &session.template,
        path.parent().unwrap_or(Path::new(".")),
        &TemplateAccess::within(Path::new("/")),
    )?;
    let conversation = catalog::conversation_for(&session, &template)?;
    let compiled = CompiledTemplate::compile(&template.source, Limits::default())?;
    let cancel = CancelToken::new();
    if let Ok(focus) = std::env::var("CHATPLATE_FOCUS") {
        let (start, end) = focus.split_once("..").ok_or("CHATPLATE_FOCUS: A..B")?;
        let focus = start.parse()?..end.parse()?;
        let prompt = compiled.render(&conversation)?;
        let prepared = PreparedMessages::new(&conversation);
        let started = Instant::now();
        let focused = attribute_focused(
            &compiled,
            &conversation,
            &prepared,
            &prompt,
            None,
            focus,
            &cancel,
        )?;
        eprintln!(
            "first attribution on screen first: {:?} (partial: {:?})",
            started.elapsed(),
            focused.partial
        );
    }
    let started = Instant::now();
    let (first, prompt) =
        attribute_incremental_with_prompt(&compiled, &conversation, None, &cancel)?;
    eprintln!(
        "first attribution (prompt included): {:?}",
        started.elapsed()
    );
    let mut edited = conversation.clone();
    let index = message.unwrap_or(edited.messages.len().saturating_sub(1));
    let content = edited.messages[index]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    edited.messages[index]["content"] = format!("{content}x").into();
    let new_prompt = compiled.render(&edited)?;
    let prepared = PreparedMessages::new(&edited);
    for _ in 0..times {
        let previous = Previous {
            conversation: &conversation,
            prompt: &prompt,
            attribution: &first,
        };
        let started = Instant::now();
        let attribution = attribute_prepared(
            &compiled,
            &edited,
            &prepared,
            &new_prompt,
            Some(previous),
            &cancel,
        )?;
        eprintln!(
            "after editing message {index}: {:?} ({} spans)",
            started.elapsed(),
            attribution.spans.len()
        );
    }
    Ok(())
}
