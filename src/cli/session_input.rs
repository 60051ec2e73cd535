//! What the commands read: a fixture argument (a session file, or an OpenAI request
//! body read as one), a JSON input, a template argument. Each may be `-` for standard
//! input (see [`super::stdin`]), capped like the file it stands for and named `<stdin>`
//! in errors.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value as Json;

use super::fetching::with_hub;
use super::output;
use super::stdin;
use crate::template_roots;
use chatplate_core::catalog::{
    open_templates, Origin, TemplateAccess, TemplateSet, TemplateSource,
};
use chatplate_core::files::{self, MAX_SESSION_BYTES, MAX_TEMPLATE_BYTES};
use chatplate_core::request;
use chatplate_core::session::Session;
use chatplate_core::target;

/// How `path` is named in messages: `<stdin>` for `-`.
pub(super) fn shown(path: &Path) -> PathBuf {
    match stdin::is_stdin(path) {
        true => PathBuf::from(stdin::NAME),
        false => path.to_path_buf(),
    }
}

/// The folder a fixture's relative template paths start at: its own, or the working
/// directory (an empty path, so that paths read as written) for a fixture from
/// standard input.
pub(super) fn input_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !stdin::is_stdin(path) => dir.to_path_buf(),
        _ => PathBuf::new(),
    }
}

/// What a session read from `tree` may name as its template: inside `tree` or a root
/// the user allowed (`flags`, the `--template-root` folders, and the config file's; a
/// config file that cannot be read is reported and its roots left out).
pub(super) fn template_access(tree: &Path, flags: &[PathBuf]) -> TemplateAccess {
    template_roots::access(tree, &allowed_roots(flags))
}

/// The allowed template roots: `flags` and the config file's (see
/// [`template_access`]).
pub(super) fn allowed_roots(flags: &[PathBuf]) -> Vec<PathBuf> {
    let (roots, problem) = template_roots::allowed(flags);
    if let Some(problem) = problem {
        let problem = chatplate_render::visible::message(&problem);
        super::output::note(&format!(
            "chatplate: {problem} (its template roots are not used)"
        ));
    }
    roots
}

/// The text of a file argument (`-`: standard input), at most `limit` bytes.
pub(super) fn read_input(path: &Path, limit: u64) -> Result<String> {
    if stdin::is_stdin(path) {
        return stdin::read_text(limit);
    }
    Ok(files::read_text(path, limit)?)
}

/// The session in `path` (`-`: standard input); a request body is imported (its notes
/// on stderr). The input is read once.
pub(super) fn load_session(path: &Path) -> Result<Session> {
    let name = shown(path);
    let text = read_input(path, MAX_SESSION_BYTES)?;
    let body = match request::may_be_request(&text) {
        true => Some(request::parse_body(&text, &name)?).filter(request::looks_like_request),
        false => None,
    };
    let Some(body) = body else {
        return Ok(Session::parse(&text, &name)?);
    };
    drop(text);
    let imported = with_hub(|fetch| target::import_request(body, &name, fetch))?;
    for note in &imported.notes {
        output::note(&format!("chatplate: {}: {note}", name.display()));
    }
    Ok(imported.session)
}

/// A JSON file (`-`: standard input), with the position of a syntax error.
pub(super) fn read_json(path: &Path) -> Result<Json> {
    let name = shown(path);
    let text = read_input(path, MAX_SESSION_BYTES)
        .with_context(|| format!("reading {}", name.display()))?;
    serde_json::from_str(&text).map_err(|err| {
        // serde_json's message ends in " at line L column C": the position goes first.
        let full = err.to_string();
        let message = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(m, _)| m);
        anyhow::anyhow!(
            "{}:{}:{}: {message}",
            name.display(),
            err.line(),
            err.column()
        )
    })
}

/// The templates a template argument offers (see [`open_templates`]); `-` is a Jinja
/// template on standard input, named `<stdin>` in error positions.
pub(super) fn open_template(target: &str) -> Result<TemplateSet> {
    if !stdin::is_stdin(Path::new(target)) {
        return Ok(with_hub(|fetch| open_templates(target, fetch))?);
    }
    let source = stdin::read_text(MAX_TEMPLATE_BYTES)?;
    // Named "stdin": a template that is not a file of its own is placed as `<NAME>`.
    let template = TemplateSource::new("stdin", source, Origin::Inline);
    Ok(TemplateSet::single(template))
}
