//! The command line: a thin layer that parses arguments and calls the engine.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use serde_json::{Map, Value as Json};

use crate::check::{self, describe_error};
use crate::render::{render_with_deadline, CompiledTemplate, Conversation, Limits};
use crate::session::Session;
use crate::{catalog, corpus, tui};

/// chatplate: see the exact prompt a chat template makes of a conversation.
#[derive(Debug, Parser)]
#[command(name = "chatplate", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// A session (.json fixture), template (.jinja) or tokenizer_config.json to open.
    pub file: Option<PathBuf>,
    /// Extra template directories for the picker (repeatable).
    #[arg(long = "templates", value_name = "DIR")]
    pub template_dirs: Vec<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the rendered prompt, byte for byte (nothing added).
    Render(RenderArgs),
    /// Re-render fixtures and compare with their `expected`; ends with "N passed, N failed".
    Check {
        /// Fixture files or directories (searched recursively).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Rewrite `expected` from the current render instead of comparing.
        #[arg(long)]
        bless: bool,
    },
    /// Time template compilation and the median render of each fixture.
    Bench {
        /// Fixture files.
        #[arg(required = true)]
        fixtures: Vec<PathBuf>,
        /// Renders per fixture.
        #[arg(long, default_value_t = 200)]
        iterations: usize,
    },
    /// Convert a conformance corpus (MANIFEST.json + templates + scenarios) into fixtures.
    ImportCorpus {
        /// The corpus set directory, e.g. ../shared/conformance/dev.
        corpus: PathBuf,
        /// Where to write `<template>/<scenario>.json`.
        out: PathBuf,
    },
    /// List the bundled templates.
    Templates,
}

#[derive(Debug, Args)]
struct RenderArgs {
    /// A session fixture to render.
    #[arg(conflicts_with_all = ["template", "messages"])]
    fixture: Option<PathBuf>,
    /// Template: a .jinja file, tokenizer_config.json, or a bundled template name.
    #[arg(long, requires = "messages")]
    template: Option<String>,
    /// JSON file with the messages list (or an object with "messages" and "tools").
    #[arg(long)]
    messages: Option<PathBuf>,
    /// JSON file with the tools list.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// Extra template variable, KEY=VALUE; VALUE is parsed as JSON when it can be.
    #[arg(long = "var", value_name = "KEY=VALUE")]
    vars: Vec<String>,
    /// Open an assistant turn at the end.
    #[arg(long)]
    add_generation_prompt: bool,
    /// Fixed clock for strftime_now, e.g. 2026-01-15T00:00:00.
    #[arg(long)]
    clock: Option<String>,
}

/// Runs the parsed command line; the exit code is the returned value.
pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        None => {
            tui::run(tui::TuiOptions {
                file: cli.file,
                template_dirs: cli.template_dirs,
            })?;
            Ok(0)
        }
        Some(Command::Render(args)) => render(args),
        Some(Command::Check { paths, bless }) => Ok(check(&paths, bless)),
        Some(Command::Bench {
            fixtures,
            iterations,
        }) => bench(&fixtures, iterations.max(1)),
        Some(Command::ImportCorpus { corpus, out }) => {
            let written = corpus::import(&corpus, &out)?;
            println!("wrote {} fixtures to {}", written.len(), out.display());
            Ok(0)
        }
        Some(Command::Templates) => {
            for template in catalog::bundled() {
                println!("{}", template.name);
            }
            Ok(0)
        }
    }
}

fn render(args: RenderArgs) -> Result<i32> {
    let (source, conversation) = match &args.fixture {
        Some(path) => fixture_input(path)?,
        None => quick_input(&args)?,
    };
    let limits = Limits::default();
    let rendered = CompiledTemplate::compile(&source, limits).and_then(|compiled| {
        render_with_deadline(&Arc::new(compiled), conversation, limits.deadline)
    });
    match rendered {
        Ok(prompt) => {
            std::io::stdout().write_all(prompt.as_bytes())?;
            Ok(0)
        }
        Err(err) => {
            eprintln!("{}", describe_error(&err, &source));
            Ok(1)
        }
    }
}

