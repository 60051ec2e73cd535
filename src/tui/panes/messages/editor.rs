//! The multi-line field editor (ratatui-textarea, with undo and redo). Every change is
//! written straight to the session so the prompt follows each keystroke; text that does
//! not validate stays in the editor with its error, and the session keeps the last good
//! value.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use ratatui_textarea::{CursorMove, Input, Key, TextArea, WrapMode};

use chatplate_core::session::Session;

use crate::tui::panes::messages::field_write;
use crate::tui::panes::messages::fields;
use crate::tui::panes::messages::fields::Field;
use crate::tui::panes::messages::fields::FieldError;
use crate::tui::panes::messages::fields::FieldKind;
use crate::tui::panes::messages::fields::Row;
use crate::tui::theme::Theme;

/// Longest text the editor soft-wraps. ratatui-textarea re-wraps all of its text after
/// every edit, in time proportional to its length, so beyond this a keystroke would take
/// longer than a frame (BENCHMARKS.md); longer text scrolls sideways instead.
const WRAP_LIMIT: usize = 64 * 1024;

/// An open editor on one field.
#[derive(Debug)]
pub struct FieldEditor {
    /// The row the field belongs to.
    pub row: Row,
    /// The field.
    pub field: Field,
    /// Text or JSON.
    pub kind: FieldKind,
    /// The text being edited.
    pub textarea: TextArea<'static>,
    /// Why the current text was not accepted.
    pub error: Option<FieldError>,
    discard_armed: bool,
}

impl FieldEditor {
    /// Opens an editor on the field's current text.
    pub fn open(session: &Session, row: Row, field: Field) -> Self {
        let text = fields::read(session, row, field);
        let mut textarea = TextArea::new(text.split('\n').map(String::from).collect());
        textarea.set_max_histories(500);
        // Tab types a real tab: a template may care about the difference.
        textarea.set_hard_tab_indent(true);
        // Message content is prose: wrap it instead of scrolling sideways in a narrow pane.
        if text.len() <= WRAP_LIMIT {
            textarea.set_wrap_mode(WrapMode::WordOrGlyph);
        }
        // Start at the end: the common edit is adding to what is there. An empty JSON
        // placeholder is selected instead, so typing replaces it, and so are the settings
        // as one object (`e` on the settings row), which are pasted whole (an arrow key
        // keeps them and moves the cursor).
        textarea.move_cursor(CursorMove::Bottom);
        textarea.move_cursor(CursorMove::End);
        let placeholder = matches!(text.trim(), "{}" | "[]" | "null");
        let settings = (row, field) == (Row::Settings, Field::Raw);
        if field.kind(session, row) == FieldKind::Json && (placeholder || settings) {
            textarea.select_all();
        }
        textarea.set_cursor_line_style(ratatui::style::Style::new());
        textarea.set_block(
            Block::default()
                .borders(Borders::ALL)
                .title(title(session, row, field)),
        );
        FieldEditor {
            row,
            field,
            kind: field.kind(session, row),
            textarea,
            error: None,
            discard_armed: false,
        }
    }

    /// A key for the text itself. Two of ratatui-textarea's bindings differ: Ctrl+J is
    /// the line feed byte, which a terminal without bracketed paste sends for every line
    /// break of a paste, so it is a new line (it deleted to the start of the line, eating
    /// the pasted text); Ctrl+U deletes to the start of the line instead, as in a shell
    /// (Ctrl+Z stays undo). Returns whether the text changed.
    pub fn input(&mut self, input: Input) -> bool {
        match input {
            Input {
                key: Key::Char('j'),
                ctrl: true,
                alt: false,
                ..
            } => {
                self.textarea.insert_newline();
                true
            }
            Input {
                key: Key::Char('u'),
                ctrl: true,
                alt: false,
                ..
            } => self.textarea.delete_line_by_head(),
            input => self.textarea.input(input),
        }
    }

    /// The edited text.
    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// Replaces the whole text, as one undoable edit.
    pub fn replace_text(&mut self, text: &str) {
        self.textarea.select_all();
        self.textarea.insert_str(text);
        if text.is_empty() {
            self.textarea.cancel_selection();
        }
    }

    /// Validates the text and writes it into the session; true when it was accepted.
    pub fn apply(&mut self, session: &mut Session) -> bool {
        self.discard_armed = false;
        let text = self.text();
        self.fit_wrap(text.len());
        match field_write::write(session, self.row, self.field, &text) {
            Ok(()) => {
                self.error = None;
                true
            }
            Err(err) => {
                self.error = Some(err);
                false
            }
        }
    }

