//! The multi-line field editor (ratatui-textarea, with undo and redo). Every change is
//! written straight to the session so the prompt follows each keystroke; text that does
//! not validate stays in the editor with its error, and the session keeps the last good
//! value.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::session::Session;

use super::field_write;
use super::fields::{self, Field, FieldError, FieldKind, Row};
use super::theme::Theme;

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
        // Message content is prose: wrap it instead of scrolling sideways in a narrow pane.
        textarea.set_wrap_mode(WrapMode::WordOrGlyph);
        // Start at the end: the common edit is adding to what is there.
        textarea.move_cursor(CursorMove::Bottom);
        textarea.move_cursor(CursorMove::End);
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
        match field_write::write(session, self.row, self.field, &self.text()) {
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
pub fn draw(frame: &mut Frame, area: Rect, editor: &FieldEditor, theme: Theme) {
    let [text_area, status_area] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    frame.render_widget(&editor.textarea, text_area);
    frame.render_widget(Paragraph::new(status_line(editor, theme)), status_area);
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
        None if editor.kind == FieldKind::Json => Line::styled("✓ valid JSON", theme.dim()),
        None => Line::styled("Esc done · Ctrl+Z undo · Ctrl+Y redo", theme.dim()),
    }
}
