//! `chatplate render`: one prompt, byte for byte, from a fixture or from loose files.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::{Map, Value as Json};

use super::limits::LimitArgs;
use super::output;
use crate::catalog::{self, TemplateAccess};
use crate::check::describe_error;
use crate::files::{self, MAX_SESSION_BYTES};
use crate::render::{CompiledTemplate, Conversation, RenderControl};
use crate::session::Session;
use crate::visible;

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
    /// A folder a fixture's template path may also lead into (repeatable); by default
    /// it must stay inside the fixture's folder.
    #[arg(long = "template-root", value_name = "DIR")]
    template_roots: Vec<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// `chatplate render`: the prompt bytes on stdout, or the error on stderr (exit 1).
pub(super) fn run(args: RenderArgs) -> Result<i32> {
    let (source, conversation) = match &args.fixture {
        Some(path) => fixture_input(path, Some(&args.template_roots))?,
        None => quick_input(&args)?,
    };
    let limits = args.limits.limits();
    let control = RenderControl::default().with_deadline(limits.deadline);
    let rendered = CompiledTemplate::compile(&source, limits)
        .and_then(|compiled| compiled.render_controlled(&conversation, &control));
    match rendered {
        Ok(prompt) => {
            output::print(&prompt)?;
            Ok(0)
        }
        Err(err) => {
            eprintln!("{}", describe_error(&err, &source));
            Ok(1)
        }
    }
}

/// A fixture's template source and conversation. Its template path must stay inside
/// the fixture's folder or one of `roots`; with no roots given it may lead anywhere.
pub(super) fn fixture_input(
    path: &Path,
    roots: Option<&[PathBuf]>,
) -> Result<(String, Conversation)> {
    let session = Session::load(path)?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let access = match roots {
        Some(roots) => {
            let mut allowed = vec![dir.to_path_buf()];
            allowed.extend(roots.iter().cloned());
            TemplateAccess::Within(allowed)
        }
        None => TemplateAccess::Anywhere,
    };
    let template = catalog::resolve(&session.template, dir, &access)?;
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
            c.parse().with_context(|| {
                format!(
                    "--clock {} is not like 2026-01-15T00:00:00",
                    visible::quoted(c)
                )
            })
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

/// `--template`: a path the user typed (read wherever it is), else a bundled name.
fn load_template(name_or_path: &str) -> Result<catalog::TemplateSource> {
    let path = Path::new(name_or_path);
    if path.exists() {
        let mut loaded = catalog::load_all(path);
        for problem in &loaded.problems {
            eprintln!(
                "chatplate: warning: {}",
                visible::message(&problem.to_string())
            );
        }
        if loaded.templates.is_empty() {
            match loaded.problems.into_iter().next() {
                Some(problem) => return Err(problem.into()),
                None => bail!("{}: no template found", visible::quoted(name_or_path)),
            }
        }
        return Ok(loaded.templates.remove(0));
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
    let text = files::read_text(path, MAX_SESSION_BYTES)?;
    serde_json::from_str(&text)
        .map_err(|err| anyhow::anyhow!("{}:{}:{}: {err}", path.display(), err.line(), err.column()))
}

/// `KEY=VALUE`, with VALUE taken as JSON when it parses (true, 3, "x", {...}) and as a
/// plain string otherwise.
fn parse_var(pair: &str) -> Result<(String, Json)> {
    let Some((key, value)) = pair.split_once('=') else {
        bail!("--var {} is not KEY=VALUE", visible::quoted(pair));
    };
    let value = serde_json::from_str(value).unwrap_or_else(|_| Json::from(value));
    Ok((key.to_string(), value))
}