    /// Soft wrap while the text is short enough to re-wrap on every keystroke.
    fn fit_wrap(&mut self, len: usize) {
        let wanted = if len <= WRAP_LIMIT {
            WrapMode::WordOrGlyph
        } else {
            WrapMode::None
        };
        if self.textarea.wrap_mode() != wanted {
            self.textarea.set_wrap_mode(wanted);
        }
    }

    /// Whether the text is too long to wrap (it scrolls sideways).
    pub fn unwrapped(&self) -> bool {
        self.textarea.wrap_mode() == WrapMode::None
    }

    /// Whether a close request should go through. Invalid text needs a second request,
    /// which drops it (the session still has the last good value).
    pub fn may_close(&mut self) -> bool {
        if self.error.is_none() || self.discard_armed {
            return true;
        }
        self.discard_armed = true;
        false
    }
}

/// The title: which message and field.
fn title(session: &Session, row: Row, field: Field) -> String {
    match (fields::message(session, row), row) {
        (Some(msg), Row::Message(i)) => format!(" #{} {} · {} ", i + 1, msg.role(), field.label()),
        _ => format!(" settings · {} ", field.label()),
    }
}

/// Draws the editor with its validation line.
/// `unused` is the field's "not used by this template" note, when it has one.
pub fn draw(
    frame: &mut Frame,
    area: Rect,
    editor: &FieldEditor,
    unused: Option<&str>,
    theme: Theme,
) {
    let [text_area, status_area] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    if editor.unwrapped() {
        draw_long(frame, text_area, editor, theme);
    } else {
        frame.render_widget(&editor.textarea, text_area);
    }
    let status = match unused {
        Some(note) if editor.error.is_none() => unused_line(note, theme),
        _ => status_line(editor, theme),
    };
    frame.render_widget(Paragraph::new(status), status_area);
}

/// Long text: only the window around the cursor is laid out. ratatui-textarea's widget
/// measures every character of a line on each frame, which for a multi-megabyte line
/// takes most of a second.
fn draw_long(frame: &mut Frame, area: Rect, editor: &FieldEditor, theme: Theme) {
    let inner = match editor.textarea.block() {
        Some(block) => {
            frame.render_widget(block, area);
            block.inner(area)
        }
        None => area,
    };
    let (width, height) = (usize::from(inner.width), usize::from(inner.height));
    let ratatui_textarea::DataCursor(row, col) = editor.textarea.cursor();
    let first = row.saturating_sub(height / 2);
    let left = col.saturating_sub(width.saturating_sub(1) / 2 + 1).min(col);
    let lines: Vec<Line> = editor.textarea.lines()[first..]
        .iter()
        .take(height)
        .enumerate()
        .map(|(offset, line)| {
            let cursor = (first + offset == row).then_some(col - left);
            window_line(line, left, width, cursor, theme)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// `width` characters of `line` from character `left`, with the cursor cell marked.
fn window_line(
    line: &str,
    left: usize,
    width: usize,
    cursor: Option<usize>,
    theme: Theme,
) -> Line<'static> {
    let shown: Vec<char> = line.chars().skip(left).take(width).collect();
    let Some(at) = cursor else {
        return Line::raw(shown.into_iter().collect::<String>());
    };
    let before: String = shown.iter().take(at).collect();
    let under = shown.get(at).map_or(" ".to_string(), char::to_string);
    let after: String = shown.iter().skip(at + 1).collect();
    Line::from(vec![
        Span::raw(before),
        Span::styled(under, theme.cursor()),
        Span::raw(after),
    ])
}

/// The status line of a field the template ignores (in whole or in part).
fn unused_line(note: &str, theme: Theme) -> Line<'static> {
    let what = match note {
        "" => "changing it does not change the prompt".to_string(),
        parts => format!("ignored: {parts}"),
    };
    Line::from(vec![
        Span::styled(crate::tui::panes::messages::view::UNUSED, theme.error()),
        Span::styled(format!(" · {what}"), theme.dim()),
    ])
}

fn status_line(editor: &FieldEditor, theme: Theme) -> Line<'static> {
    match &editor.error {
        Some(err) => {
            let at = match (err.line, err.column) {
                (Some(line), Some(column)) => format!("{line}:{column} "),
                _ => String::new(),
            };
            let keep = if editor.discard_armed {
                " (Esc again drops it)"
            } else {
                " (last good value kept)"
            };
            Line::from(vec![
                Span::styled(format!("✗ {at}{}", err.message), theme.error()),
                Span::styled(keep, theme.dim()),
            ])
        }
        None if editor.unwrapped() => Line::styled(
            "long text: not wrapped (Ctrl+G edits it in $EDITOR)",
            theme.dim(),
        ),
        None if editor.kind == FieldKind::Json => Line::styled("✓ valid JSON", theme.dim()),
        None => Line::styled("Esc done · Ctrl+Z undo · Ctrl+Y redo", theme.dim()),
    }
}
