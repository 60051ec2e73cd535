//! The rows the compare view draws from a diff: a unified diff, the other side's own
//! lines (the template preview), or both sides aligned; and where the differences
//! start, for `]` / `[`.

use chatplate_core::diff::DiffLine;

use crate::tui::action::Direction;
use crate::tui::action::Pane;
use crate::tui::screen::Screen;

/// A row of the compare view: a line of the diff on the session's side, the other
/// side, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The diff line shown on the session's side (or the only one, unified).
    pub left: Option<usize>,
    /// The diff line shown on the other side, beside it.
    pub right: Option<usize>,
    /// Whether the row is part of a difference.
    pub changed: bool,
}

/// How the rows are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One column: removed and added lines in turn.
    Unified,
    /// One column: the other side's lines only, its changes marked (the preview).
    OtherOnly,
    /// Two columns: the session's lines beside the other side's, changes aligned.
    SideBySide,
}

/// The rows for `lines` in `layout`.
pub fn rows(lines: &[DiffLine], layout: Layout) -> Vec<Row> {
    let one = |index: usize| Row {
        left: Some(index),
        right: None,
        changed: lines[index].is_change(),
    };
    match layout {
        Layout::Unified => (0..lines.len()).map(one).collect(),
        Layout::OtherOnly => (0..lines.len())
            .filter(|&i| !matches!(lines[i], DiffLine::Removed(_)))
            .map(one)
            .collect(),
        Layout::SideBySide => side_by_side(lines),
    }
}

/// Same lines on both sides; in a run of changes, the removed lines beside the added.
fn side_by_side(lines: &[DiffLine]) -> Vec<Row> {
    let mut out = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        if !lines[index].is_change() {
            out.push(Row {
                left: Some(index),
                right: Some(index),
                changed: false,
            });
            index += 1;
            continue;
        }
        let end = (index..lines.len())
            .find(|&i| !lines[i].is_change())
            .unwrap_or(lines.len());
        let removed: Vec<usize> = (index..end)
            .filter(|&i| matches!(lines[i], DiffLine::Removed(_)))
            .collect();
        let added: Vec<usize> = (index..end)
            .filter(|&i| matches!(lines[i], DiffLine::Added(_)))
            .collect();
        for row in 0..removed.len().max(added.len()) {
            out.push(Row {
                left: removed.get(row).copied(),
                right: added.get(row).copied(),
                changed: true,
            });
        }
        index = end;
    }
    out
}

/// Rows where a difference starts.
pub fn difference_starts(rows: &[Row]) -> Vec<usize> {
    (0..rows.len())
        .filter(|&r| rows[r].changed && (r == 0 || !rows[r - 1].changed))
        .collect()
}

/// The next (or previous) difference: after the `current` one, else from the view's
/// `top`. Returns the first row to show and the difference's 0-based number; `None`
/// when there is no more in that direction.
pub fn next_difference(
    rows: &[Row],
    top: usize,
    current: Option<usize>,
    direction: Direction,
) -> Option<(usize, usize)> {
    let starts = difference_starts(rows);
    // A difference is shown two rows below the top, with context above it.
    let target = |row: usize| row.saturating_sub(2);
    let found = match (direction, current) {
        (Direction::Down, Some(current)) => Some(current + 1),
        (Direction::Up, Some(current)) => current.checked_sub(1),
        (Direction::Down, None) => starts.iter().position(|&s| target(s) >= top),
        (Direction::Up, None) => starts.iter().rposition(|&s| target(s) < top),
    }
    .filter(|&found| found < starts.len())?;
    Some((target(starts[found]), found))
}

/// The narrowest pane (inside its borders) that shows both sides side by side: two
/// columns of 38, enough for a chat template's lines to be recognisable. A 120-column
/// terminal gets there with the prompt pane zoomed (`z`).
pub const SIDE_BY_SIDE_MIN: u16 = 80;

/// The layout the shown side gets in the prompt pane's current width.
pub fn layout_for(screen: &Screen, preview: bool) -> Layout {
    let areas = crate::tui::layout::areas(screen);
    let width = areas
        .panes
        .iter()
        .find(|(pane, _)| *pane == Pane::Prompt)
        .map_or(0, |(_, rect)| rect.width.saturating_sub(2));
    match (width >= SIDE_BY_SIDE_MIN, preview) {
        (true, _) => Layout::SideBySide,
        (false, true) => Layout::OtherOnly,
        (false, false) => Layout::Unified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_core::diff::diff_lines;

    #[test]
    fn side_by_side_aligns_a_run_of_changes() {
        let lines = diff_lines("a\nb\nc\nd\n", "a\nB\nX\nd\n");
        let rows = rows(&lines, Layout::SideBySide);
        assert_eq!(rows.len(), 4, "a, b|B, c|X, d: {rows:?}");
        assert!(rows[1].changed && rows[1].left.is_some() && rows[1].right.is_some());
        assert_eq!(difference_starts(&rows), vec![1]);
    }

    #[test]
    fn the_preview_drops_the_sessions_lines_and_unified_keeps_both() {
        let lines = diff_lines("a\nb\n", "a\nc\n");
        assert_eq!(rows(&lines, Layout::OtherOnly).len(), 2);
        assert_eq!(rows(&lines, Layout::Unified).len(), 3);
    }

    #[test]
    fn next_difference_steps_both_ways_and_stops_at_the_ends() {
        let old: String = (0..30).map(|i| format!("{i}\n")).collect();
        let new = old.replace("10\n", "ten\n").replace("20\n", "twenty\n");
        let lines = diff_lines(&old, &new);
        let rows = rows(&lines, Layout::SideBySide);
        assert_eq!(
            next_difference(&rows, 0, None, Direction::Down),
            Some((8, 0))
        );
        assert_eq!(
            next_difference(&rows, 8, Some(0), Direction::Down),
            Some((18, 1))
        );
        assert_eq!(next_difference(&rows, 18, Some(1), Direction::Down), None);
        assert_eq!(
            next_difference(&rows, 18, Some(1), Direction::Up),
            Some((8, 0))
        );
        // After scrolling (no current difference), from the view's top.
        assert_eq!(
            next_difference(&rows, 12, None, Direction::Down),
            Some((18, 1))
        );
        assert_eq!(
            next_difference(&rows, 12, None, Direction::Up),
            Some((8, 0))
        );
    }
}
