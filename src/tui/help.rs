//! The `?` help overlay: the keys of the pane it was opened from first (then what that
//! pane inherits, then everything else), including the field editor's own text keys.
//! Scrolling stops at the last line.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::action::{Direction, Step};
use super::badges;
use super::dialog_view::dialog_box;
use super::keymap::{self, Scope};
use super::theme::Theme;
use unicode_width::UnicodeWidthStr;

/// The text keys of the field editor (ratatui-textarea's own bindings, which the keymap
/// table does not hold because unbound keys go to the text as they are).
pub const TEXT_KEYS: &[(&str, &str)] = &[
    ("← → ↑ ↓ Ctrl+B/F/P/N", "Move (with Shift: select)"),
    ("Home End Ctrl+A Ctrl+E", "Start / end of the line"),
    ("Ctrl+← Ctrl+→ Alt+B Alt+F", "A word back / forward"),
    ("Alt+< Alt+>", "Start / end of the text"),
    ("PgUp PgDn Alt+V Ctrl+V", "A page up / down"),
    ("Enter Ctrl+J", "New line"),
    ("Tab", "A real tab character"),
    (
        "Bksp Del Ctrl+H Ctrl+D",
        "Delete a character before / after",
    ),
    ("Ctrl+W Alt+Bksp / Alt+D", "Delete a word before / after"),
    ("Ctrl+K / Ctrl+U", "Delete to the end / start of the line"),
    ("Ctrl+X", "Cut the selection (Ctrl+R also redoes)"),
];

/// One row of the overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelpRow {
    /// A section title.
    Heading(&'static str),
    /// Keys and what they do.
    Key(String, &'static str),
}

/// The scopes in the order the overlay shows them when opened from `from`.
fn order(from: Scope) -> Vec<Scope> {
    let mut scopes = vec![from];
    if from == Scope::Fields || from == Scope::Editor {
        scopes.push(Scope::Messages);
    }
    scopes.extend_from_slice(from.inherits_scopes());
    for scope in Scope::ALL {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    scopes
}

/// Every row of the overlay opened from `from`.
pub fn rows(from: Scope) -> Vec<HelpRow> {
    let sections = keymap::help_sections();
    let mut rows = Vec::new();
    for scope in order(from) {
        let Some((title, keys)) = sections.iter().find(|(t, _)| *t == scope.title()) else {
            continue;
        };
        if keys.is_empty() {
            continue;
        }
        rows.push(HelpRow::Heading(title));
        rows.extend(keys.iter().map(|(k, h)| HelpRow::Key(k.clone(), h)));
        if scope == Scope::Templates {
            rows.push(HelpRow::Heading(badges::LEGEND_TITLE));
            rows.extend((badges::LEGEND.iter()).map(|(w, h)| HelpRow::Key((*w).into(), h)));
        }
        if scope == Scope::Editor {
            rows.push(HelpRow::Heading("Field editor: text keys"));
            rows.extend(TEXT_KEYS.iter().map(|(k, h)| HelpRow::Key((*k).into(), h)));
        }
    }
    rows
}

/// A cursor or view moved by `step` in a list of `count` rows shown `page` at a time.
pub fn step(current: usize, count: usize, page: usize, step: Step) -> usize {
    let last = count.saturating_sub(1);
    match step {
        Step::Line(Direction::Up) => current.saturating_sub(1),
        Step::Line(Direction::Down) => (current + 1).min(last),
        Step::Page(Direction::Up) => current.saturating_sub(page),
        Step::Page(Direction::Down) => (current + page).min(last),
        Step::First => 0,
        Step::Last => last,
    }
}

/// The help box's widest, borders included.
const WIDTH: u16 = 84;

/// Columns before a description: two spaces and the keys, padded.
const KEYS_WIDTH: usize = 28;

/// The help scroll after `step` on a screen of `width` x `height`: never past the point
/// where the last line is at the bottom.
pub fn scroll(scroll: u16, from: Scope, (width, height): (u16, u16), how: Step) -> u16 {
    let view = usize::from(height.saturating_sub(2)).max(1);
    let max = layout(from, inner_width(width)).len().saturating_sub(view);
    let top = step(usize::from(scroll), max + 1, view, how);
    u16::try_from(top).unwrap_or(u16::MAX)
}

/// The text width inside the box on a screen `width` columns wide.
fn inner_width(width: u16) -> usize {
    usize::from(WIDTH.min(width).saturating_sub(2))
}

/// Draws the overlay.
pub fn draw(frame: &mut Frame, area: Rect, scroll: u16, from: Scope, theme: Theme) {
    let inner = dialog_box(
        frame,
        area,
        WIDTH,
        area.height,
        "Keys (Esc closes, ↑↓ PgUp PgDn scroll)",
        theme,
    );
    let shown: Vec<Line> = layout(from, inner_width(area.width))
        .into_iter()
        .skip(usize::from(scroll))
        .take(usize::from(inner.height))
        .map(|line| match line {
            HelpLine::Heading(title) => Line::styled(title, theme.focused()),
            HelpLine::Keys(keys, help) => {
                Line::from(vec![Span::styled(keys, theme.key()), Span::raw(help)])
            }
            HelpLine::More(help) => Line::raw(format!("{}{help}", " ".repeat(KEYS_WIDTH))),
        })
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}

/// One line of the overlay.
enum HelpLine {
    Heading(&'static str),
    /// The keys (padded) and the start of what they do.
    Keys(String, String),
    /// More of a description, under its start.
    More(String),
}

/// The overlay's lines at `width` columns: a description too long for its column wraps
/// under itself, not past the box's edge.
fn layout(from: Scope, width: usize) -> Vec<HelpLine> {
    let mut lines = Vec::new();
    for row in rows(from) {
        let (keys, help) = match row {
            HelpRow::Heading(title) => {
                lines.push(HelpLine::Heading(title));
                continue;
            }
            HelpRow::Key(keys, help) => (format!("  {keys:<26}"), help),
        };
        let start = keys.width().max(KEYS_WIDTH);
        let mut parts = wrap(help, width.saturating_sub(start).max(12)).into_iter();
        lines.push(HelpLine::Keys(keys, parts.next().unwrap_or_default()));
        lines.extend(parts.map(HelpLine::More));
    }
    lines
}

/// `text` in lines of at most `width` columns, broken between words (a word longer than
/// a line gets a line of its own).
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.width() + 1 + word.width() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}