fn fixture_input(path: &Path) -> Result<(String, Conversation)> {
    let session = Session::load(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let template = catalog::resolve(&session.template, dir)?;
    Ok((template.source, session.conversation()?))
}

fn quick_input(args: &RenderArgs) -> Result<(String, Conversation)> {
    let (Some(template), Some(messages_path)) = (&args.template, &args.messages) else {
        bail!("give a FIXTURE, or --template and --messages");
    };
    let template = load_template(template)?;
    let (messages, inline_tools) = read_messages(messages_path)?;
    let tools = match &args.tools {
        Some(path) => Some(read_json_list(path)?),
        None => inline_tools,
    };
    let mut variables = Map::new();
    for (key, value) in [
        ("bos_token", &template.bos_token),
        ("eos_token", &template.eos_token),
    ] {
        if let Some(token) = value {
            variables.insert(key.into(), Json::from(token.as_str()));
        }
    }
    for pair in &args.vars {
        let (key, value) = parse_var(pair)?;
        variables.insert(key, value);
    }
    let clock = args
        .clock
        .as_deref()
        .map(|c| {
            c.parse()
                .with_context(|| format!("--clock {c:?} is not like 2026-01-15T00:00:00"))
        })
        .transpose()?;
    let conversation = Conversation {
        messages,
        tools,
        add_generation_prompt: args.add_generation_prompt,
        variables,
        clock,
        ..Conversation::default()
    };
    Ok((template.source, conversation))
}

fn load_template(name_or_path: &str) -> Result<catalog::TemplateSource> {
    let path = Path::new(name_or_path);
    if path.exists() {
        let mut all = catalog::load_path(path)?;
        if all.is_empty() {
            bail!("{name_or_path}: no template found");
        }
        return Ok(all.remove(0));
    }
    Ok(catalog::find_bundled(name_or_path)?)
}

fn read_messages(path: &Path) -> Result<(Vec<Json>, Option<Vec<Json>>)> {
    let json = read_json(path)?;
    match json {
        Json::Array(messages) => Ok((messages, None)),
        Json::Object(mut fields) => {
            let messages = match fields.remove("messages") {
                Some(Json::Array(list)) => list,
                _ => bail!(
                    "{}: expected a list of messages or an object with \"messages\"",
                    path.display()
                ),
            };
            let tools = fields.remove("tools").and_then(|t| t.as_array().cloned());
            Ok((messages, tools))
        }
        _ => bail!("{}: expected a list of messages", path.display()),
    }
}

fn read_json_list(path: &Path) -> Result<Vec<Json>> {
    match read_json(path)? {
        Json::Array(items) => Ok(items),
        _ => bail!("{}: expected a JSON list", path.display()),
    }
}

fn read_json(path: &Path) -> Result<Json> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|err| anyhow::anyhow!("{}:{}:{}: {err}", path.display(), err.line(), err.column()))
}

/// `KEY=VALUE`, with VALUE taken as JSON when it parses (true, 3, "x", {...}) and as a
/// plain string otherwise.
fn parse_var(pair: &str) -> Result<(String, Json)> {
    let Some((key, value)) = pair.split_once('=') else {
        bail!("--var {pair:?} is not KEY=VALUE");
    };
    let value = serde_json::from_str(value).unwrap_or_else(|_| Json::from(value));
    Ok((key.to_string(), value))
}

fn check(paths: &[PathBuf], bless: bool) -> i32 {
    let fixtures = check::collect_fixtures(paths);
    let results = check::check_all(&fixtures, bless);
    let failed: Vec<_> = results.iter().filter(|r| !r.outcome.passed()).collect();
    for result in &failed {
        println!("{}", check::report(result));
    }
    if bless {
        println!("blessed {} fixtures", results.len() - failed.len());
    }
    println!(
        "{} passed, {} failed",
        results.len() - failed.len(),
        failed.len()
    );
    i32::from(!failed.is_empty())
}

fn bench(fixtures: &[PathBuf], iterations: usize) -> Result<i32> {
    println!(
        "{:<40} {:>8} {:>12} {:>12}",
        "fixture", "messages", "compile", "render p50"
    );
    for path in fixtures {
        let (source, conversation) = fixture_input(path)?;
        let started = Instant::now();
        let compiled = CompiledTemplate::compile(&source, Limits::default())
            .map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))?;
        let compile_time = started.elapsed();
        let mut samples = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let started = Instant::now();
            let result = compiled.render(&conversation);
            samples.push(started.elapsed());
            if let Err(err) = result {
                bail!("{}: {err}", path.display());
            }
        }
        samples.sort();
        println!(
            "{:<40} {:>8} {:>12.3?} {:>12.3?} {:>10}",
            path.display(),
            conversation.messages.len(),
            compile_time,
            samples[samples.len() / 2],
            compiled.last_fuel_used()
        );
    }
    Ok(0)
}
