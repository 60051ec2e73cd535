//! The message log (`L`, like vim's `:messages`): every notice, warning and error the
//! status line showed, with the time it was shown, so that what the next key cleared or
//! 80 columns cut can be read again. Newest last; typing filters (case-insensitive, by
//! text); the selected entry is shown in full, wrapped, under the list.

use std::collections::VecDeque;

use jiff::civil::Time;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::tui::action::DialogAction;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::help;
use crate::tui::dialogs::view::dialog_box;
use crate::tui::dialogs::Dialog;
use crate::tui::keymap::Scope;
use crate::tui::panes::messages::view::{truncate, window_start};
use crate::tui::screen::Status;
use crate::tui::theme::Theme;

/// How many entries the log keeps: the oldest go first. A day of work is a few hundred.
pub const KEPT: usize = 1000;

/// One thing the status line said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// The local time it was (last) shown.
    pub at: Time,
    /// The text, whole.
    pub text: String,
    /// Shown as an error.
    pub error: bool,
    /// How many times in a row it was shown (one entry for a key pressed again).
    pub count: u32,
}

/// What the status line said this run, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageLog {
    entries: VecDeque<LogEntry>,
}

impl MessageLog {
    /// Keeps `status`, shown at `at`. Progress (a live search's count at every
    /// keystroke, "opening…") is not kept: what it ends in is. The same message shown
    /// again right after the last entry, or one that differs from it only in its numbers
    /// (`n` stepping through matches, `]` through changes), counts there instead of
    /// taking a new line, with the newest text.
    pub fn record(&mut self, status: &Status, at: Time) {
        if status.transient {
            return;
        }
        if let Some(last) = self.entries.back_mut() {
            if last.error == status.error && shape(&last.text) == shape(&status.text) {
                last.count = last.count.saturating_add(1);
                last.at = at;
                last.text.clone_from(&status.text);
                return;
            }
        }
        if self.entries.len() == KEPT {
            self.entries.pop_front();
        }
        self.entries.push_back(LogEntry {
            at,
            text: status.text.clone(),
            error: status.error,
            count: 1,
        });
    }

    /// [`MessageLog::record`] at the local time now.
    pub fn record_now(&mut self, status: &Status) {
        self.record(status, jiff::Zoned::now().time());
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &LogEntry> {
        self.entries.iter()
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was said yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The log dialog: a copy of the log when it was opened, the filter and the selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDialog {
    /// The entries, oldest first.
    pub entries: Vec<LogEntry>,
    /// What was typed to filter the entries.
    pub filter: String,
    /// The selected entry among those the filter shows.
    pub cursor: usize,
}

impl LogDialog {
    /// The log as it is now, with the newest entry selected.
    pub fn new(log: &MessageLog) -> Self {
        let entries: Vec<LogEntry> = log.entries().cloned().collect();
        let cursor = entries.len().saturating_sub(1);
        LogDialog {
            entries,
            filter: String::new(),
            cursor,
        }
    }

    /// The entries the filter keeps: every word typed is in the text (any case).
    pub fn shown(&self) -> Vec<&LogEntry> {
        let words: Vec<String> = self
            .filter
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.entries
            .iter()
            .filter(|entry| {
                let text = entry.text.to_lowercase();
                words.iter().all(|word| text.contains(word.as_str()))
            })
            .collect()
    }

    /// After the filter changed: the newest entry it keeps.
    fn refiltered(&mut self) {
        self.cursor = self.shown().len().saturating_sub(1);
    }
}

impl Dialog for LogDialog {
    fn scope(&self) -> Scope {
        Scope::Log
    }

    fn handle(&mut self, action: DialogAction, ctx: &mut DialogContext) -> bool {
        match action {
            DialogAction::Select(step) => {
                let page = usize::from(ctx.screen.height.saturating_sub(8)).max(1);
                self.cursor = help::step(self.cursor, self.shown().len(), page, step);
            }
            DialogAction::Type(c) => {
                self.filter.push(c);
                self.refiltered();
            }
            DialogAction::Backspace => {
                self.filter.pop();
                self.refiltered();
            }
            // Esc clears the filter first, as in the help.
            DialogAction::Cancel if !self.filter.is_empty() => {
                self.filter.clear();
                self.refiltered();
            }
            DialogAction::Cancel | DialogAction::Accept => return false,
            _ => {}
        }
        true
    }

    fn paste(&mut self, text: &str) {
        self.filter
            .push_str(text.lines().next().unwrap_or_default());
        self.refiltered();
    }

    fn draw(&self, frame: &mut Frame, area: Rect, _name: &str, theme: Theme) {
        draw(frame, area, self, theme);
    }
}

/// `text` with each run of digits as `#`: messages of one shape say the same thing
/// about another item.
fn shape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c.is_ascii_digit() {
            true if out.ends_with('#') => {}
            true => out.push('#'),
            false => out.push(c),
        }
    }
    out
}

/// `HH:MM:SS`.
fn clock(at: Time) -> String {
    format!("{:02}:{:02}:{:02}", at.hour(), at.minute(), at.second())
}

/// The mark before an entry: `✗` for an error, a space for a notice.
fn mark(entry: &LogEntry) -> &'static str {
    if entry.error {
        "✗"
    } else {
        "·"
    }
}

