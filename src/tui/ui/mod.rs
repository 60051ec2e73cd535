//! The frame: tab line, the panes that fit, the status line, key hints and dialogs.
//!
//! Wide terminals (120+ columns) show all three panes; from 70 columns the prompt
//! shares the screen with the last focused other pane; below that one pane is shown at
//! a time and the tab line says which. Every size, however small, draws without panic.
//!
//! This is the one view that reads the [`App`]: it hands each pane's view, the dialogs
//! and the footer what they draw.

pub mod compare;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use chatplate_core::session::Expected;

use crate::tui::action::Pane;
use crate::tui::app::App;
use crate::tui::dialogs::view as dialog_view;
use crate::tui::files::workspace::FileProblem;
use crate::tui::footer::FooterView;
use crate::tui::jobs::matrix_view::{self, MatrixView};
use crate::tui::layout::areas;
use crate::tui::panes::messages::view as messages_view;
use crate::tui::panes::messages::view::truncate;
use crate::tui::panes::messages::view::MessagesView;
use crate::tui::panes::prompt::view as prompt_view;
use crate::tui::panes::prompt::view::PromptView;
use crate::tui::panes::templates::view as templates_view;
use crate::tui::panes::templates::view::TemplatesView;
use crate::tui::screen::Screen;

/// Draws the whole app.
pub fn draw(frame: &mut Frame, app: &App) {
    let size = frame.area();
    let screen = Screen {
        width: size.width,
        height: size.height,
        ..app.screen()
    };
    let areas = areas(&screen);
    frame.render_widget(Paragraph::new(tab_line(app, areas.tabs.width)), areas.tabs);
    for (pane, rect) in &areas.panes {
        let focused = *pane == app.screen().focus;
        match pane {
            Pane::Templates => templates_view::draw(frame, *rect, templates_view(app), focused),
            Pane::Messages => draw_messages(frame, *rect, app, focused),
            Pane::Prompt => match crate::tui::ui::compare::view(app) {
                Some(view) => crate::tui::ui::compare::draw(frame, *rect, &view, focused),
                None if app.matrix().is_open() => {
                    matrix_view::draw(frame, *rect, &matrix_view(app), focused);
                }
                None => prompt_view::draw(frame, *rect, &prompt_view(app), focused),
            },
        }
    }
    let status = status_line(app, areas.status.width);
    frame.render_widget(Paragraph::new(status), areas.status);
    frame.render_widget(
        Paragraph::new(crate::tui::footer::line(
            &footer_view(app),
            areas.footer.width,
        )),
        areas.footer,
    );
    if let Some(overlay) = app.overlay() {
        dialog_view::draw(frame, overlay, &app.workspace().name(), app.theme());
    }
}

fn draw_messages(frame: &mut Frame, area: Rect, app: &App, focused: bool) {
    // Asked for only for the rows on screen.
    let tokens_of = |index| app.message_tokens(index);
    // The one ⚠ flag: injected special tokens, or what the template needs changed.
    let injected = |index| app.injected(index) || !app.needs(index).is_empty();
    let unused = |row, field| app.unused_note(row, field);
    let view = MessagesView {
        pane: app.messages(),
        editor: app.editor(),
        session: &app.workspace().session,
        bytes: app.message_bytes(),
        tokens_of: &tokens_of,
        injected: &injected,
        round_trip: &|index| app.round_trip_of(index),
        turn_cost: &|index| app.turn_cost_cell(index),
        turn_total: app.turn_cost_title(),
        unused: &unused,
        tokens: app.shown_tokens(),
        needs: match app.messages().row(&app.workspace().session) {
            crate::tui::panes::messages::fields::Row::Message(index) => {
                let mut needs = app.needs(index);
                needs.extend(app.round_trip_note(index));
                needs
            }
            crate::tui::panes::messages::fields::Row::Settings => Vec::new(),
        },
        notes: (app.unchecked_note(app.messages().row(&app.workspace().session)))
            .into_iter()
            .collect(),
        theme: app.theme(),
    };
    messages_view::draw(frame, area, &view, focused);
}

fn footer_view(app: &App) -> FooterView<'_> {
    FooterView {
        scope: app.scope(),
        session: &app.workspace().session,
        messages: app.messages(),
        can_undo: app.workbench().can_undo(),
        finding: app.workbench().find.is_some(),
        diff: app.prompt().diff,
        template: app.templates().selected(),
        theme: app.theme(),
    }
}

fn prompt_view(app: &App) -> PromptView<'_> {
    let mut notes =
        crate::tui::jobs::attribution_view::title_note(app.attribution_state()).to_string();
    notes.push_str(&app.token_note());
    PromptView {
        pane: app.prompt(),
        preview: app.preview(),
        session: &app.workspace().session,
        missing_template: app.workspace().missing_label(),
        stale: app.is_stale(),
        anchor: app.prompt_anchor(),
        selected: app.selected_ranges(),
        cursor: app.cursor_range(),
        token_mode: app.token_mode_on(),
        tokens: app.shown_tokens().map(|t| &t.tokenized),
        // Token mode marks trained tokens; character mode the generation blocks.
        trained: match app.token_mode_on() {
            true => (app.shown_tokens().and_then(|t| t.mask.as_ref()))
                .map_or(&[], |mask| mask.trained.as_slice()),
            false => app.generation_spans(),
        },
        notes,
        theme: app.theme(),
    }
}

