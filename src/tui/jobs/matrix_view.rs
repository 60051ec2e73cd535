//! Drawing the engine matrix in the Prompt pane: the reference on top, one row per
//! engine with its verdict (`…` while its answer for the current session is on its
//! way), and the selected row's version and whole message below.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use chatplate_render::visible;

use crate::tui::jobs::matrix::{EngineMatrix, EngineRow, Verdict};
use crate::tui::panes::messages::view::{pane_block, truncate};
use crate::tui::theme::Theme;

/// The widest engine names' column (a plug-in's long name is cut).
const MAX_NAME_COLUMNS: usize = 16;

/// What the matrix view draws.
#[derive(Debug)]
pub struct MatrixView<'a> {
    /// The matrix.
    pub matrix: &'a EngineMatrix,
    /// The current session generation (rows that answer an older one wait).
    pub generation: u64,
    /// The session's render: its length in bytes, or its error.
    pub session: Result<usize, &'a str>,
    /// The colours.
    pub theme: Theme,
}

/// Draws the matrix into `area` (borders included).
pub fn draw(frame: &mut Frame, area: Rect, view: &MatrixView, focused: bool) {
    let block = pane_block(&title(view), focused, view.theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let theme = view.theme;
    let reference = match view.session {
        Ok(bytes) => format!("vs transformers (chatplate), {bytes} bytes"),
        Err(why) => format!("vs transformers (chatplate), which raises: {why}"),
    };
    let mut lines = vec![Line::styled(truncate(&reference, width), theme.dim())];
    let rows = view.matrix.rows();
    let names = rows.iter().map(|row| row.engine.name().chars().count());
    let columns = names.max().unwrap_or_default().min(MAX_NAME_COLUMNS);
    for (index, row) in rows.iter().enumerate() {
        let selected = index == view.matrix.cursor;
        lines.push(row_line(view, row, selected, (columns, width)));
    }
    lines.push(Line::raw(""));
    if let Some(row) = view.matrix.rows().get(view.matrix.cursor) {
        lines.extend(detail(view, row));
    }
    let hint = "Enter: diff · ↑/↓: row · Esc: close";
    lines.push(Line::styled(truncate(hint, width), theme.dim()));
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

/// The title: how many engines agree, differ, could not run, or are on their way.
fn title(view: &MatrixView) -> String {
    let rows = view.matrix.rows();
    let count = |test: &dyn Fn(&EngineRow) -> bool| rows.iter().filter(|row| test(row)).count();
    let waiting = count(&|row| row.waiting(view.generation));
    let verdict = |row: &EngineRow| {
        row.verdict
            .clone()
            .filter(|_| !row.waiting(view.generation))
    };
    let same = count(&|row| verdict(row).is_some_and(|v| v.agrees()));
    let not_run = count(&|row| verdict(row).is_some_and(|v| v.could_not_run()));
    let differ = count(&|row| verdict(row).is_some_and(|v| !v.agrees() && !v.could_not_run()));
    // What is on its way before what could not run: a narrow pane cuts the end.
    let mut title = format!("Engines: {same} same · {differ} differ");
    if waiting > 0 {
        title.push_str(&format!(" · {waiting} …"));
    }
    if not_run > 0 {
        title.push_str(&format!(" · {not_run} not run"));
    }
    title
}

/// One engine's line: the cursor, its name, its verdict (dimmed behind `…` while a
/// newer one is on its way).
fn row_line(
    view: &MatrixView,
    row: &EngineRow,
    selected: bool,
    (columns, width): (usize, usize),
) -> Line<'static> {
    let theme = view.theme;
    let marker = if selected { "▶ " } else { "  " };
    let name = format!("{:<columns$} ", truncate(row.engine.name(), columns));
    let mut spans = vec![
        Span::styled(marker.to_string(), theme.key()),
        Span::styled(
            name,
            if selected {
                theme.cursor()
            } else {
                Style::new()
            },
        ),
    ];
    let used = 2 + columns + 1;
    let waiting = row.waiting(view.generation);
    let (text, style) = match (&row.verdict, waiting) {
        (None, _) => ("…".to_string(), theme.dim()),
        (Some(verdict), true) => (format!("… {}", verdict.text()), theme.dim()),
        (Some(verdict), false) => (verdict.text(), verdict_style(verdict, theme)),
    };
    spans.push(Span::styled(
        truncate(&visible::message(&text), width.saturating_sub(used)),
        style,
    ));
    Line::from(spans)
}

fn verdict_style(verdict: &Verdict, theme: Theme) -> Style {
    match verdict {
        Verdict::Same | Verdict::BothRaise(_) => theme.added(),
        Verdict::CouldNotRun { .. } | Verdict::NoServer => theme.dim(),
        Verdict::Differs { .. } | Verdict::Error(_) | Verdict::RendersWhereReferenceRaises => {
            theme.error()
        }
    }
}

/// The selected row in full: its engine and version, and its whole verdict (an error
/// or a reason is cut in its row).
fn detail(view: &MatrixView, row: &EngineRow) -> Vec<Line<'static>> {
    let theme = view.theme;
    let version = match row.version.as_str() {
        "" => String::new(),
        version => format!(" ({})", visible::for_terminal(version)),
    };
    let mut lines = vec![Line::styled(
        format!("{}{version}", row.engine.name()),
        theme.key(),
    )];
    let text = match &row.verdict {
        None => "… rendering".to_string(),
        Some(verdict) => verdict.full(),
    };
    lines.push(Line::raw(visible::message(&text)));
    lines
}