/// Draws the log: the filter, the list (one line per entry, cut), and the selected
/// entry whole under it.
fn draw(frame: &mut Frame, area: Rect, log: &LogDialog, theme: Theme) {
    let shown = log.shown();
    let title = format!(
        "Message log · {} of {} · type to filter · Esc close",
        shown.len(),
        log.entries.len()
    );
    let inner = dialog_box(frame, area, 120, area.height, &title, theme);
    let width = usize::from(inner.width);
    let mut lines = vec![Line::from(vec![
        Span::styled("filter: ", theme.dim()),
        Span::raw(log.filter.clone()),
        Span::styled("▏", theme.key()),
    ])];
    let selected = shown.get(log.cursor).copied();
    // The whole selected entry, wrapped: as many lines as it needs, up to half.
    let whole = selected.map_or_else(Vec::new, |entry| {
        let text = format!("{} {} {}", clock(entry.at), mark(entry), entry.text);
        wrap(&text, width)
    });
    let detail = whole.len().min(usize::from(inner.height) / 2);
    let rows = usize::from(inner.height).saturating_sub(2 + detail);
    let start = window_start(log.cursor, shown.len(), rows);
    for (index, entry) in shown.iter().enumerate().skip(start).take(rows) {
        let repeat = match entry.count {
            1 => String::new(),
            n => format!(" (×{n})"),
        };
        let text = format!("{} {} {}{repeat}", clock(entry.at), mark(entry), entry.text);
        let text = truncate(&text.replace(['\n', '\r'], " "), width);
        let line = match entry.error {
            true => Line::styled(text, theme.error()),
            false => Line::raw(text),
        };
        lines.push(match index == log.cursor {
            true => line.patch_style(theme.cursor()),
            false => line,
        });
    }
    match (log.entries.is_empty(), shown.is_empty()) {
        (true, _) => lines.push(Line::styled("nothing was said yet", theme.dim())),
        (false, true) => lines.push(Line::styled("no message contains that", theme.dim())),
        _ => {}
    }
    frame.render_widget(Paragraph::new(lines), inner);
    let Some(entry) = selected else {
        return;
    };
    let top = inner.y + inner.height.saturating_sub(detail as u16 + 1);
    let rule = Rect::new(inner.x, top, inner.width, 1);
    frame.render_widget(
        Paragraph::new(Line::styled("─".repeat(width), theme.dim())),
        rule,
    );
    let body = Rect::new(inner.x, top + 1, inner.width, detail as u16);
    let style = match entry.error {
        true => theme.error(),
        false => theme.key(),
    };
    let lines: Vec<Line> = whole.into_iter().map(|l| Line::styled(l, style)).collect();
    frame.render_widget(Paragraph::new(lines), body);
}

/// `text` in lines of at most `width` columns, broken at spaces (and inside a word
/// longer than a line); its own line breaks kept.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split(' ') {
            let used = line.width();
            if used > 0 && used + 1 + word.width() > width {
                lines.push(std::mem::take(&mut line));
            } else if used > 0 {
                line.push(' ');
            }
            for c in word.chars() {
                if line.width() + c.width().unwrap_or(0) > width {
                    lines.push(std::mem::take(&mut line));
                }
                line.push(c);
            }
        }
        lines.push(line);
    }
    lines
}
