//! Drawing the messages pane: the list with role badges, the selected row's fields
//! and, while editing, the field editor. Only the visible rows are built.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use serde_json::Value as Json;

use chatplate_core::session::{Message, Session};
use chatplate_core::worker::tokenizing::TokenizedPrompt;

use crate::tui::jobs::attribution_view::bytes_column;
use crate::tui::panes::messages::editor;
use crate::tui::panes::messages::editor::FieldEditor;
use crate::tui::panes::messages::fields;
use crate::tui::panes::messages::fields::Field;
use crate::tui::panes::messages::fields::Row;
use crate::tui::panes::messages::range_view;
use crate::tui::panes::messages::MessagesPane;
use crate::tui::theme::Theme;

/// Width of the role badge column.
const BADGE: usize = 5;

/// What the messages pane draws. What the worker found per message or field is asked
/// for only for the rows on screen.
pub struct MessagesView<'a> {
    /// The pane's state.
    pub pane: &'a MessagesPane,
    /// The open field editor, if any.
    pub editor: Option<&'a FieldEditor>,
    /// The session.
    pub session: &'a Session,
    /// Bytes each message produced (exact attribution), once known.
    pub bytes: Option<Vec<Option<usize>>>,
    /// Tokens message `index` produced (token mode).
    pub tokens_of: &'a dyn Fn(usize) -> Option<usize>,
    /// Whether message `index`'s text becomes a special token (token mode).
    pub injected: &'a dyn Fn(usize) -> bool,
    /// Whether assistant message `index` parses back into itself (round-trip badge).
    pub round_trip: &'a dyn Fn(usize) -> Option<bool>,
    /// Why a field is marked "not used by this template", if it is.
    pub unused: &'a dyn Fn(Row, Field) -> Option<String>,
    /// The tokens of the shown prompt (the selected row's injection warning).
    pub tokens: Option<&'a TokenizedPrompt>,
    /// The turn-cost column's cell of message `index`, when the column is shown.
    pub turn_cost: &'a dyn Fn(usize) -> Option<String>,
    /// The turn-cost sum for the title; `Some` while the column is shown.
    pub turn_total: Option<String>,
    /// What to change in the selected message for the template (see `panes::messages::needs`).
    pub needs: Vec<String>,
    /// Plain notes on the selected message's fields (values not checked for use).
    pub notes: Vec<String>,
    /// The colours.
    pub theme: Theme,
}

/// Draws the pane into `area` (borders included).
pub fn draw(frame: &mut Frame, area: Rect, view: &MessagesView, focused: bool) {
    let theme = view.theme;
    let range = view.pane.block(view.session);
    let mut title = range_view::title(range.as_ref());
    if let Some(total) = &view.turn_total {
        title = format!("{title} · {total}");
    }
    let block = pane_block(&title, focused, theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let list_height = if view.editor.is_some() {
        inner.height / 3
    } else {
        inner.height / 2
    };
    let [list_area, detail_area] =
        Layout::vertical([Constraint::Length(list_height.max(3)), Constraint::Min(0)]).areas(inner);
    let list_focus = focused && view.editor.is_none() && !view.pane.in_fields;
    frame.render_widget(
        Paragraph::new(list_lines(view, list_area, list_focus)),
        list_area,
    );
    match view.editor {
        Some(field_editor) => {
            let note = (view.unused)(field_editor.row, field_editor.field);
            editor::draw(frame, detail_area, field_editor, note.as_deref(), theme)
        }
        None => match range {
            Some(range) => range_view::draw_keys(frame, detail_area, range.count(), theme),
            None => draw_fields(frame, detail_area, view, focused && view.pane.in_fields),
        },
    }
}

/// A bordered block with the pane title, highlighted when focused.
pub fn pane_block(title: &str, focused: bool, theme: Theme) -> Block<'static> {
    let style = if focused {
        theme.focused()
    } else {
        Style::new()
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(style)
        .title(Span::styled(format!(" {title} "), style))
}

/// The first visible index that keeps `selected` on screen, roughly centred.
pub fn window_start(selected: usize, count: usize, height: usize) -> usize {
    if count <= height {
        return 0;
    }
    selected.saturating_sub(height / 2).min(count - height)
}

fn list_lines(view: &MessagesView, area: Rect, focused: bool) -> Vec<Line<'static>> {
    let (session, theme) = (view.session, view.theme);
    let count = session.messages.len() + 1;
    let height = usize::from(area.height);
    let start = window_start(view.pane.selected, count, height);
    let width = usize::from(area.width);
    // Wide enough for the largest number, so rows stay aligned past 999 messages.
    let digits = session.messages.len().to_string().len().max(3);
    let block = view.pane.block(session);
    (start..count.min(start + height))
        .map(|row| {
            let selected = row == view.pane.selected;
            let in_block = block.as_ref().is_some_and(|b| b.contains(&row));
            let line = match session.messages.get(row) {
                Some(msg) => {
                    // The turn cost, while shown, takes the size column; token mode
                    // counts tokens (`12t`) where the list counts bytes.
                    let size = match (view.turn_total.is_some(), (view.tokens_of)(row)) {
                        (true, _) => (view.turn_cost)(row),
                        (false, Some(tokens)) => Some(format!("{tokens}t")),
                        (false, None) => bytes_column(view.bytes.as_deref(), row),
                    };
                    let line = message_line(row, digits, msg, width, size, theme);
                    let line = flag_injection(line, (view.injected)(row), theme);
                    let line = mark_round_trip(line, (view.round_trip)(row), theme);
                    range_view::mark_row(line, in_block, theme)
                }
                None => settings_line(session, width, theme),
            };
            match (selected, focused) {
                (true, true) => line.patch_style(theme.cursor()),
                (true, false) => {
                    line.patch_style(Style::new().add_modifier(ratatui::style::Modifier::BOLD))
                }
                _ => line,
            }
        })
        .collect()
}

