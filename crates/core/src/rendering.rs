//! A session rendered with its template, as `check`, the training view and the engines'
//! comparisons all do it: templates compiled once per process ([`compiled`]), and
//! [`RenderFailure`], a failed render with the text it is described with.
//!
//! It sits below `check` and `training`, so both use it without importing each other.

pub(crate) mod compiled;
pub(crate) mod excerpt;

use std::path::Path;

use chatplate_render::{ConversationInput, Limits, RenderControl, RenderError};

use crate::catalog::{self, TemplateAccess, TemplateSource};
use crate::session::Session;

/// Why a fixture did not render: its error, and the text it is described with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderFailure {
    /// The full description: the error, then a source excerpt.
    pub description: String,
    /// The stable form stored by `--bless` and the app's `E`: kind and message,
    /// without position (so blessed fixtures survive a template's lines moving).
    pub summary: String,
    /// The Python exception, `Class: message`, when the render raised one.
    pub exception: Option<String>,
}

impl RenderFailure {
    /// A failure before the render: the session or its template did not load.
    pub(crate) fn load(message: String) -> Self {
        let summary = first_line(&message).to_string();
        RenderFailure {
            description: message,
            summary,
            exception: None,
        }
    }

    /// A failed render of `source`.
    pub(crate) fn render(err: &RenderError, source: &str) -> Self {
        RenderFailure {
            description: describe_error(err, source),
            summary: err.summary(),
            exception: err.exception_line(),
        }
    }
}

/// Renders a session with its template, resolving relative paths from `session_dir`
/// within what `access` allows.
pub fn render_session(
    session: &Session,
    session_dir: &Path,
    access: &TemplateAccess,
    limits: Limits,
) -> Result<String, RenderFailure> {
    let template = catalog::resolve_for(session, session_dir, access)
        .map_err(|e| RenderFailure::load(e.to_string()))?;
    render_with(session, &template, limits)
}

/// Renders a session with an already resolved template (its special tokens included).
/// The session's messages are rendered where they are, not copied.
pub fn render_with(
    session: &Session,
    template: &TemplateSource,
    limits: Limits,
) -> Result<String, RenderFailure> {
    let mut settings = session
        .settings()
        .map_err(|e| RenderFailure::load(e.to_string()))?;
    catalog::add_token_variables(&mut settings, template);
    let input = ConversationInput::Parts {
        settings: &settings,
        messages: session.message_objects(),
    };
    let control = RenderControl::default().with_deadline(limits.deadline);
    compiled::shared(&template.source, limits)
        .and_then(|compiled| compiled.render_controlled(input, &control))
        .map_err(|err| RenderFailure::render(&err, &template.source))
}

/// An error message with its template excerpt, as the CLI prints it. `source` is the
/// template as the user wrote it.
pub(crate) fn describe_error(err: &RenderError, source: &str) -> String {
    match error_excerpt(err, source) {
        Some(excerpt) => format!("{err}\n{excerpt}"),
        None => err.to_string(),
    }
}

/// The template lines around the error, laid out for an 80-column terminal (see
/// [`excerpt::fit`]), when the error has a position.
pub fn error_excerpt(err: &RenderError, source: &str) -> Option<String> {
    error_excerpt_in(err, source, excerpt::EXCERPT_COLUMNS)
}

/// [`error_excerpt`] laid out for `columns` columns (the app's prompt pane).
pub fn error_excerpt_in(err: &RenderError, source: &str, columns: usize) -> Option<String> {
    let excerpt = err.excerpt(source, 2)?;
    Some(excerpt::fit(&excerpt, columns))
}

/// The first line of `text` (empty for empty text).
pub(crate) fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
