//! `chatplate --new [TEMPLATE]`: the app on an empty, untitled session on a template
//! (any template target: a bundled name, a `.jinja`, a model folder or id, a `.gguf`;
//! the default template without one), for writing a fixture from scratch. Saving asks
//! for its name.

use std::path::PathBuf;

use anyhow::bail;

use chatplate_core::catalog;

use crate::tui::files::startup;

use crate::tui::files::startup::Opened;
use crate::tui::TuiOptions;

/// Opens `options.file` as a template and empties the session the app starts with:
/// no messages, no tools (the settings keep their defaults).
pub fn open_new(options: &TuiOptions) -> anyhow::Result<Opened> {
    let template = match &options.file {
        Some(target) => target.clone(),
        None => PathBuf::from(catalog::default_template().name),
    };
    let options = TuiOptions {
        file: Some(template.clone()),
        ..options.clone()
    };
    // The new session has no tools: a model's `default` template, not its `tool_use`.
    let mut opened = startup::open_for(&options, false)?;
    if opened.workspace.path.is_some() {
        bail!(
            "{}: a session; --new starts an empty session on a template (open a session \
             without --new)",
            template.display()
        );
    }
    let session = &mut opened.workspace.session;
    session.messages.clear();
    session.tools = None;
    session.expected = None;
    opened.workspace.dirty = false;
    Ok(opened)
}
