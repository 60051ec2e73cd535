//! `chatplate export --openai`: a fixture written back as a Chat Completions request body,
//! for replaying against the server under test with curl.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::fetching::ensure_cached;
use super::output;
use super::render::with_stdin_note;
use super::session_input::{input_dir, load_session, template_access};
use chatplate_core::catalog;
use chatplate_core::machine_output;
use chatplate_core::request;
use chatplate_core::session::write_atomically;

#[derive(Debug, Args)]
pub(super) struct ExportArgs {
    /// Write an OpenAI Chat Completions body (with vLLM / SGLang / llama.cpp extras).
    #[arg(long, required = true)]
    openai: bool,
    /// The session fixture (`-`: standard input).
    fixture: PathBuf,
    /// Where to write the body; stdout when absent.
    #[arg(short, long, value_name = "BODY.json")]
    out: Option<PathBuf>,
}

/// `chatplate export --openai`: the body on stdout (or in `--out`), notes on stderr.
pub(super) fn run(args: ExportArgs) -> Result<i32> {
    let session = load_session(&args.fixture)?;
    let dir = input_dir(&args.fixture);
    ensure_cached(&session.template)?;
    // Like `render FIXTURE`: the fixture's template path stays inside its folder or an
    // allowed root.
    let access = template_access(&dir, &[]);
    let template = catalog::resolve_for(&session, &dir, &access)
        .map_err(|err| with_stdin_note(err, &args.fixture, &session))?;
    let exported = request::export(&session, &template);
    for note in &exported.notes {
        output::note(&format!("chatplate: {note}"));
    }
    // Control characters escaped: the body is read back as the same JSON, and shown by
    // `cat` or `curl -v` it cannot drive the terminal.
    let mut text = machine_output::to_json_pretty(&exported.body)?;
    text.push('\n');
    match &args.out {
        Some(path) => write_atomically(path, text.as_bytes())?,
        None => output::print(&text)?,
    }
    Ok(0)
}
