//! Drawing the prompt pane: the styled prompt (visible window only), the render error
//! in place of the prompt, or the diff against the expected prompt.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use std::ops::Range;

use chatplate_core::session::Session;
use chatplate_core::tokens::Tokenized;
use chatplate_render::RenderError;

use crate::tui::panes::messages::view::pane_block;
use crate::tui::panes::prompt::highlight::prompt_line;
use crate::tui::panes::prompt::highlight::Marks;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::preview::Preview;
use crate::tui::theme::Theme;

/// What the prompt pane draws.
#[derive(Debug)]
pub struct PromptView<'a> {
    /// The pane's state.
    pub pane: &'a PromptPane,
    /// The shown render (or error).
    pub preview: &'a Preview,
    /// The session: its special tokens are marked, its expected outcome diffed.
    pub session: &'a Session,
    /// The session's template could not be loaded: what to call that ("template not
    /// found", "template not allowed").
    pub missing_template: Option<&'a str>,
    /// The session changed since this render.
    pub stale: bool,
    /// Where the view follows (the selected message).
    pub anchor: Option<usize>,
    /// The bytes the selected message produced.
    pub selected: Vec<Range<usize>>,
    /// What the cursor covers (while the pane has the focus).
    pub cursor: Option<Range<usize>>,
    /// Token mode is on.
    pub token_mode: bool,
    /// The tokens of the shown prompt, once they arrived.
    pub tokens: Option<&'a Tokenized>,
    /// The bytes the assistant mask trains on: trained tokens in token mode, the
    /// `{% generation %}` blocks in character mode.
    pub trained: &'a [Range<usize>],
    /// The title's notes on attribution and tokens.
    pub notes: String,
    /// The colours.
    pub theme: Theme,
}

/// Draws the pane into `area` (borders included).
pub fn draw(frame: &mut Frame, area: Rect, view: &PromptView, focused: bool) {
    let (pane, theme) = (view.pane, view.theme);
    let block = pane_block(&title(view), focused, theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let lines = match (&view.preview.output, pane.diff) {
        (_, true) => crate::tui::panes::prompt::wrap::wrap(
            crate::tui::panes::prompt::diff::view(
                pane,
                view.session.expected.as_ref(),
                view.preview,
                theme,
                usize::from(inner.height),
            )
            .into_iter()
            .enumerate()
            .collect(),
            &crate::tui::panes::prompt::wrap::WrapOptions {
                width: usize::from(inner.width),
                height: usize::from(inner.height),
                numbers: None,
                whitespace: false,
                theme,
            },
        ),
        (Err(err), false) => error_lines(view, err, usize::from(inner.width)),
        (Ok(_), false) => crate::tui::panes::prompt::wrap::wrap(
            prompt_lines(view, inner.width, inner.height),
            &crate::tui::panes::prompt::wrap::WrapOptions {
                width: usize::from(inner.width),
                height: usize::from(inner.height),
                numbers: pane.numbers.then(|| view.preview.line_count()),
                whitespace: pane.whitespace,
                theme,
            },
        ),
    };
    let search_height = u16::from(pane.search.is_some());
    let [body, search_bar] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(search_height)]).areas(inner);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
    if let Some(search) = &pane.search {
        let at = if search.matches.is_empty() {
            0
        } else {
            search.current + 1
        };
        let text = format!("/{}  {at}/{}", search.term, search.matches.len());
        frame.render_widget(Paragraph::new(Line::styled(text, theme.dim())), search_bar);
    }
}

fn title(view: &PromptView) -> String {
    let mut title = String::from("Prompt");
    // The notes (attribution state, token warnings and totals) come first: they are
    // what a narrow pane must not cut; the modes and the line count can go.
    if !view.stale && view.preview.error().is_none() {
        title.push_str(&view.notes);
    }
    if view.pane.whitespace {
        title.push_str(" [ws]");
    }
    if view.pane.diff {
        title.push_str(" [diff]");
    }
    match &view.preview.output {
        // Token mode's note (total, token under the cursor) takes the line count's room.
        Ok(_) if view.token_mode => {}
        Ok(_) => {
            let count = view.preview.line_count();
            let noun = if count == 1 { "line" } else { "lines" };
            title.push_str(&format!(" {count} {noun}"));
        }
        Err(err) => title.push_str(&format!(" ✗ {}", error_label(view, err))),
    }
    if view.stale {
        // The text changed since this render; the new one is on its way.
        title.push_str(" · stale");
    }
    title
}

/// The visible prompt lines, styled. A line longer than the pane can show when wrapped
/// is cut there, so a multi-megabyte single-line prompt costs no more than a short one.
fn prompt_lines(view: &PromptView, width: u16, height: u16) -> Vec<(usize, Line<'static>)> {
    let visible_chars = usize::from(width) * usize::from(height);
    let height = usize::from(height);
    let preview = view.preview;
    let top = view.pane.top_line(preview, view.anchor, height);
    let session = view.session;
    let specials: Vec<String> = [&session.bos_token, &session.eos_token]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let matches = (view.pane.search.as_ref()).map_or(&[][..], |s| s.matches.as_slice());
    let marks = Marks {
        specials: &specials,
        selected: &view.selected,
        cursor: view.cursor.clone(),
        matches,
        whitespace: view.pane.whitespace,
        theme: view.theme,
        tokens: view.tokens,
        trained: view.trained,
    };
    let text = preview.text();
    (top..preview.line_count().min(top + height))
        .map(|index| {
            let start = preview.line_starts[index];
            let line = preview.line(index);
            let newline = text.as_bytes().get(start + line.len()) == Some(&b'\n');
            let shown = line
                .char_indices()
                .nth(visible_chars)
                .map_or(line, |(cut, _)| &line[..cut]);
            let styled = prompt_line(shown, start, newline && shown.len() == line.len(), &marks);
            (index, styled)
        })
        .collect()
}

/// The error in place of the prompt: kind, position, message and the source excerpt,
/// laid out for the pane's `width` (tabs expanded, long rows wrapped by the excerpt
/// itself, so its caret stays under the error's character).
fn error_lines(view: &PromptView, err: &RenderError, width: usize) -> Vec<Line<'static>> {
    let theme = view.theme;
    let mut lines = vec![Line::styled(
        format!("✗ {}", error_label(view, err)),
        theme.error(),
    )];
    if let Some(pos) = err.position {
        lines.push(Line::raw(format!(
            "at line {}, column {}",
            pos.line, pos.column
        )));
    }
    lines.extend(
        err.traceback_line()
            .lines()
            .map(|l| Line::raw(l.to_string())),
    );
    let source = &view.preview.source;
    if let Some(excerpt) = chatplate_core::rendering::error_excerpt_in(err, source, width) {
        lines.push(Line::raw(""));
        // The error's row, its wrapped continuations and the caret are the error's.
        let mut in_error = false;
        lines.extend(excerpt.lines().map(|l| {
            let caret = l.trim_start() == "^";
            let continues = l.trim_start().starts_with("| ");
            in_error = l.starts_with('>') || (in_error && continues);
            let style = if in_error || caret {
                theme.error()
            } else {
                theme.dim()
            };
            Line::styled(l.to_string(), style)
        }));
    }
    lines
}

/// What kind of failure the pane shows.
fn error_label<'a>(view: &PromptView<'a>, err: &RenderError) -> &'a str {
    view.missing_template.unwrap_or(err.kind.label())
}
