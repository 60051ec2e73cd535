//! The `?` help overlay: the keys of the pane it was opened from first (then what that
//! pane inherits, then everything else), including the field editor's own text keys.
//! Scrolling stops at the last line.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::tui::action::Action;

use crate::tui::action::Direction;

use crate::tui::action::Step;
use crate::tui::dialogs::view::dialog_box;
use crate::tui::keymap;
use crate::tui::keymap::Scope;
use crate::tui::matcher;
use crate::tui::panes::templates::badges;
use crate::tui::theme::Theme;
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

/// What the Prompt pane's title says besides its name, first what matters most (see
/// `panes::prompt::view` and `ui::compare`).
pub const PROMPT_MARKS: &[(&str, &str)] = &[
    ("attributing…", "Which message made each byte is still being worked out"),
    ("attributing the rest…", "Exact for the lines on screen; the rest is on its way"),
    ("exact on screen only", "Attribution is exact for the lines on screen only (a large prompt)"),
    ("not prefix-monotone", "The template changes earlier text as messages are added: attribution is by the render of each prefix"),
    ("attribution failed", "Which message made a byte is not known for this render"),
    ("⚠ N injected", "Token mode: N message texts became special tokens the model receives as such"),
    ("⚠ 0 trained", "Token mode: the assistant mask trains on nothing ({% generation %} marks no token)"),
    ("N tokens · N trained", "Token mode: the prompt's tokens, and those the assistant mask trains on"),
    ("#ID \"text\"", "Token mode: the token under the cursor"),
    ("[ws] [diff]", "Whitespace shown; the diff against the expected prompt shown"),
    ("N lines · ✗ error", "The render's lines, or why it failed"),
    ("stale", "The session changed since this render; the new one is on its way"),
    ("N hunks differ · same", "Compare view: how the other side differs from the session's render"),
];

/// What the mouse does (see `terminal::mouse`).
pub const MOUSE: &[(&str, &str)] = &[
    ("Click", "Focus the pane and select what was hit: a message, a template, or the message that made a prompt byte"),
    ("Wheel", "Move the selection of the list under the pointer, or the prompt's cursor, three lines a notch"),
    ("Shift+drag", "Select text the terminal's way (or \"mouse\": false in the config file)"),
];

