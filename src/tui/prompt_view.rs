//! Drawing the prompt pane: the styled prompt (visible window only), the render error
//! in place of the prompt, or the diff against the expected prompt.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use chatplate_render::RenderError;

use super::app::App;
use super::highlight::{prompt_line, Marks};
use super::messages_view::pane_block;

/// Draws the pane into `area` (borders included).
pub fn draw(frame: &mut Frame, area: Rect, app: &App, focused: bool) {
    let block = pane_block(&title(app), focused, app.theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let lines = match (&app.preview.output, app.prompt.diff) {
        (_, true) => super::prompt_wrap::wrap(
            super::diff_view::view(app, usize::from(inner.height))
                .into_iter()
                .enumerate()
                .collect(),
            &super::prompt_wrap::WrapOptions {
                width: usize::from(inner.width),
                height: usize::from(inner.height),
                numbers: None,
                whitespace: false,
                theme: app.theme,
            },
        ),
        (Err(err), false) => error_lines(app, err),
        (Ok(_), false) => super::prompt_wrap::wrap(
            prompt_lines(app, inner.width, inner.height),
            &super::prompt_wrap::WrapOptions {
                width: usize::from(inner.width),
                height: usize::from(inner.height),
                numbers: app.workbench.numbers.then(|| app.preview.line_count()),
                whitespace: app.prompt.whitespace,
                theme: app.theme,
            },
        ),
    };
    let [body, search_bar] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(search_height(app))]).areas(inner);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
    if let Some(search) = &app.prompt.search {
        let at = if search.matches.is_empty() {
            0
        } else {
            search.current + 1
        };
        let text = format!("/{}  {at}/{}", search.term, search.matches.len());
        frame.render_widget(
            Paragraph::new(Line::styled(text, app.theme.dim())),
            search_bar,
        );
    }
}

fn search_height(app: &App) -> u16 {
    u16::from(app.prompt.search.is_some())
}

fn title(app: &App) -> String {
    let mut title = String::from("Prompt");
    if app.prompt.whitespace {
        title.push_str(" [ws]");
    }
    if app.prompt.diff {
        title.push_str(" [diff]");
    }
    match &app.preview.output {
        // Token mode's note (total, token under the cursor) takes the line count's room.
        Ok(_) if app.token_mode.enabled => {}
        Ok(_) => {
            let count = app.preview.line_count();
            let noun = if count == 1 { "line" } else { "lines" };
            title.push_str(&format!(" {count} {noun}"));
        }
        Err(err) => title.push_str(&format!(" ✗ {}", error_label(app, err))),
    }
    if app.is_stale() {
        // The text changed since this render; the new one is on its way.
        title.push_str(" · stale");
    } else if app.preview.error().is_none() {
        title.push_str(super::attribution_view::title_note(app));
        title.push_str(&app.token_note());
    }
    title
}

/// The visible prompt lines, styled. A line longer than the pane can show when wrapped
/// is cut there, so a multi-megabyte single-line prompt costs no more than a short one.
fn prompt_lines(app: &App, width: u16, height: u16) -> Vec<(usize, Line<'static>)> {
    let visible_chars = usize::from(width) * usize::from(height);
    let height = usize::from(height);
    let preview = &app.preview;
    let top = app.prompt.top_line(preview, app.prompt_anchor(), height);
    let session = &app.workspace.session;
    let specials: Vec<String> = [&session.bos_token, &session.eos_token]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let matches = app
        .prompt
        .search
        .as_ref()
        .map_or(&[][..], |s| s.matches.as_slice());
    let selected = app.selected_ranges();
    let marks = Marks {
        specials: &specials,
        selected: &selected,
        cursor: app.cursor_range(),
        matches,
        whitespace: app.prompt.whitespace,
        theme: app.theme,
        tokens: app.shown_tokens().map(|t| &t.tokenized),
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

/// The error in place of the prompt: kind, position, message and the source excerpt.
fn error_lines(app: &App, err: &RenderError) -> Vec<Line<'static>> {
    let theme = app.theme;
    let mut lines = vec![Line::styled(
        format!("✗ {}", error_label(app, err)),
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
    if let Some(excerpt) = err.excerpt(&app.preview.source, 2) {
        lines.push(Line::raw(""));
        lines.extend(excerpt.lines().map(|l| {
            let style = if l.starts_with('>') || l.trim_start() == "^" {
                theme.error()
            } else {
                theme.dim()
            };
            Line::styled(l.replace('\t', "    "), style)
        }));
    }
    lines
}

/// What kind of failure the pane shows.
fn error_label(app: &App, err: &RenderError) -> &'static str {
    if app.workspace.missing_template.is_some() {
        "template not found"
    } else {
        err.kind.label()
    }
}
