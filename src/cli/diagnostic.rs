//! How the CLI reports a template error: `FILE:LINE:COL: kind: message`, as compilers
//! do (editors and terminals jump to it), then the excerpt with its caret.

use std::path::Path;

use chatplate_core::catalog::{Origin, TemplateSource};
use chatplate_core::check::error_excerpt;
use chatplate_render::visible;
use chatplate_render::RenderError;

/// `err` of `template`, with the template's place first when the error has a position.
pub(super) fn template_error(err: &RenderError, template: &TemplateSource) -> String {
    located_error(err, "", &place(template), &template.source)
}

/// `err` of the template `source` found at `place` (see [`place`]), its message after
/// `lead` (which says what failed, when the error alone does not).
pub(super) fn located_error(err: &RenderError, lead: &str, place: &str, source: &str) -> String {
    let mut text = format!("{lead}{}: {}", err.kind.label(), err.traceback_line());
    if let Some(pos) = err.position {
        text = format!("{place}:{}:{}: {text}", pos.line, pos.column);
    }
    match error_excerpt(err, source) {
        Some(excerpt) => format!("{text}\n{excerpt}"),
        None => text,
    }
}

/// The file whose lines the position counts, or `<name>` when the template is not a
/// file of its own (bundled, inline, inside JSON or GGUF metadata).
pub(super) fn place(template: &TemplateSource) -> String {
    let file = match &template.origin {
        Origin::File(path) => Some(path.as_path()),
        Origin::Model(model) if is_jinja(&model.file) => Some(model.file.as_path()),
        _ => None,
    };
    match file {
        // A path resolved from a fixture in the working directory starts `./`.
        Some(path) => {
            let path = path.strip_prefix(".").unwrap_or(path);
            visible::for_terminal(&path.display().to_string()).into_owned()
        }
        None => format!("<{}>", visible::for_terminal(&template.name)),
    }
}

fn is_jinja(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "jinja")
}
