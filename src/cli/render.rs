//! `chatplate render`: one prompt, byte for byte, from a fixture or from loose files.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::{Map, Value as Json};

use super::diagnostic;
use super::fetching::ensure_cached;
use super::limits::LimitArgs;
use super::output;
use super::session_input::{
    input_dir, load_session, open_template, read_json, shown, template_access,
};
use super::stdin;
use chatplate_core::catalog::{self, TemplateAccess, TemplateSource};
use chatplate_core::check::stdin_template_note;
use chatplate_core::lint::double_bos;
use chatplate_core::session::Session;
use chatplate_render::visible;
use chatplate_render::{CompiledTemplate, Conversation, RenderControl};

#[derive(Debug, Args)]
pub(super) struct RenderArgs {
    /// A session fixture (or an OpenAI request body) to render.
    #[arg(conflicts_with_all = ["template", "messages"])]
    fixture: Option<PathBuf>,
    /// Template: a .jinja, a model folder (or a file in one), a .gguf, a model id
    /// ORG/NAME[@REVISION] (local HF cache, else the Hub), or a bundled name; a `#NAME`
    /// suffix picks a named template.
    #[arg(long, requires = "messages")]
    template: Option<String>,
    /// Use this named template of the model (`tool_use`, ...) instead of letting the
    /// tools choose, as transformers does.
    #[arg(long, value_name = "NAME")]
    template_name: Option<String>,
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
    /// A folder a fixture's template path may also lead into (repeatable), besides the
    /// config file's "template_roots"; otherwise it must stay inside the fixture's folder.
    #[arg(long = "template-root", value_name = "DIR")]
    template_roots: Vec<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// `chatplate render`: the prompt bytes on stdout, or the error on stderr (exit 1).
pub(super) fn run(args: RenderArgs) -> Result<i32> {
    let dash = |path: &Option<PathBuf>| path.as_deref().is_some_and(stdin::is_stdin);
    stdin::at_most_one(&[
        ("FIXTURE", dash(&args.fixture)),
        ("--template", args.template.as_deref() == Some("-")),
        ("--messages", dash(&args.messages)),
        ("--tools", dash(&args.tools)),
    ])?;
    let (template, conversation) = match &args.fixture {
        Some(path) => fixture_template(
            path,
            args.template_name.as_deref(),
            Some(&args.template_roots),
        )?,
        None => quick_input(&args)?,
    };
    let source = &template.source;
    let limits = args.limits.limits();
    let control = RenderControl::default();
    let bos = conversation
        .variables
        .get("bos_token")
        .and_then(Json::as_str);
    let bos = bos.map(str::to_owned);
    let rendered = CompiledTemplate::compile(source, limits)
        .and_then(|compiled| compiled.render_controlled(conversation, &control));
    match rendered {
        Ok(prompt) => {
            output::print(&prompt)?;
            // lint's double-bos rule, on the prompt printed: a warning, not a failure.
            if let Some(warning) = double_bos::warning(&template, bos.as_deref(), &prompt) {
                let warning = visible::message(&warning);
                output::note(&format!(
                    "chatplate: warning: {warning} (lint rule double-bos)"
                ));
            }
            Ok(0)
        }
        Err(err) => {
            output::note(&diagnostic::template_error(&err, &template));
            Ok(1)
        }
    }
}

/// A fixture's (or request body's) template source and render input; `name` picks a
/// named template of its model. Its template path must stay inside the fixture's folder
/// (the working directory for `-`) or one of `roots`; with no roots given it may lead
/// anywhere.
pub(super) fn fixture_input(
    path: &Path,
    name: Option<&str>,
    roots: Option<&[PathBuf]>,
) -> Result<(String, Conversation)> {
    let (template, conversation) = fixture_template(path, name, roots)?;
    Ok((template.source, conversation))
}

/// [`fixture_input`] with the whole template (where it came from, for error messages).
pub(super) fn fixture_template(
    path: &Path,
    name: Option<&str>,
    roots: Option<&[PathBuf]>,
) -> Result<(TemplateSource, Conversation)> {
    let (session, template) = fixture_resolved(path, name, roots)?;
    // The session is not needed again: its messages move into the conversation.
    let conversation = catalog::into_conversation_for(session, &template)?;
    Ok((template, conversation))
}

/// [`fixture_template`] with the session itself.
pub(super) fn fixture_session(
    path: &Path,
    name: Option<&str>,
    roots: Option<&[PathBuf]>,
) -> Result<(Session, TemplateSource, Conversation)> {
    let (session, template) = fixture_resolved(path, name, roots)?;
    let conversation = catalog::conversation_for(&session, &template)?;
    Ok((session, template, conversation))
}

/// A fixture's session and its resolved template.
fn fixture_resolved(
    path: &Path,
    name: Option<&str>,
    roots: Option<&[PathBuf]>,
) -> Result<(Session, TemplateSource)> {
    let session = load_session(path)?;
    let dir = input_dir(path);
    let access = match roots {
        Some(roots) => template_access(&dir, roots),
        None => TemplateAccess::Anywhere,
    };
    ensure_cached(&session.template)?;
    let set = catalog::resolve_set(&session.template, &dir, &access)
        .map_err(|err| with_stdin_note(err, path, &session))?
        .pin(name);
    let template = set.choose(session.tools.is_some())?;
    Ok((session, template))
}

fn quick_input(args: &RenderArgs) -> Result<(TemplateSource, Conversation)> {
    let (Some(template), Some(messages_path)) = (&args.template, &args.messages) else {
        bail!("give a FIXTURE, or --template and --messages");
    };
    warn_about_unusable(template);
    let set = open_template(template)?;
    let (messages, inline_tools) = read_messages(messages_path)?;
    let tools = match &args.tools {
        Some(path) => Some(read_json_list(path)?),
        None => inline_tools,
    };
    let template = set
        .pin(args.template_name.as_deref())
        .choose(tools.is_some())?;
    let mut variables: Map<String, Json> = template.token_variables();
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
    let conversation = Conversation::new(messages)
        .with_tools(tools)
        .with_generation_prompt(args.add_generation_prompt)
        .with_variables(variables)
        .with_clock(clock);
    Ok((template, conversation))
}

/// A folder given as `--template` keeps its good templates; the files it skipped are
/// worth a warning.
fn warn_about_unusable(template: &str) {
    let path = Path::new(template);
    if !path.is_dir() {
        return;
    }
    for problem in catalog::load_all(path).problems {
        output::note(&format!(
            "chatplate: warning: {}",
            visible::message(&problem.to_string())
        ));
    }
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
                    shown(path).display()
                ),
            };
            let tools = fields.remove("tools").and_then(|t| t.as_array().cloned());
            Ok((messages, tools))
        }
        _ => bail!("{}: expected a list of messages", shown(path).display()),
    }
}

fn read_json_list(path: &Path) -> Result<Vec<Json>> {
    match read_json(path)? {
        Json::Array(items) => Ok(items),
        _ => bail!("{}: expected a JSON list", shown(path).display()),
    }
}

/// `err` of the template the fixture at `path` names; for a fixture from standard input
/// with a template path, it says where that path was looked for.
pub(super) fn with_stdin_note(
    err: impl Into<anyhow::Error>,
    path: &Path,
    session: &Session,
) -> anyhow::Error {
    let err = err.into();
    match stdin_template_note(&session.template).filter(|_| stdin::is_stdin(path)) {
        Some(note) => anyhow::anyhow!("{err} {note}"),
        None => err,
    }
}

/// `KEY=VALUE`, with VALUE taken as JSON when it parses (true, 3, "x", {...}) and as a
/// plain string otherwise.
pub(super) fn parse_var(pair: &str) -> Result<(String, Json)> {
    let Some((key, value)) = pair.split_once('=') else {
        bail!("--var {} is not KEY=VALUE", visible::quoted(pair));
    };
    let value = serde_json::from_str(value).unwrap_or_else(|_| Json::from(value));
    Ok((key.to_string(), value))
}
