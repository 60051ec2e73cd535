//! Drawing the prompt pane as a comparison: the session's render and the other side
//! (the template preview or the compare view's engine, template or expected prompt),
//! side by side when the pane is wide, else as a unified diff (the preview: its own
//! lines, the ones that differ marked). The worker made the diff; this only slices it.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;
use unicode_width::UnicodeWidthChar;

use chatplate_core::diff::{inline_pieces, pairs, DiffLine};
use chatplate_core::worker::comparing::Compared;
use chatplate_render::visible::{self, visible_whitespace};

use crate::tui::app::App;
use crate::tui::compare::rows;
use crate::tui::compare::rows::layout_for;
use crate::tui::compare::Layout;
use crate::tui::compare::OtherSide;
use crate::tui::compare::Row;
use crate::tui::compare::Shown;
use crate::tui::panes::messages::view::pane_block;
use crate::tui::panes::prompt::wrap::wrap;
use crate::tui::panes::prompt::wrap::WrapOptions;
use crate::tui::theme::Theme;

/// What the compare view draws.
#[derive(Debug)]
pub struct CompareView<'a> {
    /// The other side.
    pub side: &'a OtherSide,
    /// It is the template preview (else the compare view).
    pub preview: bool,
    /// The session's prompt, or its render error.
    pub session: Result<&'a str, &'a str>,
    /// The other side answers an older session, or a newer answer is on its way.
    pub waiting: bool,
    /// How the rows are laid out.
    pub layout: Layout,
    /// The colours.
    pub theme: Theme,
}

/// The compare view of the app's shown side, if one is shown.
pub fn view(app: &App) -> Option<CompareView<'_>> {
    let sides = app.sides();
    let side = sides.shown()?;
    let preview = sides.previewing();
    let session = match &app.preview().output {
        Ok(prompt) => Ok(&**prompt),
        Err(err) => Err(err.message.as_str()),
    };
    Some(CompareView {
        side,
        preview,
        session,
        waiting: side.asked.is_some() || side.answered < app.generation(),
        layout: layout_for(&app.screen(), preview),
        theme: app.theme(),
    })
}

/// Draws the pane into `area` (borders included).
pub fn draw(frame: &mut Frame, area: Rect, view: &CompareView, focused: bool) {
    let block = pane_block(&title(view), focused, view.theme);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let (width, height) = (usize::from(inner.width), usize::from(inner.height));
    let mut lines = vec![header(view, width)];
    let body = height.saturating_sub(1);
    match (view.side.answer(), &view.side.shown) {
        (Some(answer), _) if answer.render.result.is_ok() => {
            lines.extend(answer_rows(view, answer, width, body));
        }
        (Some(answer), _) => {
            let why = answer.render.result.as_ref().err().map(ToString::to_string);
            lines.extend(alone(
                view,
                &format!("✗ {}", why.unwrap_or_default()),
                width,
                body,
            ));
        }
        (None, Shown::Failed(why)) => lines.extend(alone(view, &format!("✗ {why}"), width, body)),
        (None, _) => lines.extend(alone(view, "… rendering", width, body)),
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

fn title(view: &CompareView) -> String {
    let label = view.side.choice.label();
    // The verdict first: a long label (a template path) is what 80 columns cut.
    let mut title = match (view.side.answer(), &view.side.shown) {
        (Some(answer), _) if answer.render.result.is_err() => "✗ ".to_string(),
        (Some(answer), _) => match answer.hunks() {
            0 => "same · ".to_string(),
            1 => "1 hunk differs · ".to_string(),
            n => format!("{n} hunks differ · "),
        },
        (None, Shown::Failed(_)) => "✗ ".to_string(),
        (None, _) => String::new(),
    };
    if view.waiting {
        title.push_str("… ");
    }
    if view.preview {
        title.push_str(&format!("preview: {label}"));
    } else {
        title.push_str(&format!("Prompt vs {label}"));
    }
    title
}

/// The first row: which side is which.
fn header(view: &CompareView, width: usize) -> Line<'static> {
    let theme = view.theme;
    let label = view.side.choice.label();
    // A typed source or a server is named by where it is; an engine by its version.
    let other = match (view.side.choice.source(), view.side.answer()) {
        (Some(source), _) => format!("{label} ({})", visible::for_terminal(source)),
        (None, Some(answer)) => format!("{label} ({})", answer.render.version),
        (None, None) => label,
    };
    let session = match view.session {
        Ok(_) => "session".to_string(),
        Err(why) => format!("session ✗ {why}"),
    };
    match view.layout {
        Layout::SideBySide => {
            let half = half_width(width);
            let mut spans = fit(vec![Span::styled(session, theme.removed())], half);
            spans.push(Span::styled(" │ ", theme.dim()));
            spans.extend(fit(vec![Span::styled(other, theme.added())], half));
            Line::from(spans)
        }
        Layout::Unified => Line::from(fit(
            vec![
                Span::styled(format!("- {session}  "), theme.removed()),
                Span::styled(format!("+ {other}"), theme.added()),
            ],
            width,
        )),
        Layout::OtherOnly => Line::styled("+ differs from the session's render", theme.dim()),
    }
}

fn half_width(width: usize) -> usize {
    width.saturating_sub(3) / 2
}

/// The other side has no prompt (yet): its state on its side, the session's render on
/// the session's.
fn alone(view: &CompareView, state: &str, width: usize, height: usize) -> Vec<Line<'static>> {
    let theme = view.theme;
    let session = view.session.unwrap_or_default();
    let session_lines = session.lines().skip(view.side.top);
    if view.layout == Layout::SideBySide {
        let half = half_width(width);
        let state: Vec<String> = chunks(state, half.max(1));
        return session_lines
            .map(Some)
            .chain(std::iter::repeat(None))
            .take(height)
            .enumerate()
            .map(|(row, left)| {
                let left = left.map_or(String::new(), visible_whitespace);
                let mut spans = fit(vec![Span::styled(left, theme.dim())], half);
                spans.push(Span::styled(" │ ", theme.dim()));
                let right = state.get(row).cloned().unwrap_or_default();
                spans.extend(fit(vec![Span::styled(right, theme.error())], half));
                Line::from(spans)
            })
            .collect();
    }
    let mut lines = vec![Line::styled(state.to_string(), theme.error())];
    lines.push(Line::styled("the session's render:", theme.dim()));
    lines.extend(
        session_lines
            .take(height)
            .map(|l| Line::styled(l.to_string(), theme.dim())),
    );
    lines
}

