//! The interactive terminal app.
//!
//! Data flows one way: a key goes through the [`keymap`] table to an [`action::Action`],
//! [`app::App::update`] applies it, a change asks the render worker ([`chatplate_core::worker`])
//! for a new prompt ([`app::rendering`]), its reply lands in the [`app::preview`] cache, and
//! [`ui::draw`] paints the state. Views never call the engine and the UI thread never
//! waits for it. `update` does no file I/O either: saving, opening and the recovery file
//! are [`files::disk`] jobs the event loop does between updates ([`app::driver`]).

pub mod action;
pub mod app;
pub mod compare;
pub mod config;
pub mod context;
pub mod dialogs;
pub mod files;
pub mod footer;
pub mod jobs;
pub mod keymap;
pub mod layout;
pub mod matcher;
pub mod panes;
pub mod preview;
pub mod screen;
pub mod terminal;
pub mod theme;
pub mod ui;
pub mod workbench;

use std::path::PathBuf;

/// What the app opens with.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    /// What to open: a session, a request body, a template, a model folder or any file
    /// in one, a `.gguf`, a model id (see [`chatplate_core::target::open`]).
    pub file: Option<PathBuf>,
    /// Extra template directories for the picker.
    pub template_dirs: Vec<PathBuf>,
    /// The named template to use when the target is a model with several.
    pub template_name: Option<String>,
}

/// Runs the app until the user quits or something ends it; returns the exit status
/// (0, or 129 / 130 / 131 / 143 after a hang-up or signal, 101 after a crash).
pub fn run(options: TuiOptions) -> anyhow::Result<i32> {
    run_opened(files::startup::open(&options)?)
}

/// Runs the app on an empty, untitled session on the template `options.file` names
/// (the default template without one): `chatplate --new [TEMPLATE]`.
pub fn run_new(options: TuiOptions) -> anyhow::Result<i32> {
    run_opened(files::new_session::open_new(&options)?)
}

fn run_opened(opened: files::startup::Opened) -> anyhow::Result<i32> {
    let worker = chatplate_core::worker::Worker::spawn(preview::app_limits().deadline)?;
    let mut app = app::App::with_worker(opened.workspace, opened.catalog, worker);
    // The config file is read on this thread, which handles keys and draws: the key
    // table is per thread (see `keymap::install`).
    let config = config::load();
    keymap::install(config.bindings);
    terminal::mouse::set_enabled(config.mouse);
    app.set_theme(theme::Theme {
        palette: config.palette,
        ..theme::Theme::from_env()
    });
    app.scan_cache();
    let (plugins, engine_problems) = jobs::matrix::configured_plugins();
    app.add_plugin_engines(plugins);
    let mut notices = config.problems;
    notices.extend(engine_problems);
    notices.extend(opened.notice);
    if !notices.is_empty() {
        app.warn(notices.join("; "));
    }
    terminal::run(app)
}
