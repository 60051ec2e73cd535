//! Renders a session fixture through the engine crates' API (chatplate-core and
//! chatplate-render), with neither the command line nor the terminal app compiled in:
//!
//! ```sh
//! cargo run -p chatplate-core --example render_fixture -- sessions/example.json
//! ```
//!
//! Prints the prompt exactly as transformers would produce it and says on stderr whether
//! it matches the fixture's `expected`. Exits 1 when the template fails or the prompt
//! differs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chatplate_core::{catalog, Expected, Session, TemplateAccess};
use chatplate_render::{CompiledTemplate, Limits};

/// The allocator the chatplate binary installs: its bookkeeping and mimalloc's speed are
/// part of what a user's run costs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let path: PathBuf = std::env::args_os()
        .nth(1)
        .map_or_else(|| "sessions/example.json".into(), PathBuf::from);
    let session = Session::load(&path)?;
    // Relative template paths in a fixture start at the fixture's directory, and may
    // not lead out of it (a fixture from someone else must not read other files).
    let dir = path.parent().unwrap_or(Path::new("."));
    let template = catalog::resolve(&session.template, dir, &TemplateAccess::within(dir))?;
    // The template's special tokens (bos_token, ...) join the fixture's variables.
    let conversation = catalog::conversation_for(&session, &template)?;
    let compiled = CompiledTemplate::compile(&template.source, Limits::default());
    let rendered = compiled.and_then(|compiled| compiled.render(&conversation));
    let prompt = match rendered {
        Ok(prompt) => prompt,
        Err(err) => {
            eprintln!("{err}");
            if let Some(excerpt) = err.excerpt(&template.source, 2) {
                eprint!("{excerpt}");
            }
            let expected_error = match &session.expected {
                Some(Expected::Error(want)) => err.matches_expected(want),
                Some(Expected::Exception(want)) => err.matches_exception(want),
                _ => false,
            };
            return Ok(if expected_error {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
    };
    print!("{prompt}");
    match &session.expected {
        Some(Expected::Prompt(want)) if *want == prompt => {
            eprintln!("matches the fixture's expected prompt");
            Ok(ExitCode::SUCCESS)
        }
        Some(_) => {
            eprintln!("differs from the fixture's expected outcome");
            Ok(ExitCode::FAILURE)
        }
        None => Ok(ExitCode::SUCCESS),
    }
}
