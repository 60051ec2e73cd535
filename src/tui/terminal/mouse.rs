//! The mouse (crossterm's mouse capture; `"mouse": false` in the config file leaves it
//! to the terminal): a click focuses the pane under it and selects what it hit: a row of
//! the message or template list, or the message that produced a prompt byte (see
//! `terminal::mouse_select`); the wheel moves the list under the pointer (messages, templates) or scrolls
//! the prompt, three lines a notch. While the app has the mouse, most terminals still
//! select text with Shift held.

use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use crate::tui::app::action::TemplateAction;
use crate::tui::app::action::{Action, Direction, Effect, MessageAction, Pane, PromptAction, Step};
use crate::tui::app::App;
use crate::tui::panes::messages::view::window_start;

/// Whether the terminal's mouse is captured (set from the config before the terminal is
/// taken over).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Lines a wheel notch moves.
const NOTCH: usize = 3;

/// Takes the mouse from the terminal, or leaves it (the config file's `"mouse"`).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether the app takes the mouse.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// What the mouse did, where (a screen cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseInput {
    /// A left click, or the wheel turned up or down.
    pub kind: MouseKind,
    /// The column.
    pub column: u16,
    /// The row.
    pub row: u16,
}

/// The mouse events the app uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    /// The left button went down.
    Click,
    /// The wheel turned.
    Wheel(Direction),
}

impl MouseInput {
    /// The input for a crossterm event, `None` for events the app does not use (moves,
    /// drags, other buttons).
    pub fn from_event(event: &MouseEvent) -> Option<Self> {
        let kind = match event.kind {
            MouseEventKind::Down(MouseButton::Left) => MouseKind::Click,
            MouseEventKind::ScrollUp => MouseKind::Wheel(Direction::Up),
            MouseEventKind::ScrollDown => MouseKind::Wheel(Direction::Down),
            _ => return None,
        };
        Some(MouseInput {
            kind,
            column: event.column,
            row: event.row,
        })
    }
}

fn inside(rect: Rect, column: u16, row: u16) -> bool {
    column >= rect.x && column < rect.right() && row >= rect.y && row < rect.bottom()
}

impl App {
    /// A click or a wheel turn; ignored while a dialog is open (it has the keyboard).
    pub(in crate::tui) fn mouse(&mut self, input: MouseInput) -> Option<Effect> {
        if self.overlay.is_some() || self.editor.is_some() {
            return None;
        }
        let areas = crate::tui::ui::areas(&self.screen);
        let (pane, rect) = areas
            .panes
            .iter()
            .copied()
            .find(|(_, rect)| inside(*rect, input.column, input.row))?;
        match input.kind {
            MouseKind::Click => {
                self.update(Action::Focus(pane));
                match pane {
                    Pane::Messages => {
                        self.click_message_row(rect, input.row);
                        None
                    }
                    Pane::Templates => self.click_template_row(rect, input.row),
                    Pane::Prompt => self.click_prompt(rect, input.column, input.row),
                }
            }
            MouseKind::Wheel(direction) => {
                let step = Step::Line(direction);
                let action = match pane {
                    Pane::Messages if !self.messages.in_fields => {
                        Action::Message(MessageAction::Select(step))
                    }
                    Pane::Messages => return None,
                    Pane::Templates => Action::Template(TemplateAction::Select(step)),
                    Pane::Prompt => Action::Prompt(PromptAction::Scroll(step)),
                };
                (0..NOTCH).find_map(|_| self.update(action.clone()))
            }
        }
    }

    /// Selects the message list row at screen `row` of the pane at `rect` (the list is
    /// the top part of the pane, as `panes::messages::view` draws it).
    fn click_message_row(&mut self, rect: Rect, row: u16) {
        let top = rect.y + 1;
        let inner_height = rect.height.saturating_sub(2);
        let list_height = usize::from((inner_height / 2).max(3));
        let Some(offset) = usize::from(row).checked_sub(usize::from(top)) else {
            return;
        };
        if offset >= list_height {
            return;
        }
        let rows = self.workspace.session.messages.len() + 1;
        let start = window_start(self.messages.selected, rows, list_height);
        let index = start + offset;
        if index < rows {
            self.messages.in_fields = false;
            self.select_message(index);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn the_config_file_turns_the_mouse_off() {
        let on = crate::tui::config::from_text("{}", Path::new("c.json"));
        assert!(on.mouse);
        let off = crate::tui::config::from_text(r#"{"mouse": false}"#, Path::new("c.json"));
        assert!(!off.mouse);
        assert!(off.problems.is_empty(), "{:?}", off.problems);
        let wrong = crate::tui::config::from_text(r#"{"mouse": "no"}"#, Path::new("c.json"));
        assert!(wrong.mouse);
        assert_eq!(
            wrong.problems,
            ["c.json: mouse: expected true or false (default kept)"]
        );
    }
}
