//! The interactive terminal app.
//!
//! Data flows one way: a key goes through the [`keymap`] table to an [`action::Action`],
//! [`app::App::update`] applies it, a change asks the render worker ([`chatplate_core::worker`])
//! for a new prompt ([`rendering`]), its reply lands in the [`preview`] cache, and
//! [`ui::draw`] paints the state. Views never call the engine and the UI thread never
//! waits for it. `update` does no file I/O either: saving, opening and the recovery file
//! are [`disk`] jobs the event loop does between updates ([`driver`]).

pub mod action;
pub mod app;
pub mod attribution;
mod attribution_view;
mod background;
pub mod badges;
pub mod burst;
pub mod clipboard;
mod compare_source;
mod compare_view;
pub mod comparison;
pub mod config;
pub mod conversation;
mod counterpart;
pub mod dialog;
mod dialog_view;
mod diff_view;
pub mod disk;
pub mod driver;
pub mod editor;
mod event_loop;
mod events;
pub mod field_write;
pub mod fields;
mod files;
mod footer;
pub mod generation_marks;
pub mod help;
mod help_dialog;
pub mod highlight;
pub mod history;
pub mod ignored;
mod incremental;
pub mod info_view;
mod injection_view;
mod input_wait;
pub mod keymap;
pub mod messages_pane;
mod messages_view;
pub mod mouse;
mod mouse_select;
pub mod needs;
pub mod new_session;
pub mod open_dialog;
pub mod opener;
pub mod pane;
pub mod paste_dialog;
mod paste_view;
mod picker_filter;
pub mod preview;
mod prompt_click;
pub mod prompt_cursor;
pub mod prompt_pane;
mod prompt_view;
mod prompt_wrap;
pub mod recovery;
pub mod recovery_diff;
pub mod rendering;
pub mod round_trip_badges;
pub mod screen;
pub mod sgr;
pub mod startup;
pub mod template_origin;
mod template_preview;
pub mod template_source;
pub mod templates_pane;
mod templates_view;
mod terminal;
pub mod theme;
pub mod token_mode;
pub mod tool_skeleton;
pub mod ui;
pub mod workbench;
pub mod workspace;

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
    run_opened(startup::open(&options)?)
}

/// Runs the app on an empty, untitled session on the template `options.file` names
/// (the default template without one): `chatplate --new [TEMPLATE]`.
pub fn run_new(options: TuiOptions) -> anyhow::Result<i32> {
    run_opened(new_session::open_new(&options)?)
}

fn run_opened(opened: startup::Opened) -> anyhow::Result<i32> {
    let worker = chatplate_core::worker::Worker::spawn(preview::app_limits().deadline)?;
    let mut app = app::App::with_worker(opened.workspace, opened.catalog, worker);
    // The config file is read on this thread, which handles keys and draws: the key
    // table is per thread (see `keymap::install`).
    let config = config::load();
    keymap::install(config.bindings);
    mouse::set_enabled(config.mouse);
    app.set_theme(theme::Theme {
        palette: config.palette,
        ..theme::Theme::from_env()
    });
    app.scan_cache();
    let mut notices = config.problems;
    notices.extend(opened.notice);
    if !notices.is_empty() {
        app.warn(notices.join("; "));
    }
    terminal::run(app)
}