/// One row of the overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelpRow {
    /// A section title.
    Heading(&'static str),
    /// Keys and what they do, to read (the editor's text keys, the badge legend).
    Key(String, &'static str),
    /// A binding of the key table: Enter on it runs its action in its scope. The last
    /// field is its footer hint (`zoom`), which the filter matches too.
    Binding(String, &'static str, Scope, Action, &'static str),
}

impl HelpRow {
    /// The keys and the description, for a row that has them.
    pub fn text(&self) -> Option<(&str, &'static str)> {
        match self {
            HelpRow::Heading(_) => None,
            HelpRow::Key(keys, help) | HelpRow::Binding(keys, help, ..) => Some((keys, help)),
        }
    }

    /// What the filter matches: the keys, the description and the footer hint.
    fn filter_text(&self) -> Option<String> {
        let hint = match self {
            HelpRow::Binding(.., hint) => hint,
            _ => "",
        };
        let (keys, help) = self.text()?;
        Some(format!("{keys} {help} {hint}"))
    }
}

/// The scopes in the order the overlay shows them when opened from `from`.
fn order(from: Scope) -> Vec<Scope> {
    let mut scopes = vec![from];
    if matches!(from, Scope::Fields | Scope::Editor | Scope::Range) {
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

/// The bindings of `scope` as help rows, each key's labels joined.
fn bindings(scope: Scope) -> Vec<HelpRow> {
    (keymap::table().iter())
        .filter(|b| b.scope == scope)
        .map(|b| {
            let keys: Vec<String> = b.keys.iter().map(|k| k.label()).collect();
            HelpRow::Binding(keys.join(" "), b.help, scope, b.action.clone(), b.hint)
        })
        .collect()
}

/// Every row of the overlay opened from `from`.
pub fn rows(from: Scope) -> Vec<HelpRow> {
    let mut rows = Vec::new();
    for scope in order(from) {
        let keys = bindings(scope);
        if keys.is_empty() {
            continue;
        }
        rows.push(HelpRow::Heading(scope.title()));
        rows.extend(keys);
        if scope == Scope::Templates {
            rows.push(HelpRow::Heading(badges::LEGEND_TITLE));
            rows.extend((badges::LEGEND.iter()).map(|(w, h)| HelpRow::Key((*w).into(), h)));
        }
        if scope == Scope::Prompt {
            rows.push(HelpRow::Heading("Prompt pane: the title's marks"));
            rows.extend(
                PROMPT_MARKS
                    .iter()
                    .map(|(k, h)| HelpRow::Key((*k).into(), h)),
            );
        }
        if scope == Scope::Global {
            rows.push(HelpRow::Heading("The mouse"));
            rows.extend(MOUSE.iter().map(|(k, h)| HelpRow::Key((*k).into(), h)));
        }
        if scope == Scope::Editor {
            rows.push(HelpRow::Heading("Field editor: text keys"));
            rows.extend(TEXT_KEYS.iter().map(|(k, h)| HelpRow::Key((*k).into(), h)));
        }
    }
    rows
}

/// The rows shown for `filter`: those whose keys, description or hint hold every word
/// typed, ranked by the shared matcher (`tui::matcher`, words as substrings: the rows
/// are prose), best first under their headings (the sections keep their order; a
/// heading with no row left goes too).
pub fn shown_rows(from: Scope, filter: &str) -> Vec<HelpRow> {
    let all = rows(from);
    if filter.trim().is_empty() {
        return all;
    }
    // Each row that has text, with the heading above it.
    let (mut under, mut texts) = (Vec::new(), Vec::new());
    let mut heading = 0;
    for (i, row) in all.iter().enumerate() {
        match row.filter_text() {
            Some(text) => {
                under.push((heading, i));
                texts.push(text);
            }
            None => heading = i,
        }
    }
    let mut shown = Vec::new();
    let mut last = None;
    let ranked = matcher::rank_exact(filter, &texts);
    for k in matcher::in_sections(ranked, texts.len(), |k| under[k].0) {
        let (heading, row) = under[k];
        if last != Some(heading) {
            shown.push(all[heading].clone());
            last = Some(heading);
        }
        shown.push(all[row].clone());
    }
    shown
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

/// The lines a help box on a screen of `width` x `height` has room for.
fn view_height(height: u16) -> usize {
    usize::from(height.saturating_sub(2)).max(1)
}

/// The text width inside the box on a screen `width` columns wide.
fn inner_width(width: u16) -> usize {
    usize::from(WIDTH.min(width).saturating_sub(2))
}

/// The indices of the rows the cursor can be on (not headings).
pub fn selectable(rows: &[HelpRow]) -> Vec<usize> {
    (rows.iter().enumerate())
        .filter(|(_, row)| !matches!(row, HelpRow::Heading(_)))
        .map(|(i, _)| i)
        .collect()
}

/// The scroll that shows the `cursor`-th selectable row of `rows` whole (moving as
/// little as possible from `scroll`), never past the point where the last line is at the
/// bottom. The row's heading shows with the first row.
pub fn follow(scroll: u16, rows: &[HelpRow], cursor: usize, (width, height): (u16, u16)) -> u16 {
    let lines = layout(rows, inner_width(width));
    let view = view_height(height);
    let max = lines.len().saturating_sub(view);
    let row = selectable(rows).get(cursor).copied().unwrap_or(0);
    let first = lines.iter().position(|(r, _)| *r == Some(row)).unwrap_or(0);
    let end = lines
        .iter()
        .rposition(|(r, _)| *r == Some(row))
        .map_or(0, |n| n + 1);
    let mut top = usize::from(scroll).min(max);
    if first <= 1 {
        top = 0;
    } else if first < top {
        top = first;
    } else if end > top + view {
        top = end - view;
    }
    u16::try_from(top.min(max)).unwrap_or(u16::MAX)
}

/// The lines a page step moves by on a screen `height` rows high.
pub fn page(height: u16) -> usize {
    view_height(height).saturating_sub(2).max(1)
}

/// What the help overlay shows: opened from `from`, filtered by `filter`, scrolled by
/// `scroll` lines, the cursor on the `cursor`-th selectable row.
#[derive(Debug, Clone, Copy)]
pub struct HelpShown<'a> {
    /// The scope it was opened from.
    pub from: Scope,
    /// The text typed to filter it.
    pub filter: &'a str,
    /// Lines scrolled.
    pub scroll: u16,
    /// The selected row among the selectable ones.
    pub cursor: usize,
}

/// Draws the overlay.
pub fn draw(frame: &mut Frame, area: Rect, shown: HelpShown, theme: Theme) {
    let title = if shown.filter.is_empty() {
        "Keys · type to filter · Enter runs · Esc closes".to_string()
    } else {
        format!("Keys with \"{}▏\" · Enter runs · Esc clears", shown.filter)
    };
    let inner = dialog_box(frame, area, WIDTH, area.height, &title, theme);
    let rows = shown_rows(shown.from, shown.filter);
    let selected = selectable(&rows).get(shown.cursor).copied();
    let mut lines: Vec<Line> = layout(&rows, inner_width(area.width))
        .into_iter()
        .skip(usize::from(shown.scroll))
        .take(usize::from(inner.height))
        .map(|(row, line)| {
            let line = match line {
                HelpLine::Heading(title) => Line::styled(title, theme.focused()),
                HelpLine::Keys(keys, help) => {
                    Line::from(vec![Span::styled(keys, theme.key()), Span::raw(help)])
                }
                HelpLine::More(help) => Line::raw(format!("{}{help}", " ".repeat(KEYS_WIDTH))),
            };
            match row.is_some() && row == selected {
                true => line.patch_style(theme.cursor()),
                false => line,
            }
        })
        .collect();
    if rows.is_empty() {
        lines.push(Line::styled(
            "no key matches that (Bksp deletes)",
            theme.dim(),
        ));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// One line of the overlay.
enum HelpLine {
    Heading(&'static str),
    /// The keys (padded) and the start of what they do.
    Keys(String, String),
    /// More of a description, under its start.
    More(String),
}

/// The overlay's lines at `width` columns, each with the index of the row it shows
/// (`None` for headings): a description too long for its column wraps under itself, not
/// past the box's edge.
fn layout(rows: &[HelpRow], width: usize) -> Vec<(Option<usize>, HelpLine)> {
    let mut lines = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let Some((keys, help)) = row.text() else {
            if let HelpRow::Heading(title) = row {
                lines.push((None, HelpLine::Heading(title)));
            }
            continue;
        };
        let keys = format!("  {keys:<26}");
        let start = keys.width().max(KEYS_WIDTH);
        let mut parts = wrap(help, width.saturating_sub(start).max(12)).into_iter();
        lines.push((
            Some(index),
            HelpLine::Keys(keys, parts.next().unwrap_or_default()),
        ));
        lines.extend(parts.map(|part| (Some(index), HelpLine::More(part))));
    }
    lines
}

/// `text` in lines of at most `width` columns, broken between words (a word longer than
/// a line gets a line of its own).
pub(in crate::tui) fn wrap(text: &str, width: usize) -> Vec<String> {
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
