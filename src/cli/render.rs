//! `chatplate render`: one prompt, byte for byte, from a fixture or from loose files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::{Map, Value as Json};

use crate::catalog;
use crate::check::describe_error;
use crate::render::{render_with_deadline, CompiledTemplate, Conversation, Limits};
use crate::session::Session;

#[derive(Debug, Args)]
pub(super) struct RenderArgs {
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

/// `chatplate render`: the prompt bytes on stdout, or the error on stderr (exit 1).
pub(super) fn run(args: RenderArgs) -> Result<i32> {
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

pub(super) fn fixture_input(path: &Path) -> Result<(String, Conversation)> {
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

pub(super) fn load_template(name_or_path: &str) -> Result<catalog::TemplateSource> {
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
pub(super) fn parse_var(pair: &str) -> Result<(String, Json)> {
    let Some((key, value)) = pair.split_once('=') else {
        bail!("--var {pair:?} is not KEY=VALUE");
    };
    let value = serde_json::from_str(value).unwrap_or_else(|_| Json::from(value));
    Ok((key.to_string(), value))
}
