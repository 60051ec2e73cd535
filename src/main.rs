//! The `chatplate` binary: the TUI with no subcommand, headless commands otherwise.

use std::io::Write;

use clap::Parser;

/// Counts what each thread holds, so a render's byte budget covers everything the
/// template makes the engine allocate (see `chatplate_render::MeteredAllocator`).
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn main() {
    let cli = chatplate::cli::Cli::parse();
    match chatplate::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        // The reader of stdout went away (`| head -1`): end quietly, like Unix tools.
        Err(err) if chatplate::cli::is_broken_pipe(&err) => std::process::exit(0),
        Err(err) => {
            // Not eprintln!: stderr may be a terminal that is gone, and that must not
            // turn an error exit into a panic.
            let text = chatplate_render::visible::message(&format!("{err:#}"));
            let _ = writeln!(std::io::stderr(), "chatplate: {text}");
            std::process::exit(2);
        }
    }
}
