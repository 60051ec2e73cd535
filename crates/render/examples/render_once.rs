//! Renders one template once, for counting the render alone with callgrind.
//!
//! ```sh
//! cargo build --release -p chatplate-render --example render_once
//! valgrind --tool=callgrind --toggle-collect='render_once::render_once' \
//!     target/release/examples/render_once TEMPLATE.jinja CONTEXT.json
//! ```
//!
//! `CONTEXT.json` is an object with `messages`, optional `tools` and
//! `add_generation_prompt`, and any other variables (`bos_token`, ...). Loading the files
//! and compiling happen outside [`render_once`], so the count toggled on it is the
//! render (the conversation turned into template values, then the template run). The
//! prompt's length goes to stderr, the prompt to stdout with `--print`; `--rewritten` prints the source MiniJinja compiles
//! instead (after chatplate's rewrites), to see what a render runs. `--iterations N`
//! renders N times (the count of one render is then the difference between two runs with
//! different N, divided by the difference in N, so a first render's one-time setup cancels).

use chatplate_render::{CompiledTemplate, Conversation, Limits, MeteredAllocator};
use serde_json::{Map, Value};

/// The allocator the chatplate binary installs: its bookkeeping is part of a render's cost.
#[global_allocator]
static ALLOCATOR: MeteredAllocator = MeteredAllocator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [template, context, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: render_once TEMPLATE.jinja CONTEXT.json [--print | --rewritten] [--iterations N]".into(),
        );
    };
    let source = std::fs::read_to_string(template)?;
    if rest.iter().any(|arg| arg == "--rewritten") {
        print!("{}", chatplate_render::rewritten_source(&source));
        return Ok(());
    }
    let context: Map<String, Value> = serde_json::from_str(&std::fs::read_to_string(context)?)?;
    let conversation = conversation(context)?;
    let compiled = CompiledTemplate::compile(&source, Limits::default())?;
    let iterations = iterations(rest)?;
    let mut prompt = render_once(&compiled, &conversation)?;
    for _ in 1..iterations {
        prompt = render_once(&compiled, &conversation)?;
    }
    eprintln!("{} bytes", prompt.len());
    if rest.iter().any(|arg| arg == "--print") {
        print!("{prompt}");
    }
    Ok(())
}

/// The number after `--iterations`, 1 without it.
fn iterations(args: &[String]) -> Result<usize, String> {
    let Some(at) = args.iter().position(|arg| arg == "--iterations") else {
        return Ok(1);
    };
    args.get(at + 1)
        .and_then(|count| count.parse().ok())
        .ok_or_else(|| "--iterations needs a number".to_string())
}

/// The counted part: one render of the conversation.
#[inline(never)]
fn render_once(
    compiled: &CompiledTemplate,
    conversation: &Conversation,
) -> Result<String, chatplate_render::RenderError> {
    compiled.render(conversation)
}

/// The context file as a conversation; a fixed clock, as the fixtures' `clock` gives one.
fn conversation(mut context: Map<String, Value>) -> Result<Conversation, String> {
    let Some(Value::Array(messages)) = context.remove("messages") else {
        return Err("the context has no `messages` list".into());
    };
    let tools = match context.remove("tools") {
        Some(Value::Array(tools)) => Some(tools),
        _ => None,
    };
    let add_generation_prompt = context
        .remove("add_generation_prompt")
        .is_some_and(|value| value == Value::Bool(true));
    let clock = "2026-01-15T00:00:00".parse().ok();
    Ok(Conversation::new(messages)
        .with_tools(tools)
        .with_generation_prompt(add_generation_prompt)
        .with_variables(context)
        .with_clock(clock))
}
