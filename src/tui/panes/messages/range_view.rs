//! Drawing the range mode: the block's rows carry a bar after their number (so it shows
//! without colour too), and the lower half of the pane lists what can be done with the
//! block, from the key table.

use std::ops::RangeInclusive;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use crate::tui::keymap;
use crate::tui::keymap::Scope;
use crate::tui::panes::messages::view::truncate;
use crate::tui::theme::Theme;

/// The bar that marks a row of the block.
pub const BAR: &str = "┃";

/// Marks a message row of the block: the bar in place of the space after its number.
pub fn mark_row(mut line: Line<'static>, in_block: bool, theme: Theme) -> Line<'static> {
    if !in_block {
        return line;
    }
    if let Some(number) = line.spans.first_mut() {
        let text = number.content.trim_end().to_string();
        *number = Span::styled(format!("{text}{BAR}"), theme.key());
    }
    line.patch_style(theme.selected_span())
}

/// The pane title with the block: `Messages · 3–7 (5)`.
pub fn title(block: Option<&RangeInclusive<usize>>) -> String {
    match block {
        Some(block) => format!(
            "Messages · block {}–{} ({})",
            block.start() + 1,
            block.end() + 1,
            block.clone().count()
        ),
        None => "Messages".into(),
    }
}

/// What can be done with the block: the range mode's keys, one a line.
pub fn draw_keys(frame: &mut Frame, area: Rect, count: usize, theme: Theme) {
    let heading = format!(" a block of {count} of the messages ");
    let frame_block = Block::default()
        .borders(Borders::TOP)
        .title(Span::styled(heading, theme.dim()));
    let inner = frame_block.inner(area);
    frame.render_widget(frame_block, area);
    let width = usize::from(inner.width);
    let rows = keymap::table().iter().filter(|b| b.scope == Scope::Range);
    let mut lines: Vec<Line> = rows
        .filter(|b| !b.keys.is_empty())
        .map(|b| {
            let keys: Vec<String> = b.keys.iter().map(|k| k.label()).collect();
            let keys = format!("{:<10} ", keys.join(" "));
            let room = width.saturating_sub(keys.chars().count());
            Line::from(vec![
                Span::styled(keys, theme.key()),
                Span::raw(truncate(b.help, room)),
            ])
        })
        .collect();
    let paste = "paste JSON messages: after it";
    lines.insert(0, Line::styled(truncate(paste, width), theme.dim()));
    frame.render_widget(Paragraph::new(lines), inner);
}