/// `text` cut into pieces of `width` characters.
fn chunks(text: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(width).map(|c| c.iter().collect()).collect()
}

/// The diff's rows from the scroll position.
fn answer_rows(
    view: &CompareView,
    answer: &Compared,
    width: usize,
    height: usize,
) -> Vec<Line<'static>> {
    let lines = answer.lines();
    let rows = rows(&lines, view.layout);
    let top = view.side.top.min(rows.len().saturating_sub(1));
    let shown = rows.iter().skip(top).take(height);
    if view.layout == Layout::SideBySide {
        return shown
            .map(|row| side_by_side(&lines, row, width, view.theme))
            .collect();
    }
    let partner = pairs(&lines);
    let styled = shown
        .filter_map(|row| row.left)
        .map(|index| {
            let line = match (lines[index], view.layout) {
                (DiffLine::Same(text), Layout::OtherOnly) => Line::from(vec![
                    Span::raw("  "),
                    Span::raw(text.trim_end_matches('\n').to_string()),
                ]),
                _ => crate::tui::panes::prompt::diff::diff_line(
                    &lines,
                    index,
                    partner[index],
                    view.theme,
                ),
            };
            (index, line)
        })
        .collect();
    wrap(
        styled,
        &WrapOptions {
            width,
            height,
            numbers: None,
            whitespace: false,
            theme: view.theme,
        },
    )
}

/// One row of two columns; the changed characters of a line replaced on the other side
/// are marked.
fn side_by_side(lines: &[DiffLine], row: &Row, width: usize, theme: Theme) -> Line<'static> {
    let half = half_width(width);
    let text = |index: Option<usize>| {
        index.map(|i| match lines[i] {
            DiffLine::Same(t) | DiffLine::Removed(t) | DiffLine::Added(t) => t,
        })
    };
    let (left, right) = (text(row.left), text(row.right));
    let mut spans = if row.changed {
        let (old, new) = inline_pieces(left.unwrap_or_default(), right.unwrap_or_default());
        let paired = left.is_some() && right.is_some();
        let mut spans = cell('-', left.map(|_| old), paired, theme.removed(), theme, half);
        spans.push(Span::styled(" │ ", theme.dim()));
        spans.extend(cell(
            '+',
            right.map(|_| new),
            paired,
            theme.added(),
            theme,
            half,
        ));
        spans
    } else {
        let plain = |t: Option<&str>| {
            let shown = t.unwrap_or_default().trim_end_matches('\n').to_string();
            fit(
                vec![Span::raw("  "), Span::styled(shown, theme.dim())],
                half,
            )
        };
        let mut spans = plain(left);
        spans.push(Span::styled(" │ ", theme.dim()));
        spans.extend(plain(right));
        spans
    };
    spans.retain(|span| !span.content.is_empty());
    Line::from(spans)
}

/// One side of a changed row: a sign and the pieces, whitespace made visible.
fn cell(
    sign: char,
    pieces: Option<Vec<chatplate_core::diff::Piece>>,
    paired: bool,
    style: Style,
    theme: Theme,
    width: usize,
) -> Vec<Span<'static>> {
    let Some(pieces) = pieces else {
        return fit(Vec::new(), width);
    };
    let mut spans = vec![Span::styled(format!("{sign} "), style)];
    for piece in pieces {
        let marked = visible_whitespace(&piece.text).replace(' ', "·");
        let piece_style = if piece.changed && paired {
            style.patch(theme.changed())
        } else {
            style
        };
        spans.push(Span::styled(marked.replace('\n', ""), piece_style));
    }
    fit(spans, width)
}

/// `spans` cut or padded to exactly `width` columns.
fn fit(spans: Vec<Span<'static>>, width: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let mut text = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width {
                break;
            }
            used += w;
            text.push(c);
        }
        out.push(Span::styled(text, span.style));
        if used >= width {
            break;
        }
    }
    out.push(Span::raw(" ".repeat(width - used)));
    out
}
