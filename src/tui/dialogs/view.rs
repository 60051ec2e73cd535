//! Drawing dialogs: a centred box cleared over the panes. The help text comes from the
//! keymap table.

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::tui::dialogs::Confirm;

use crate::tui::dialogs::InputDialog;

use crate::tui::dialogs::InputKind;

use crate::tui::dialogs::Overlay;

use crate::tui::dialogs::Picker;
use crate::tui::files::disk::Outsider;
use crate::tui::files::recovery::Found;
use crate::tui::theme::Theme;

/// Draws `overlay`, the open dialog; `name` is the session's (questions name it).
pub fn draw(frame: &mut Frame, overlay: &Overlay, name: &str, theme: Theme) {
    let area = frame.area();
    overlay.draw(frame, area, name, theme);
}

/// A box of at most `width` x `height`, centred in `area`, cleared and bordered; returns
/// the inside.
pub(in crate::tui) fn dialog_box(
    frame: &mut Frame,
    area: Rect,
    width: u16,
    height: u16,
    title: &str,
    theme: Theme,
) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focused())
        .title(Span::styled(format!(" {title} "), theme.focused()));
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    inner
}

/// Draws a question.
pub(in crate::tui) fn draw_confirm(
    frame: &mut Frame,
    area: Rect,
    question: &Confirm,
    name: &str,
    theme: Theme,
) {
    match question {
        Confirm::Restore(found) => return draw_restore(frame, area, found, name, theme),
        Confirm::TemplateOutside(outsider) => {
            return draw_outside(frame, area, outsider, theme);
        }
        _ => {}
    }
    let (title, text, choices) = match question {
        Confirm::Quit => (
            "Unsaved changes",
            format!("{name} has unsaved changes."),
            "y save and quit · n quit without saving · Esc stay",
        ),
        Confirm::Restore(_) | Confirm::TemplateOutside(_) => return,
        Confirm::Changed => (
            "Changed on disk",
            format!("Another program changed {name} since it was opened or saved."),
            "o overwrite it · r reload it (drops your changes) · a save as · Esc cancel",
        ),
        Confirm::SaveExpected => (
            "Expected prompt set",
            format!("The current render is now the expected outcome of {name}. Save it?"),
            "y save · n or Esc not now (Ctrl+S saves later)",
        ),
        Confirm::NewDiscard => (
            "Unsaved changes",
            format!("{name} has unsaved changes. Start a new session?"),
            "y save and start new · d discard and start new · Esc stay",
        ),
        Confirm::OpenDiscard(path) => (
            "Unsaved changes",
            format!("{name} has unsaved changes. Open {}?", path.display()),
            "y save and open · d discard and open · Esc stay",
        ),
    };
    let inner = dialog_box(frame, area, 60, 7, title, theme);
    let lines = vec![
        Line::raw(text),
        Line::raw(""),
        Line::styled(choices, theme.key()),
    ];
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
}

/// The template question: where the template is, and the two ways to save.
fn draw_outside(frame: &mut Frame, area: Rect, outsider: &Outsider, theme: Theme) {
    let folder = |path: &std::path::Path| {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        dir.unwrap_or(std::path::Path::new("."))
            .display()
            .to_string()
    };
    let config = crate::template_roots::config_path().map_or_else(
        || "the config file".into(),
        |path| path.display().to_string(),
    );
    let lines = vec![
        Line::raw(format!(
            "The template {} is outside {}/. A session may name a template file only inside \
             its folder or an allowed template root: `chatplate check` and opening the \
             session again would refuse this one.",
            outsider.template.display(),
            folder(&outsider.target),
        )),
        Line::raw(""),
        Line::styled(
            format!(
                "y allow {} as a template root (in {config}) and save",
                outsider.folder.display()
            ),
            theme.key(),
        ),
        Line::styled(
            "n save the template's text in the session instead (it stops following the file)",
            theme.key(),
        ),
        Line::styled("Esc do not save", theme.key()),
    ];
    draw_sized(
        frame,
        area,
        lines,
        "Template outside the session's folder",
        theme,
    );
}

/// `lines` in a box as tall as they wrap to.
fn draw_sized(frame: &mut Frame, area: Rect, lines: Vec<Line>, title: &str, theme: Theme) {
    let text = Paragraph::new(lines).wrap(Wrap { trim: true });
    let wrapped = text.line_count(RESTORE_WIDTH.min(area.width).saturating_sub(2));
    let height = u16::try_from(wrapped).unwrap_or(u16::MAX).saturating_add(2);
    let inner = dialog_box(frame, area, RESTORE_WIDTH, height, title, theme);
    frame.render_widget(text, inner);
}

/// The restore dialog's width, borders included.
const RESTORE_WIDTH: u16 = 64;