fn message_line(
    index: usize,
    digits: usize,
    msg: &Message,
    width: usize,
    size: Option<String>,
    theme: Theme,
) -> Line<'static> {
    let role = msg.role();
    let badge: String = match role {
        "assistant" => "asst".into(),
        "system" => "sys".into(),
        other => other.chars().take(BADGE - 1).collect(),
    };
    let preview = preview_text(msg);
    // The byte column only where the text keeps room to be recognised.
    let fixed = digits + 1 + BADGE + 1;
    let size = size
        .filter(|_| width >= fixed + 6 + 14)
        .map(|s| format!(" {s:>5}"))
        .unwrap_or_default();
    let room = width.saturating_sub(digits + 1 + BADGE + 1 + size.chars().count());
    let text = truncate(&preview, room);
    let pad = room.saturating_sub(text.chars().count());
    Line::from(vec![
        Span::raw(format!("{:>digits$} ", index + 1)),
        Span::styled(format!("{badge:<BADGE$}"), theme.role(role)),
        Span::raw(" "),
        Span::raw(text),
        Span::styled(format!("{:pad$}{size}", ""), theme.dim()),
    ])
}

/// Puts the injection flag in the space after the role badge (span 3).
fn flag_injection(mut line: Line<'static>, injected: bool, theme: Theme) -> Line<'static> {
    if let Some(gap) = line.spans.get_mut(2).filter(|_| injected) {
        *gap = Span::styled(crate::tui::panes::prompt::injection::FLAG, theme.error());
    }
    line
}

/// Puts the round-trip badge after the role badge (span 3), where the injection flag
/// would go (a failed round trip wins: both are warnings).
fn mark_round_trip(mut line: Line<'static>, passed: Option<bool>, theme: Theme) -> Line<'static> {
    let (mark, style) = match passed {
        Some(true) => (crate::tui::jobs::round_trips::PASSED, theme.added()),
        Some(false) => (crate::tui::jobs::round_trips::FAILED, theme.error()),
        None => return line,
    };
    if let Some(gap) = line
        .spans
        .get_mut(2)
        .filter(|g| passed == Some(false) || g.content == " ")
    {
        *gap = Span::styled(mark, style);
    }
    line
}

/// A one-line gist of a message: content, else its tool calls.
fn preview_text(msg: &Message) -> String {
    let content = match msg.0.get("content") {
        Some(Json::String(text)) => fields::one_line(text),
        Some(Json::Array(parts)) => format!("[{} parts]", parts.len()),
        _ => String::new(),
    };
    let calls: Vec<String> = fields::tool_calls(msg)
        .iter()
        .map(|call| {
            let name = call
                .pointer("/function/name")
                .and_then(Json::as_str)
                .unwrap_or("?");
            format!("→{name}()")
        })
        .collect();
    let state = crate::tui::workbench::ContentState::of(msg);
    let content = match state.mark() {
        // A content that is not text says which of "", null or absent it is.
        Some(mark) if calls.is_empty() || state != crate::tui::workbench::ContentState::Empty => {
            mark.to_string()
        }
        _ => content,
    };
    match (content.is_empty(), calls.is_empty()) {
        (true, true) => "\"\"".into(),
        (true, false) => calls.join(" "),
        (false, true) => content,
        (false, false) => format!("{} {content}", calls.join(" ")),
    }
}

/// The settings row, shorter where the pane is narrow: the on/off state is what must
/// stay visible (at 80 columns the full row lost it).
fn settings_line(session: &Session, width: usize, theme: Theme) -> Line<'static> {
    let tools = session.tools.as_ref().map_or(0, Vec::len);
    let gen = if session.add_generation_prompt {
        "on"
    } else {
        "off"
    };
    let forms = [
        (
            "    ",
            "⚙ settings",
            format!(" tools {tools}, gen prompt {gen}"),
        ),
        ("  ", "⚙", format!(" tools {tools}, gen prompt {gen}")),
        ("", "⚙", format!(" tools {tools}, gen {gen}")),
    ];
    let lines = forms.map(|(indent, label, values)| {
        Line::from(vec![
            Span::raw(indent),
            Span::styled(label, theme.dim()),
            Span::raw(values),
        ])
    });
    let [full, middle, shortest] = lines;
    [full, middle]
        .into_iter()
        .find(|line| line.width() <= width)
        .unwrap_or(shortest)
}

fn draw_fields(frame: &mut Frame, area: Rect, view: &MessagesView, focused: bool) {
    let (session, theme) = (view.session, view.theme);
    let row = view.pane.row(session);
    let title = match row {
        Row::Message(i) => format!(" #{} fields ", i + 1),
        Row::Settings => " settings ".into(),
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(title, theme.dim()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let list = view.pane.row_fields(session);
    let mut warning =
        crate::tui::panes::prompt::injection::warning_lines(view.tokens, row, inner.width, theme);
    let flagged = |need: &String| format!("{} {need}", crate::tui::panes::prompt::injection::FLAG);
    warning.extend(wrapped_lines(
        view.needs.iter().map(flagged),
        inner.width,
        theme.error(),
    ));
    warning.extend(wrapped_lines(
        view.notes.iter().cloned(),
        inner.width,
        theme.dim(),
    ));
    // Room for the explanation: what the fields leave, at least half the area.
    let fields_height = u16::try_from(list.len()).unwrap_or(u16::MAX);
    let warning_height = u16::try_from(warning.len())
        .unwrap_or(u16::MAX)
        .min((inner.height / 2).max(inner.height.saturating_sub(fields_height)));
    let [inner, warning_area] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(warning_height)]).areas(inner);
    frame.render_widget(Paragraph::new(warning), warning_area);
    let height = usize::from(inner.height);
    let start = window_start(view.pane.field, list.len(), height);
    let width = usize::from(inner.width);
    let lines: Vec<Line> = list
        .iter()
        .enumerate()
        .skip(start)
        .take(height)
        .map(|(i, field)| {
            // A knob's name is its label: a short mark leaves it the width.
            let label = match field {
                Field::Knob(_) => "knob ".to_string(),
                other => format!("{:<14} ", other.label()),
            };
            let room = width.saturating_sub(label.chars().count());
            let mut spans = vec![Span::styled(label, theme.dim())];
            let knob = match field {
                Field::Knob(index) => view.pane.knobs.get(*index),
                _ => None,
            };
            match (knob, (view.unused)(row, *field)) {
                (Some(knob), _) => spans.extend(super::knobs::spans(knob, room, theme)),
                (None, Some(note)) => {
                    let summary = fields::summary(session, row, *field);
                    spans.extend(unused_spans(&note, &summary, room, theme));
                }
                (None, None) => {
                    let summary = fields::summary(session, row, *field);
                    spans.push(Span::raw(truncate(&summary, room)));
                }
            }
            let line = Line::from(spans);
            if focused && i == view.pane.field {
                line.patch_style(theme.cursor())
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The selected message's warnings (from what the template needs) or notes, wrapped to
/// `width`, in `style`.
fn wrapped_lines(
    texts: impl Iterator<Item = String>,
    width: u16,
    style: Style,
) -> Vec<Line<'static>> {
    let width = usize::from(width).max(12);
    texts
        .flat_map(|text| crate::tui::dialogs::help::wrap(&text, width))
        .map(|line| Line::styled(line, style))
        .collect()
}

/// A value the template ignores: the mark first (it is what matters), then the value.
/// `note` is empty when the whole value is unused, else names the unused parts.
fn unused_spans(note: &str, summary: &str, room: usize, theme: Theme) -> Vec<Span<'static>> {
    // The short form where the whole phrase would be cut.
    let phrase = if room >= UNUSED.len() + 4 {
        UNUSED
    } else {
        "not used"
    };
    let mark = match note {
        "" => phrase.to_string(),
        parts => format!("{phrase}: {parts}"),
    };
    let mark = truncate(&mark, room);
    let rest = room.saturating_sub(mark.chars().count() + 3);
    let mut spans = vec![Span::styled(mark, theme.error())];
    if rest > 0 {
        spans.push(Span::styled(" · ", theme.dim()));
        spans.push(Span::raw(truncate(summary, rest)));
    }
    spans
}

/// The mark on a value the template ignores.
pub const UNUSED: &str = "not used by this template";

/// Cuts `text` to `width` display columns (a CJK character takes two), marking the cut
/// with `…`.
pub fn truncate(text: &str, width: usize) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    if width > 0 {
        out.push('…');
    }
    out
}
