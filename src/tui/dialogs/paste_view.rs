//! Drawing the paste dialog: the pasted output's last lines, then what the parser made
//! of it (the message's parts, the text it could not place, or its error).

use chatplate_core::worker::parsing::Pasted;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;
use serde_json::Value as Json;

use crate::tui::dialogs::paste::PasteDialog;

use crate::tui::dialogs::paste::PasteState;
use crate::tui::dialogs::view::dialog_box;
use crate::tui::theme::Theme;

/// The fewest lines of the pasted output shown above the outcome (more when the screen
/// has room).
const OUTPUT_LINES: usize = 6;

/// Draws the dialog in the middle of `area`.
pub(in crate::tui) fn draw(frame: &mut Frame, area: Rect, dialog: &PasteDialog, theme: Theme) {
    let height = area.height.saturating_sub(2).max(8);
    let title = "Paste a model's raw output";
    let inner = dialog_box(frame, area, 100, height, title, theme);
    let outcome = outcome_lines(&dialog.state, theme);
    // The output takes the room the outcome and the rule leave (its `… N lines above`
    // line included), at least OUTPUT_LINES.
    let width = usize::from(inner.width).max(1);
    let outcome_rows: usize = outcome.iter().map(|l| rows(l.width(), width)).sum();
    let room = usize::from(inner.height)
        .saturating_sub(outcome_rows + 2)
        .max(OUTPUT_LINES);
    let mut lines = output_lines(&dialog.text, room, width, theme);
    lines.push(Line::styled(
        "─".repeat(usize::from(inner.width)),
        theme.dim(),
    ));
    lines.extend(outcome);
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    frame.render_widget(paragraph, inner);
}

/// The screen rows a line `columns` wide takes, wrapped at `width`.
fn rows(columns: usize, width: usize) -> usize {
    columns.div_ceil(width).max(1)
}

/// The last lines of `text` that fit `room` rows wrapped at `width` (at least one).
fn output_lines(text: &str, room: usize, width: usize, theme: Theme) -> Vec<Line<'static>> {
    if text.is_empty() {
        let hint = "Paste the output (from a server log); Enter parses it, Esc cancels.";
        return vec![Line::styled(hint, theme.dim())];
    }
    let all: Vec<&str> = text.lines().collect();
    let mut used = 0;
    let kept = (all.iter().rev())
        .take_while(|line| {
            used += rows(unicode_width::UnicodeWidthStr::width(**line), width);
            used <= room
        })
        .count()
        .max(1);
    let skipped = all.len().saturating_sub(kept);
    let mut lines = Vec::new();
    if skipped > 0 {
        lines.push(Line::styled(
            format!("… {skipped} lines above"),
            theme.dim(),
        ));
    }
    lines.extend(
        all[skipped..]
            .iter()
            .map(|line| Line::raw(line.to_string())),
    );
    lines
}

fn outcome_lines(state: &PasteState, theme: Theme) -> Vec<Line<'static>> {
    match state {
        PasteState::Editing => vec![Line::styled("Enter parse · Esc cancel", theme.dim())],
        PasteState::Wanted | PasteState::Parsing(_) => vec![Line::styled("parsing…", theme.dim())],
        PasteState::Parsed(pasted) => parsed_lines(pasted, theme),
    }
}

fn parsed_lines(pasted: &Pasted, theme: Theme) -> Vec<Line<'static>> {
    let error = |text: String| Line::styled(text, theme.error());
    match pasted {
        Pasted::Message { message, unplaced } => {
            let mut lines = message_lines(message, theme);
            for text in unplaced {
                lines.push(error(format!("not placed: {text}")));
            }
            let verdict = match unplaced.is_empty() {
                true => "Enter add this message · Esc cancel",
                false => "the message lacks the text above · Enter add it anyway · Esc cancel",
            };
            lines.push(Line::styled(verdict, theme.key()));
            lines
        }
        Pasted::Failed(why) => vec![
            error(format!("does not parse: {why}")),
            Line::styled("edit the text, Enter to parse again · Esc cancel", theme.dim()),
        ],
        Pasted::NoSchema => vec![
            error("no response_template: the session has none and neither has its model's tokenizer_config.json".into()),
            Line::raw("Add \"response_template\" to the session (the object or a JSON file's path); see docs/parse.md."),
        ],
        Pasted::Unreadable(why) => vec![error(format!("response_template: {why}"))],
        _ => Vec::new(),
    }
}

/// One line per part of the message: reasoning, content, each tool call.
fn message_lines(message: &Json, theme: Theme) -> Vec<Line<'static>> {
    let label = |name: &str, text: String| {
        Line::from(vec![
            ratatui::text::Span::styled(format!("{name}: "), theme.key()),
            ratatui::text::Span::styled(text, Style::default()),
        ])
    };
    let mut lines = Vec::new();
    for key in ["reasoning_content", "content"] {
        if let Some(value) = message.get(key).filter(|v| !v.is_null()) {
            let text = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_string);
            lines.push(label(key, text));
        }
    }
    let calls = message.get("tool_calls").and_then(Json::as_array);
    for call in calls.into_iter().flatten() {
        let function = call.get("function").unwrap_or(call);
        let name = function.get("name").and_then(Json::as_str).unwrap_or("?");
        let arguments = function
            .get("arguments")
            .map(Json::to_string)
            .unwrap_or_default();
        lines.push(label("tool call", format!("{name}({arguments})")));
    }
    lines
}