fn matrix_view(app: &App) -> MatrixView<'_> {
    MatrixView {
        matrix: app.matrix(),
        generation: app.generation(),
        session: match &app.preview().output {
            Ok(prompt) => Ok(prompt.len()),
            Err(err) => Err(err.message.as_str()),
        },
        theme: app.theme(),
    }
}

fn templates_view(app: &App) -> TemplatesView<'_> {
    TemplatesView {
        pane: app.templates(),
        in_use: &app.workspace().template,
        preview: app.preview(),
        theme: app.theme(),
    }
}

fn tab_line(app: &App, width: u16) -> Line<'static> {
    let mut spans = Vec::new();
    for (index, pane) in Pane::ALL.iter().enumerate() {
        let label = format!(" {} {} ", index + 1, pane.title());
        let style = if *pane == app.screen().focus {
            app.theme().cursor()
        } else {
            app.theme().dim()
        };
        spans.push(Span::styled(label, style));
    }
    let used: usize = spans.iter().map(|s| s.width()).sum();
    let info = format!(" {} · {}", app.title(), app.workspace().template.name);
    spans.push(Span::raw(truncate(
        &info,
        usize::from(width).saturating_sub(used),
    )));
    Line::from(spans)
}

fn status_line(app: &App, width: u16) -> Line<'static> {
    if let Some(status) = app.status() {
        let style = if status.error {
            app.theme().error()
        } else {
            app.theme().key()
        };
        return Line::styled(cut_notice(&status.text, usize::from(width)), style);
    }
    let render = match &app.preview().output {
        Ok(text) => Span::raw(format!("✓ {} bytes", text.len())),
        Err(_) if app.workspace().missing_template.is_some() => Span::styled(
            format!("✗ {}", app.workspace().missing_label().unwrap_or_default()),
            app.theme().error(),
        ),
        Err(err) => Span::styled(format!("✗ {}", err.kind.label()), app.theme().error()),
    };
    let expected = match (&app.workspace().session.expected, &app.preview().output) {
        (None, _) => Span::styled("no expected outcome", app.theme().dim()),
        (Some(Expected::Prompt(want)), Ok(got)) if want.as_str() == &**got => {
            Span::styled("matches expected", app.theme().added())
        }
        (Some(Expected::Error(want)), Err(err)) if err.matches_expected(want) => {
            Span::styled("fails as expected", app.theme().added())
        }
        (Some(Expected::Exception(want)), Err(err)) if err.matches_exception(want) => {
            Span::styled("fails as expected", app.theme().added())
        }
        (Some(_), _) => Span::styled("differs from expected", app.theme().error()),
    };
    // Beside the render it is about, before what may be cut at 80 columns.
    let mut spans = vec![render, Span::raw(" · ")];
    if let Some(note) = working_note(app) {
        spans.push(Span::styled(note, app.theme().key()));
        spans.push(Span::raw(" · "));
    }
    if app.double_bos().is_some() {
        // The whole sentence is `chatplate render`'s and lint's; the help names both.
        spans.push(Span::styled("⚠ double BOS", app.theme().error()));
        spans.push(Span::raw(" · "));
    }
    if let Some(problem) = template_file_note(app.workspace().template_file) {
        spans.push(Span::styled(problem, app.theme().error()));
        spans.push(Span::raw(" · "));
    }
    spans.push(expected);
    Line::from(spans)
}

/// What the worker has been computing for a second or more, and the key that stops it:
/// `attribution 12 s (Ctrl+T stops)`.
fn working_note(app: &App) -> Option<String> {
    let (kind, seconds) = app.working()?;
    let key = crate::tui::keymap::key_for(&crate::tui::action::Action::StopWork)
        .map(|key| format!(" ({key} stops)"))
        .unwrap_or_default();
    Some(format!("{} {seconds} s{key}", kind.what()))
}

/// `text` in `width` columns on one line: when it does not fit, cut with a pointer to
/// the message log, which keeps it whole (`… (L for the log)`).
pub fn cut_notice(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    let one_line = text.replace(['\n', '\r'], " ");
    if one_line.width() <= width {
        return one_line;
    }
    let pointer = crate::tui::keymap::key_for(&crate::tui::action::Action::MessageLog)
        .map(|key| format!(" ({key} for the log)"))
        .unwrap_or_default();
    // The pointer goes whole or not at all: on a very narrow screen, the text.
    let pointer = if pointer.width() + 10 <= width {
        pointer
    } else {
        String::new()
    };
    let mut cut = truncate(&one_line, width - pointer.width());
    cut.push_str(&pointer);
    cut
}

/// What the status line says while the template's file cannot be read again: lasting,
/// unlike the warning the reload gave, since the render uses what was read before.
fn template_file_note(problem: Option<FileProblem>) -> Option<&'static str> {
    match problem? {
        FileProblem::Deleted => Some("⚠ template deleted: last version in use"),
        FileProblem::Unreadable => Some("⚠ template unreadable: last version in use"),
    }
}
