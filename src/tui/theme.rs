//! Colours and emphasis. Only the 16 basic ANSI colours are used, so the app looks the
//! same on any terminal; with `NO_COLOR` set, every style falls back to modifiers.

use ratatui::style::{Color, Modifier, Style};

/// The style set, with or without colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// False when `NO_COLOR` is set: modifiers only.
    pub color: bool,
}

impl Theme {
    /// Colour unless the `NO_COLOR` environment variable is set and not empty.
    pub fn from_env() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme { color: !no_color }
    }

    fn paint(self, color: Color, fallback: Modifier) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new().add_modifier(fallback)
        }
    }

    /// A role badge: each common role gets its own colour.
    pub fn role(self, role: &str) -> Style {
        let color = match role {
            "system" => Color::Magenta,
            "user" => Color::Cyan,
            "assistant" => Color::Green,
            "tool" => Color::Yellow,
            _ => Color::White,
        };
        self.paint(color, Modifier::BOLD)
    }

    /// Special tokens in the prompt.
    pub fn token(self) -> Style {
        self.paint(Color::Magenta, Modifier::BOLD)
    }

    /// Every other token in token mode (without colour a `¦` mark separates them
    /// instead, so this is plain).
    pub fn alternate_token(self) -> Style {
        if self.color {
            Style::new().bg(Color::DarkGray)
        } else {
            Style::new()
        }
    }

    /// Whitespace marks.
    pub fn whitespace(self) -> Style {
        self.paint(Color::Blue, Modifier::DIM)
    }

    /// The selected message's part of the prompt.
    pub fn selected_span(self) -> Style {
        if self.color {
            Style::new().bg(Color::Blue).fg(Color::White)
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED)
        }
    }

    /// Search matches.
    pub fn search_match(self) -> Style {
        if self.color {
            Style::new().bg(Color::Yellow).fg(Color::Black)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// The cursor row of a list.
    pub fn cursor(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// Errors.
    pub fn error(self) -> Style {
        self.paint(Color::Red, Modifier::BOLD)
    }

    /// Lines only in the expected prompt.
    pub fn removed(self) -> Style {
        self.paint(Color::Red, Modifier::CROSSED_OUT)
    }

    /// Lines only in the actual prompt.
    pub fn added(self) -> Style {
        self.paint(Color::Green, Modifier::BOLD)
    }

    /// The changed characters inside a changed diff line.
    pub fn changed(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    /// Secondary text: labels, line numbers, hints.
    pub fn dim(self) -> Style {
        self.paint(Color::DarkGray, Modifier::DIM)
    }

    /// Key names in hints.
    pub fn key(self) -> Style {
        self.paint(Color::Cyan, Modifier::BOLD)
    }

    /// The focused pane's border and tab.
    pub fn focused(self) -> Style {
        self.paint(Color::Cyan, Modifier::BOLD)
    }
}
