//! The prompt pane's diff against the expected prompt: the whole prompt or only the
//! changes with context (`H`), `]` / `[` to the next / previous change, the changed
//! characters of a replaced line highlighted, and every space and tab of a changed line
//! made visible.

use ratatui::text::{Line, Span};

use chatplate_core::diff::{diff_lines, inline_pieces, pairs, DiffLine};
use chatplate_core::session::Expected;
use chatplate_render::visible::visible_whitespace;

use crate::tui::action::Direction;

use crate::tui::action::Pane;

use crate::tui::action::Step;
use crate::tui::context::PaneContext;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::preview::Preview;
use crate::tui::theme::Theme;

/// Unchanged lines kept around each change in the hunk view.
const CONTEXT: usize = 3;

/// A row of the diff view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffRow {
    /// Line `n` of the diff.
    Line(usize),
    /// Unchanged lines left out (hunk view).
    Gap(usize),
}

/// The rows shown: every line, or changes with [`CONTEXT`] lines around them.
pub fn rows(lines: &[DiffLine], hunks: bool) -> Vec<DiffRow> {
    if !hunks {
        return (0..lines.len()).map(DiffRow::Line).collect();
    }
    let mut near = vec![false; lines.len()];
    for (index, line) in lines.iter().enumerate() {
        if line.is_change() {
            let from = index.saturating_sub(CONTEXT);
            let to = (index + CONTEXT + 1).min(lines.len());
            near[from..to].iter_mut().for_each(|n| *n = true);
        }
    }
    let mut out = Vec::new();
    let mut gap = 0;
    for (index, keep) in near.into_iter().enumerate() {
        if keep {
            if gap > 0 {
                out.push(DiffRow::Gap(gap));
                gap = 0;
            }
            out.push(DiffRow::Line(index));
        } else {
            gap += 1;
        }
    }
    if gap > 0 {
        out.push(DiffRow::Gap(gap));
    }
    out
}

/// Rows where a run of changes starts.
fn change_starts(lines: &[DiffLine], rows: &[DiffRow]) -> Vec<usize> {
    let changed = |row: &DiffRow| matches!(row, DiffRow::Line(i) if lines[*i].is_change());
    (0..rows.len())
        .filter(|&r| changed(&rows[r]) && (r == 0 || !changed(&rows[r - 1])))
        .collect()
}

/// The expected prompt, when the session has one.
fn expected_prompt(expected: Option<&Expected>) -> Option<&str> {
    match expected {
        Some(Expected::Prompt(text)) => Some(text),
        _ => None,
    }
}

impl PromptPane {
    /// The row to open the diff at: two rows above the first change.
    pub fn first_change_row(&self, expected: Option<&Expected>, preview: &Preview) -> usize {
        let Some(expected) = expected_prompt(expected) else {
            return 0;
        };
        let lines = diff_lines(expected, preview.text());
        let rows = rows(&lines, self.hunks);
        change_starts(&lines, &rows)
            .first()
            .map_or(0, |row| row.saturating_sub(2))
    }

    pub(in crate::tui) fn scroll_diff(&mut self, ctx: &PaneContext, step: Step) {
        let Some(expected) = expected_prompt(ctx.workspace.session.expected.as_ref()) else {
            return;
        };
        let count = rows(&diff_lines(expected, ctx.preview.text()), self.hunks).len();
        // The summary line takes one row.
        let height =
            (crate::tui::layout::pane_height(&ctx.screen, Pane::Prompt).saturating_sub(1)).max(1);
        let last = count.saturating_sub(height);
        let top = self.top.unwrap_or(0).min(last);
        self.top = Some(crate::tui::dialogs::help::step(top, last + 1, height, step));
    }

    pub(in crate::tui) fn next_change(&mut self, ctx: &mut PaneContext, direction: Direction) {
        if !self.diff {
            return ctx.warn("not in the diff: press D first");
        }
        let Some(expected) = expected_prompt(ctx.workspace.session.expected.as_ref()) else {
            return;
        };
        let lines = diff_lines(expected, ctx.preview.text());
        let rows = rows(&lines, self.hunks);
        let starts = change_starts(&lines, &rows);
        let top = self.top.unwrap_or(0);
        let target = |row: &usize| row.saturating_sub(2);
        let found = match direction {
            Direction::Down => starts.iter().map(target).find(|&t| t > top),
            Direction::Up => starts.iter().map(target).rev().find(|&t| t < top),
        };
        match found {
            Some(row) => {
                let index = starts.iter().position(|s| target(s) == row).unwrap_or(0);
                self.top = Some(row);
                ctx.notify(format!("change {} of {}", index + 1, starts.len()));
            }
            None => ctx.warn(match starts.len() {
                0 => "no changes".to_string(),
                n => format!("no more changes ({n} in all)"),
            }),
        }
    }

