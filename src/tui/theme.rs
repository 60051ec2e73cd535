//! Colours and emphasis. Only the 16 basic ANSI colours are used, so the app looks the
//! same on any terminal; with `NO_COLOR` set, every style falls back to modifiers.

use ratatui::style::{Color, Modifier, Style};

/// The style set, with or without colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// False when `NO_COLOR` is set: modifiers only.
    pub color: bool,
    /// The colours (the config file's `colors` can change them).
    pub palette: Palette,
}

/// The colours the app uses, by what they show; each can be set in the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    /// The `system` role badge.
    pub system: Color,
    /// The `user` role badge.
    pub user: Color,
    /// The `assistant` role badge.
    pub assistant: Color,
    /// The `tool` role badge.
    pub tool: Color,
    /// Any other role's badge.
    pub other_role: Color,
    /// Special tokens in the prompt.
    pub token: Color,
    /// Whitespace marks.
    pub whitespace: Color,
    /// The background of the selected message's part of the prompt.
    pub selected: Color,
    /// The background of search matches.
    pub search_match: Color,
    /// Errors and removed diff lines.
    pub error: Color,
    /// Added diff lines.
    pub added: Color,
    /// Secondary text.
    pub dim: Color,
    /// Key names in hints.
    pub key: Color,
    /// The focused pane's border.
    pub focused: Color,
}

impl Default for Palette {
    fn default() -> Self {
        Palette {
            system: Color::Magenta,
            user: Color::Cyan,
            assistant: Color::Green,
            tool: Color::Yellow,
            other_role: Color::White,
            token: Color::Magenta,
            whitespace: Color::Blue,
            selected: Color::Blue,
            search_match: Color::Yellow,
            error: Color::Red,
            added: Color::Green,
            dim: Color::DarkGray,
            key: Color::Cyan,
            focused: Color::Cyan,
        }
    }
}

impl Palette {
    /// The names the config file's `colors` uses.
    pub const NAMES: [&'static str; 14] = [
        "system",
        "user",
        "assistant",
        "tool",
        "other-role",
        "token",
        "whitespace",
        "selected",
        "search-match",
        "error",
        "added",
        "dim",
        "key",
        "focused",
    ];

    /// The colour called `name` (one of [`Palette::NAMES`]).
    pub fn slot(&mut self, name: &str) -> Option<&mut Color> {
        Some(match name {
            "system" => &mut self.system,
            "user" => &mut self.user,
            "assistant" => &mut self.assistant,
            "tool" => &mut self.tool,
            "other-role" => &mut self.other_role,
            "token" => &mut self.token,
            "whitespace" => &mut self.whitespace,
            "selected" => &mut self.selected,
            "search-match" => &mut self.search_match,
            "error" => &mut self.error,
            "added" => &mut self.added,
            "dim" => &mut self.dim,
            "key" => &mut self.key,
            "focused" => &mut self.focused,
            _ => return None,
        })
    }
}

impl Theme {
    /// Colour unless the `NO_COLOR` environment variable is set and not empty.
    pub fn from_env() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme {
            color: !no_color,
            palette: Palette::default(),
        }
    }

    /// Colour, with the default palette.
    pub fn colored() -> Self {
        Theme {
            color: true,
            palette: Palette::default(),
        }
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
            "system" => self.palette.system,
            "user" => self.palette.user,
            "assistant" => self.palette.assistant,
            "tool" => self.palette.tool,
            _ => self.palette.other_role,
        };
        self.paint(color, Modifier::BOLD)
    }

    /// Special tokens in the prompt.
    pub fn token(self) -> Style {
        self.paint(self.palette.token, Modifier::BOLD)
    }

    /// Tokens the assistant mask trains on, in token mode: underlined (green with
    /// colour), so the mark survives `NO_COLOR`.
    pub fn trained(self) -> Style {
        let style = Style::new().add_modifier(Modifier::UNDERLINED);
        match self.color {
            true => style.fg(Color::Green),
            false => style,
        }
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
        self.paint(self.palette.whitespace, Modifier::DIM)
    }

    /// The selected message's part of the prompt.
    pub fn selected_span(self) -> Style {
        if self.color {
            Style::new().bg(self.palette.selected).fg(Color::White)
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED)
        }
    }

    /// Search matches.
    pub fn search_match(self) -> Style {
        if self.color {
            Style::new().bg(self.palette.search_match).fg(Color::Black)
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
        self.paint(self.palette.error, Modifier::BOLD)
    }

    /// Lines only in the expected prompt.
    pub fn removed(self) -> Style {
        self.paint(self.palette.error, Modifier::CROSSED_OUT)
    }

    /// Lines only in the actual prompt.
    pub fn added(self) -> Style {
        self.paint(self.palette.added, Modifier::BOLD)
    }

    /// The changed characters inside a changed diff line.
    pub fn changed(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    /// Secondary text: labels, line numbers, hints.
    pub fn dim(self) -> Style {
        self.paint(self.palette.dim, Modifier::DIM)
    }

    /// Key names in hints.
    pub fn key(self) -> Style {
        self.paint(self.palette.key, Modifier::BOLD)
    }

    /// The focused pane's border and tab.
    pub fn focused(self) -> Style {
        self.paint(self.palette.focused, Modifier::BOLD)
    }
}
