//! The `chatplate` binary: the TUI with no subcommand, headless commands otherwise.

use std::io::Write;

use clap::Parser;

fn main() {
    let cli = chatplate::cli::Cli::parse();
    match chatplate::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            // Not eprintln!: stderr may be a terminal that is gone, and that must not
            // turn an error exit into a panic.
            let _ = writeln!(std::io::stderr(), "chatplate: {err:#}");
            std::process::exit(2);
        }
    }
}