    pub(in crate::tui) fn toggle_hunks(&mut self, ctx: &mut PaneContext) {
        self.hunks = !self.hunks;
        let expected = ctx.workspace.session.expected.as_ref();
        self.top = Some(self.first_change_row(expected, ctx.preview));
        ctx.notify(if self.hunks {
            "diff: changes with context"
        } else {
            "diff: the whole prompt"
        });
    }
}

/// The diff of `app::pane` (the shown render against the `expected` outcome) as screen lines:
/// a summary, then the rows from the scroll position.
pub fn view(
    pane: &PromptPane,
    expected: Option<&Expected>,
    preview: &Preview,
    theme: Theme,
    height: usize,
) -> Vec<Line<'static>> {
    let expected = match expected {
        Some(Expected::Prompt(text)) => text,
        Some(Expected::Error(text)) => {
            return vec![
                Line::raw(format!("expected an error containing {text:?}")),
                outcome_line(preview, theme),
            ];
        }
        Some(Expected::Exception(text)) => {
            return vec![
                Line::raw(format!("expected the exception {text:?}")),
                outcome_line(preview, theme),
            ];
        }
        None => {
            return vec![Line::styled(
                "no expected prompt (press E to set it)",
                theme.dim(),
            )]
        }
    };
    let lines = diff_lines(expected, preview.text());
    let rows = rows(&lines, pane.hunks);
    let partner = pairs(&lines);
    let changed = lines.iter().filter(|d| d.is_change()).count();
    let mode = if pane.hunks { "hunks" } else { "whole" };
    let summary = match (changed, &preview.output) {
        (_, Err(_)) => outcome_line(preview, theme),
        (0, _) => Line::styled("✓ matches the expected prompt", theme.added()),
        (n, _) => Line::styled(
            format!(
                "✗ {n} {} (- expected, + rendered) · {mode}",
                if n == 1 {
                    "line differs"
                } else {
                    "lines differ"
                }
            ),
            theme.error(),
        ),
    };
    let top = pane.top.unwrap_or(0).min(rows.len().saturating_sub(1));
    let body = rows.iter().skip(top).take(height).map(|row| match *row {
        DiffRow::Gap(n) => {
            let noun = if n == 1 { "line" } else { "lines" };
            Line::styled(format!("  ⋯ {n} unchanged {noun}"), theme.dim())
        }
        DiffRow::Line(index) => diff_line(&lines, index, partner[index], theme),
    });
    std::iter::once(summary).chain(body).collect()
}

pub(in crate::tui) fn diff_line(
    lines: &[DiffLine],
    index: usize,
    partner: Option<usize>,
    theme: Theme,
) -> Line<'static> {
    let (sign, text, style) = match lines[index] {
        DiffLine::Same(t) => {
            return Line::from(vec![
                Span::styled("  ", theme.dim()),
                Span::styled(visible_whitespace(t), theme.dim()),
            ])
        }
        DiffLine::Removed(t) => ('-', t, theme.removed()),
        DiffLine::Added(t) => ('+', t, theme.added()),
    };
    let mut spans = vec![Span::styled(format!("{sign} "), style)];
    let pieces = match partner.map(|p| lines[p]) {
        Some(DiffLine::Added(new)) => inline_pieces(text, new).0,
        Some(DiffLine::Removed(old)) => inline_pieces(old, text).1,
        _ => inline_pieces(text, "").0,
    };
    for piece in pieces {
        let piece_style = if piece.changed && partner.is_some() {
            style.patch(theme.changed())
        } else {
            style
        };
        spans.push(Span::styled(all_whitespace(&piece.text), piece_style));
    }
    Line::from(spans)
}

/// Every space, tab and line end of a changed line as a mark (`·`, `→`, `␊`).
fn all_whitespace(text: &str) -> String {
    let marked = visible_whitespace(text).replace(' ', "·");
    marked.trim_end_matches('\n').to_string()
}

fn outcome_line(preview: &Preview, theme: Theme) -> Line<'static> {
    match &preview.output {
        Ok(_) => Line::styled("✗ but the template rendered a prompt", theme.error()),
        Err(err) => Line::styled(format!("render failed: {}", err.message), theme.error()),
    }
}

#[cfg(test)]
mod tests {
    use super::{rows, DiffRow};
    use chatplate_core::diff::diff_lines;

    #[test]
    fn hunks_keep_context_and_count_the_gaps() {
        let old: String = (0..20).map(|i| format!("{i}\n")).collect();
        let new = old.replace("10\n", "ten\n");
        let lines = diff_lines(&old, &new);
        let shown = rows(&lines, true);
        assert_eq!(shown.first(), Some(&DiffRow::Gap(7)));
        assert_eq!(shown.last(), Some(&DiffRow::Gap(6)));
        assert_eq!(shown.len(), 2 + 3 + 2 + 3);
        assert_eq!(rows(&lines, false).len(), 21);
    }
}
