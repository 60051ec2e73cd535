//! `chatplate import`: an OpenAI Chat Completions request body (as logged by vLLM,
//! SGLang, llama.cpp's server, ...) saved as a session fixture.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args;
use serde_json::Value as Json;

use super::fetching::ensure_cached;
use super::output;
use super::session_input::{open_template, read_input, shown, template_access};
use super::stdin;
use chatplate_core::catalog::ModelId;
use chatplate_core::check::render_session;
use chatplate_core::files::MAX_SESSION_BYTES;
use chatplate_core::request::{self, ImportOptions};
use chatplate_core::session::{Expected, TemplateRef};
use chatplate_render::Limits;

#[derive(Debug, Args)]
pub(super) struct ImportArgs {
    /// The request body (JSON; `-`: standard input).
    body: PathBuf,
    /// Where to write the session; stdout when absent.
    #[arg(short, long, value_name = "SESSION.json")]
    out: Option<PathBuf>,
    /// The template (as for `render --template`, `-` included); default: the body's chat_template,
    /// else its model from the local HF cache (or the Hub), else the bundled default.
    #[arg(long)]
    template: Option<String>,
    /// Pin a named template of the model (`tool_use`, ...).
    #[arg(long, value_name = "NAME")]
    template_name: Option<String>,
    /// Parse tool-call arguments given as JSON strings into objects, as vLLM does.
    #[arg(long)]
    parse_arguments: bool,
    /// Record the current render as the fixture's `expected`.
    #[arg(long)]
    bless: bool,
}

/// `chatplate import`: writes the session, reports what was kept on stderr.
pub(super) fn run(args: ImportArgs) -> Result<i32> {
    stdin::at_most_one(&[
        ("BODY", stdin::is_stdin(&args.body)),
        ("--template", args.template.as_deref() == Some("-")),
    ])?;
    let text = read_input(&args.body, MAX_SESSION_BYTES)?;
    let body = request::parse_body(&text, &shown(&args.body))?;
    drop(text);
    let out_dir = args
        .out
        .as_deref()
        .and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let options = ImportOptions {
        template: chosen_template(&args, &body, &out_dir)?,
        parse_arguments: args.parse_arguments,
    };
    let mut imported = request::import(body, &options)
        .map_err(|err| anyhow::anyhow!("{}: {err}", shown(&args.body).display()))?;
    if let (Some(name), None) = (&args.template_name, &args.template) {
        imported.session.template = with_name(imported.session.template, name)?;
    }
    // Notes name the body's model and keys: output::note escapes them.
    for note in &imported.notes {
        output::note(&format!("chatplate: {note}"));
    }
    if !imported.kept.is_empty() {
        output::note(&format!(
            "chatplate: kept (not part of the prompt): {}",
            imported.kept.join(", ")
        ));
    }
    let mut session = imported.session;
    if args.bless {
        ensure_cached(&session.template)?;
        let access = template_access(&out_dir, &[]);
        if let Ok(template) = chatplate_core::catalog::resolve_for(&session, &out_dir, &access) {
            session.record_template(&template.source);
        }
        session.expected = Some(
            match render_session(&session, &out_dir, &access, Limits::default()) {
                Ok(prompt) => Expected::Prompt(prompt),
                Err(err) => Expected::Error(err.summary),
            },
        );
    }
    match &args.out {
        Some(path) => {
            session.save(path)?;
            output::note(&format!("chatplate: wrote {}", path.display()));
        }
        None => output::print(&session.to_json())?,
    }
    Ok(0)
}

/// `--template` resolved to a reference from the output's folder; otherwise the body's
/// model is fetched into the cache if needed, so the import can refer to it.
fn chosen_template(args: &ImportArgs, body: &Json, out_dir: &Path) -> Result<Option<TemplateRef>> {
    let Some(target) = &args.template else {
        prefetch(body);
        return Ok(None);
    };
    let set = open_template(target)?;
    let has_tools = body.get("tools").is_some_and(|t| !t.is_null());
    let template = set.pin(args.template_name.as_deref()).choose(has_tools)?;
    let reference = template.reference(out_dir);
    warn_if_refused(&reference, out_dir);
    Ok(Some(reference))
}

/// A template path that reading the fixture would refuse (the rule `check` and the app
/// apply): says so, and what to allow.
fn warn_if_refused(reference: &TemplateRef, out_dir: &Path) {
    let (TemplateRef::Path(path) | TemplateRef::Named { path, .. }) = reference else {
        return;
    };
    let full = out_dir.join(path);
    if !template_access(out_dir, &[]).allows(&full) {
        let folder = chatplate_core::catalog::folder_to_allow(&full);
        output::note(&format!(
            "chatplate: note: the template is outside {}: `check` and `render` will refuse \
             it unless {} is allowed (--template-root, or the config file's \"template_roots\")",
            out_dir.display(),
            folder.display()
        ));
    }
}

fn prefetch(body: &Json) {
    if body.get("chat_template").is_some() {
        return;
    }
    let model = body.get("model").and_then(Json::as_str).unwrap_or_default();
    if let Some(id) = ModelId::parse(model) {
        let reference = TemplateRef::Model {
            id: id.repo.clone(),
            revision: id.revision.clone(),
            snapshot: None,
            name: None,
        };
        if let Err(err) = ensure_cached(&reference) {
            output::note(&format!("chatplate: {err:#}"));
        }
    }
}

/// The same reference with a named template pinned.
fn with_name(reference: TemplateRef, name: &str) -> Result<TemplateRef> {
    let name = name.to_string();
    Ok(match reference {
        TemplateRef::Path(path) | TemplateRef::Named { path, .. } => {
            TemplateRef::Named { path, name }
        }
        TemplateRef::Model {
            id,
            revision,
            snapshot,
            ..
        } => TemplateRef::Model {
            id,
            revision,
            snapshot,
            name: Some(name),
        },
        TemplateRef::Bundled(_) | TemplateRef::Source(_) => {
            bail!("--template-name {name:?}: the template is not a model with named templates")
        }
    })
}