/// The restore question: what the recovery file holds and when it was written.
fn draw_restore(frame: &mut Frame, area: Rect, found: &Found, name: &str, theme: Theme) {
    let when = found
        .saved
        .as_deref()
        .map_or(String::new(), |time| format!(" at {time}"));
    let mut lines = vec![
        Line::raw(format!(
            "Unsaved changes to {name} were kept{when} in {}.",
            found.path.display()
        )),
        match &found.contents {
            Ok((count, template)) => Line::raw(format!("It holds {count} messages on {template}.")),
            Err(err) => Line::styled(format!("It cannot be read: {err}"), theme.error()),
        },
    ];
    if found.others > 0 {
        lines.push(Line::raw(format!(
            "({} older one(s) after this.)",
            found.others
        )));
    }
    lines.extend(crate::tui::dialogs::recovery_diff::lines(
        &found.diff,
        theme,
    ));
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "y restore · n discard · Esc decide later (kept)",
        theme.key(),
    ));
    // Sized to the wrapped text: a long template path wrapped over several rows used to
    // push the y / n / Esc line out of the box.
    draw_sized(frame, area, lines, "Recovery file found", theme);
}

/// Draws a text input (the opener with its matches).
pub(in crate::tui) fn draw_input(frame: &mut Frame, area: Rect, input: &InputDialog, theme: Theme) {
    let title = match input.kind {
        InputKind::SavePath { .. } => "Save session as",
        InputKind::Role => "Role",
        InputKind::Search => "Search the prompt",
        InputKind::Open => "Open: a session, template, model folder, model id or .gguf",
        InputKind::GoTo => "Go to message number",
        InputKind::FindMessage => "Find a message (role, content, tool names)",
        InputKind::Tool => "Add a tool: NAME PARAM description, or FILE.json",
        InputKind::CompareWith => {
            "Compare with: a template source, @REVISION or http://llama-server"
        }
    };
    let title = match input.matches {
        Some(0) => format!("{title} · no match"),
        Some(1) => format!("{title} · 1 match"),
        Some(n) => format!("{title} · {n} matches"),
        None => title.to_string(),
    };
    let opener = input.kind == InputKind::Open;
    let choices = if opener {
        input.choices.len().max(1) + 1
    } else {
        0
    };
    let height = 4 + u16::try_from(choices).unwrap_or(0);
    let inner = dialog_box(
        frame,
        area,
        if opener { 76 } else { 60 },
        height,
        &title,
        theme,
    );
    let mut lines = vec![Line::from(vec![
        Span::raw(input.text.clone()),
        Span::styled("▏", theme.key()),
    ])];
    if opener {
        lines.extend(opener_lines(input, usize::from(inner.width), theme));
    }
    lines.push(Line::styled(
        match opener {
            true => "↑↓ pick · Tab complete · Enter open · Esc cancel",
            false => "Enter accept · Esc cancel",
        },
        theme.dim(),
    ));
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The opener's matches under its text, the selected one marked (what Enter opens).
fn opener_lines(input: &InputDialog, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = (input.choices.iter().enumerate())
        .map(|(i, choice)| {
            let line = Line::raw(tail(choice, width));
            match i == input.origin {
                true => line.patch_style(theme.cursor()),
                false => line,
            }
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled(
            "no match: Enter opens what you typed",
            theme.dim(),
        ));
    }
    lines.push(Line::raw(""));
    lines
}

/// Draws the session picker.
pub(in crate::tui) fn draw_picker(frame: &mut Frame, area: Rect, picker: &Picker, theme: Theme) {
    // Sized to the whole list (plus the filter line), so filtering does not resize it.
    let height = (picker.entries.len() as u16)
        .saturating_add(3)
        .min(area.height);
    // As wide as the longest path (at least 60 columns), so names are shown in full.
    let longest = picker
        .entries
        .iter()
        .map(|path| picker.name(path).chars().count())
        .max()
        .unwrap_or(0);
    let width = u16::try_from(longest + 2).unwrap_or(u16::MAX).max(60);
    let shown = picker.shown();
    let title = format!(
        "Open session · {} of {} · Enter open · Esc close",
        shown.len(),
        picker.entries.len()
    );
    let inner = dialog_box(frame, area, width, height, &title, theme);
    let filter = Line::from(vec![
        Span::styled("filter: ", theme.dim()),
        Span::raw(picker.filter.clone()),
        Span::styled("▏", theme.key()),
    ]);
    let rows = usize::from(inner.height.saturating_sub(1));
    let start = crate::tui::panes::messages::view::window_start(picker.cursor, shown.len(), rows);
    let mut lines = vec![filter];
    lines.extend(
        shown
            .iter()
            .enumerate()
            .skip(start)
            .take(rows)
            .map(|(i, path)| {
                let line = Line::raw(tail(&picker.name(path), usize::from(inner.width)));
                if i == picker.cursor {
                    line.patch_style(theme.cursor())
                } else {
                    line
                }
            }),
    );
    if shown.is_empty() {
        lines.push(Line::styled("no session path contains that", theme.dim()));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// `text` cut from the left to `width` characters: a path keeps its file name.
fn tail(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width || width == 0 {
        return text.to_string();
    }
    let kept: String = text.chars().skip(count - width + 1).collect();
    format!("…{kept}")
}

#[cfg(test)]
mod tests {
    use super::tail;

    #[test]
    fn a_path_too_long_keeps_its_file_name() {
        assert_eq!(tail("sessions/a/very/long/name.json", 12), "…g/name.json");
        assert_eq!(tail("short.json", 12), "short.json");
    }
}
