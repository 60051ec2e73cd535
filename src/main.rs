//! The `chatplate` binary: the TUI with no subcommand, headless commands otherwise.

use clap::Parser;

fn main() {
    let cli = chatplate::cli::Cli::parse();
    match chatplate::cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            eprintln!("chatplate: {err:#}");
            std::process::exit(2);
        }
    }
}
