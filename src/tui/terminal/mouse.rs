//! The mouse (crossterm's mouse capture; `"mouse": false` in the config file leaves it
//! to the terminal): a click focuses the pane under it and selects what it hit: a row of
//! the message or template list, or the message that produced a prompt byte (see
//! `terminal::mouse_select`); the wheel moves the list under the pointer (messages, templates) or scrolls
//! the prompt, three lines a notch; a drag over the message list selects a block of
//! messages (the range mode). While the app has the mouse, most terminals still
//! select text with Shift held.
//!
//! The mouse changes nothing itself: [`request`] reads a [`PointerView`] of what is on
//! screen and says what the event asks for ([`MouseRequest`]); the app applies it.

use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use chatplate_core::session::Session;

use crate::tui::action::Action;
use crate::tui::action::Direction;
use crate::tui::action::MessageAction;
use crate::tui::action::Pane;
use crate::tui::action::PromptAction;
use crate::tui::action::Step;
use crate::tui::action::TemplateAction;
use crate::tui::action::{MouseInput, MouseKind};
use crate::tui::panes::messages::view::window_start;
use crate::tui::panes::messages::MessagesPane;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::panes::templates::TemplatesPane;
use crate::tui::preview::Preview;
use crate::tui::screen::Screen;
use crate::tui::terminal::mouse_select;

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

impl MouseInput {
    /// The input for a crossterm event, `None` for events the app does not use (moves,
    /// drags, other buttons).
    pub fn from_event(event: &MouseEvent) -> Option<Self> {
        let kind = match event.kind {
            MouseEventKind::Down(MouseButton::Left) => MouseKind::Click,
            MouseEventKind::Drag(MouseButton::Left) => MouseKind::Drag,
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

/// What a click or a wheel turn depends on, read only.
#[derive(Debug, Clone, Copy)]
pub struct PointerView<'a> {
    /// Focus and terminal size (where the panes are).
    pub screen: Screen,
    /// The session (how many rows the message list has).
    pub session: &'a Session,
    /// The message list's selection.
    pub messages: &'a MessagesPane,
    /// The template list.
    pub templates: &'a TemplatesPane,
    /// The prompt pane's scroll and toggles.
    pub prompt: &'a PromptPane,
    /// The shown render.
    pub preview: &'a Preview,
    /// The prompt byte the view follows (see `App::prompt_anchor`).
    pub anchor: Option<usize>,
}

/// What a mouse event asks the app to do.
#[derive(Debug, Clone, PartialEq)]
pub enum MouseRequest {
    /// Focus `pane`, then select what the click hit there, if anything.
    Click {
        /// The pane clicked.
        pane: Pane,
        /// What in it.
        hit: Option<Hit>,
    },
    /// The left button was dragged over this message list row: the block runs from
    /// where the drag began to here.
    Drag(Hit),
    /// Apply `action` `lines` times (a wheel notch).
    Wheel {
        /// One line's move.
        action: Action,
        /// How many.
        lines: usize,
    },
}

/// What a click hit inside a pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// Row `usize` of the message list (a message, or the settings row after the last).
    MessageRow(usize),
    /// A row of the template list: the cursor goes to `cursor` (when given), then takes
    /// `step` through the pane's own Select, so the preview, the info view and the source
    /// follow it as they do for `j` / `k`.
    TemplateRow {
        /// Where the cursor goes first.
        cursor: Option<usize>,
        /// The step that lands on the row.
        step: Step,
    },
    /// Prompt byte `offset`: the message that produced it is selected, and the view stays
    /// at line `top` (jumping to the source would re-centre it).
    PromptByte {
        /// The clicked byte.
        offset: usize,
        /// The first line in view when it was clicked.
        top: usize,
    },
}

/// What `input` asks for, on the screen `view` shows; `None` outside the panes, and for
/// the wheel over the field list.
pub fn request(input: MouseInput, view: &PointerView) -> Option<MouseRequest> {
    let areas = crate::tui::layout::areas(&view.screen);
    let (pane, rect) = areas
        .panes
        .iter()
        .copied()
        .find(|(_, rect)| inside(*rect, input.column, input.row))?;
    if input.kind == MouseKind::Drag {
        // Only the message list has something to drag over: a block of messages.
        let hit = (pane == Pane::Messages).then(|| message_row(view, rect, input.row));
        return Some(MouseRequest::Drag(hit??));
    }
    let MouseKind::Wheel(direction) = input.kind else {
        let hit = match pane {
            Pane::Messages => message_row(view, rect, input.row),
            Pane::Templates => mouse_select::template_row(view, rect, input.row),
            Pane::Prompt => mouse_select::prompt_byte(view, rect, input.column, input.row),
        };
        return Some(MouseRequest::Click { pane, hit });
    };
    let step = Step::Line(direction);
    let action = match pane {
        Pane::Messages if !view.messages.in_fields => Action::Message(MessageAction::Select(step)),
        Pane::Messages => return None,
        Pane::Templates => Action::Template(TemplateAction::Select(step)),
        Pane::Prompt => Action::Prompt(PromptAction::Scroll(step)),
    };
    Some(MouseRequest::Wheel {
        action,
        lines: NOTCH,
    })
}

/// The message list row at screen `row` of the pane at `rect` (the list is the top part
/// of the pane, as `panes::messages::view` draws it).
fn message_row(view: &PointerView, rect: Rect, row: u16) -> Option<Hit> {
    let top = rect.y + 1;
    let inner_height = rect.height.saturating_sub(2);
    let list_height = usize::from((inner_height / 2).max(3));
    let offset = usize::from(row).checked_sub(usize::from(top))?;
    if offset >= list_height {
        return None;
    }
    let rows = view.session.messages.len() + 1;
    let start = window_start(view.messages.selected, rows, list_height);
    let index = start + offset;
    (index < rows).then_some(Hit::MessageRow(index))
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
            ["c.json:1:11: mouse: expected true or false (default kept)"]
        );
    }
}
