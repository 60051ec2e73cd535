//! The interactive terminal app.
//!
//! Data flows one way: a key goes through the [`keymap`] table to an [`action::Action`],
//! [`app::App::update`] applies it and re-renders the cached prompt ([`preview`]), and
//! [`ui::draw`] paints the state. Views never call the engine.

pub mod action;
pub mod app;
pub mod clipboard;
pub mod conversation;
pub mod dialog;
mod dialog_view;
pub mod editor;
pub mod field_write;
pub mod fields;
pub mod highlight;
pub mod keymap;
pub mod messages_pane;
mod messages_view;
pub mod preview;
pub mod prompt_pane;
mod prompt_view;
pub mod startup;
pub mod templates_pane;
mod terminal;
pub mod theme;
pub mod ui;
pub mod workspace;

use std::path::PathBuf;

/// What the app opens with.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// What to open: a session, a request body, a template, a model folder or any file
    /// in one, a `.gguf`, a model id (see [`crate::target::open`]).
    pub file: Option<PathBuf>,
    /// Extra template directories for the picker.
    pub template_dirs: Vec<PathBuf>,
    /// The named template to use when the target is a model with several.
    pub template_name: Option<String>,
}

/// Runs the app until the user quits.
pub fn run(options: TuiOptions) -> anyhow::Result<()> {
    let opened = startup::open(&options)?;
    let mut app = app::App::new(opened.workspace, opened.catalog);
    app.theme = theme::Theme::from_env();
    if let Some(notice) = opened.notice {
        app.warn(notice);
    }
    terminal::run(app)
}
