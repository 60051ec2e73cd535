//! Compiles a template file N times, for counting compile instructions with callgrind
//! (see BENCHMARKS.md, "Instruction counts"): load on the machine does not change them.
//!
//! ```sh
//! cargo build --release -p chatplate-render --example compile_count
//! valgrind --tool=callgrind target/release/examples/compile_count chatplate FILE 20
//! valgrind --tool=callgrind target/release/examples/compile_count bare FILE 20
//! ```
//!
//! `chatplate` runs `CompiledTemplate::compile`; `bare` runs MiniJinja's own
//! `Environment::add_template_owned` of the same source with the same syntax settings
//! (the baseline: no preparation, rewrites or Jinja2 checks), `parse` only MiniJinja's
//! parser; `thread` is `chatplate` on a thread whose stack is large enough that compile
//! never switches to a fresh one. Subtract a run with N = 0 for the per-compile count.

use std::hint::black_box;

use chatplate_render::{syntax_config, CompiledTemplate, Limits};

/// The allocator the chatplate binary installs: its bookkeeping and mimalloc's speed are
/// part of what a user's run costs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, mode, file, times] = args.as_slice() else {
        eprintln!("usage: compile_count chatplate|thread|bare|parse FILE N");
        std::process::exit(2);
    };
    let source = std::fs::read_to_string(file).expect("readable template");
    let times: usize = times.parse().expect("a count");
    if mode == "thread" {
        // The same compiles on a thread whose stack is large enough that
        // `CompiledTemplate::compile` never switches to a fresh one.
        let run = move || compile_n(&source, times);
        let thread = std::thread::Builder::new().stack_size(1 << 30).spawn(run);
        thread.expect("a thread").join().expect("no panic");
        return;
    }
    for _ in 0..times {
        match mode.as_str() {
            "chatplate" => {
                black_box(CompiledTemplate::compile(black_box(&source), Limits::default()).ok());
            }
            "bare" => {
                let mut env = minijinja::Environment::new();
                env.set_syntax(syntax_config());
                black_box(
                    env.add_template_owned("t", black_box(source.clone()))
                        .is_ok(),
                );
            }
            "dump" => {
                // What compile produces, to compare two builds byte for byte.
                println!("{}", chatplate_render::rewritten_source(&source));
                match CompiledTemplate::compile(&source, Limits::default()) {
                    Ok(compiled) => println!("{}", compiled.prepared_source()),
                    Err(error) => println!("{error:?}"),
                }
            }
            "parse" => {
                let parsed = minijinja::machinery::parse(black_box(&source), "t", syntax_config());
                black_box(parsed.is_ok());
            }
            other => panic!("unknown mode {other}"),
        }
    }
}

fn compile_n(source: &str, times: usize) {
    for _ in 0..times {
        black_box(CompiledTemplate::compile(black_box(source), Limits::default()).ok());
    }
}
