//! What the app shows besides the panes' own state: which pane has the focus, the
//! terminal's size, and the status line's message.

use crate::tui::action::Pane;

/// Focus and terminal size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Screen {
    /// The pane that gets the keys.
    pub focus: Pane,
    /// The pane shown beside the prompt when only two fit.
    pub left: Pane,
    /// Terminal width.
    pub width: u16,
    /// Terminal height.
    pub height: u16,
    /// The focused pane alone on the whole screen.
    pub zoom: bool,
}

/// A one-line message in the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The text.
    pub text: String,
    /// Shown as an error.
    pub error: bool,
    /// Progress that the next keystroke replaces (a live search's count, "opening…"):
    /// shown, not kept in the message log.
    pub transient: bool,
}

impl Status {
    /// An informational message.
    pub fn info(text: impl Into<String>) -> Self {
        Status {
            text: text.into(),
            error: false,
            transient: false,
        }
    }

    /// An error message.
    pub fn error(text: impl Into<String>) -> Self {
        Status {
            text: text.into(),
            error: true,
            transient: false,
        }
    }

    /// The same message marked as progress: shown, not logged.
    #[must_use]
    pub fn transient(self) -> Self {
        Status {
            transient: true,
            ..self
        }
    }
}
