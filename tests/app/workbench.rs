//! The workbench actions: paging, go to, find, undo / redo of list edits,
//! content states, zoom, the template filter behind `/`, help order and scrolling, the
//! diff's change keys, and snapshots of the new views at 80x24 and 120x40.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{
    Action, DialogAction, Direction, MessageAction, Pane, PromptAction, Step, TemplateAction,
};
use chatplate::tui::app::App;
use chatplate::tui::dialogs::Overlay;
use chatplate::tui::keymap::Scope;
use chatplate_core::session::{Expected, Message, Session};
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use serde_json::{json, Value as Json};
use tui_support::{app_for, ctrl, example_app, key, screen, type_text};

fn msg(action: MessageAction) -> Action {
    Action::Message(action)
}

/// A session of `count` alternating user / assistant messages on the default template.
fn long_app(dir: &std::path::Path, count: usize) -> App {
    let mut session = Session::new(chatplate_core::session::TemplateRef::Bundled(
        chatplate_core::catalog::DEFAULT_TEMPLATE.into(),
    ));
    session.messages.clear();
    for i in 0..count {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        session
            .messages
            .push(Message::new(role, &format!("message number {}", i + 1)));
    }
    app_for(session, dir)
}

fn type_line(app: &mut App, text: &str) {
    type_text(app, text);
    app.handle_key(key(KeyCode::Enter));
}

#[test]
fn paging_go_to_and_find_in_a_long_list() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = long_app(dir.path(), 1000);
    app.handle_key(key(KeyCode::PageDown));
    assert!(app.messages().selected > 1, "a page, not a line");
    app.handle_key(key(KeyCode::End));
    assert_eq!(app.messages().selected, 1000, "the settings row");
    app.handle_key(key(KeyCode::PageDown));
    assert_eq!(app.messages().selected, 1000, "no paging past the end");
    app.handle_key(key(KeyCode::Home));
    assert_eq!(app.messages().selected, 0);
    app.handle_key(key(KeyCode::Char(':')));
    type_line(&mut app, "777");
    assert_eq!(app.messages().selected, 776);
    app.handle_key(key(KeyCode::Char(':')));
    type_line(&mut app, "5000");
    assert_eq!(
        app.messages().selected,
        776,
        "an impossible number changes nothing"
    );
    assert!(app.status().is_some_and(|s| s.error));
    app.handle_key(key(KeyCode::Char('/')));
    type_line(&mut app, "number 99");
    assert_eq!(
        app.messages().selected,
        989,
        "the next match after 777 is 990"
    );
    app.handle_key(key(KeyCode::Char('n')));
    assert_eq!(app.messages().selected, 990);
    app.handle_key(key(KeyCode::Char('N')));
    assert_eq!(app.messages().selected, 989);
    app.handle_key(key(KeyCode::Char('N')));
    assert_eq!(app.messages().selected, 98, "wraps back to 99");
}

#[test]
fn find_matches_tool_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Char('/')));
    type_line(&mut app, "GET_WEATHER");
    assert_eq!(
        app.messages().selected,
        2,
        "the assistant's call, case-insensitive"
    );
}

#[test]
fn list_edits_undo_and_redo() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let original = app.workspace().session.clone();
    app.handle_key(key(KeyCode::Char('d')));
    app.handle_key(key(KeyCode::Char('J')));
    app.handle_key(key(KeyCode::Char('r')));
    app.handle_key(key(KeyCode::Char('c')));
    assert_eq!(app.workspace().session.messages.len(), 4);
    for _ in 0..4 {
        app.handle_key(key(KeyCode::Char('u')));
    }
    assert_eq!(app.workspace().session, original);
    assert_eq!(app.messages().selected, 0);
    app.handle_key(key(KeyCode::Char('U')));
    assert_eq!(
        app.workspace().session.messages.len(),
        3,
        "the delete is redone"
    );
    app.handle_key(ctrl('z'));
    assert_eq!(app.workspace().session, original);
    app.handle_key(key(KeyCode::Char('u')));
    assert!(app.status().is_some_and(|s| s.error), "nothing to undo");
}

#[test]
fn an_editor_visit_is_one_undo_step_and_tool_calls_are_undoable() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let original = app.workspace().session.clone();
    app.handle_key(key(KeyCode::Char('e')));
    type_text(&mut app, " more words");
    app.handle_key(key(KeyCode::Esc));
    app.handle_key(key(KeyCode::Char('u')));
    assert_eq!(app.workspace().session, original);
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.handle_key(key(KeyCode::Char('t')));
    assert_eq!(
        app.workspace().session.messages[2].0["tool_calls"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // `t` opened the new call's arguments editor; closing it leaves the call's fields.
    assert!(app.editor().is_some(), "the arguments editor");
    app.handle_key(key(KeyCode::Esc));
    app.handle_key(key(KeyCode::Char('x')));
    assert_eq!(
        app.workspace().session.messages[2].0["tool_calls"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    app.handle_key(key(KeyCode::Char('u')));
    app.handle_key(key(KeyCode::Char('u')));
    assert_eq!(app.workspace().session, original);
}

#[test]
fn long_sessions_undo_by_difference_and_history_stays_with_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = long_app(dir.path(), 2000);
    let original = app.workspace().session.clone();
    app.handle_key(key(KeyCode::Char(':')));
    type_line(&mut app, "1500");
    app.handle_key(key(KeyCode::Char('d')));
    app.handle_key(key(KeyCode::Char('R')));
    for _ in "user".chars() {
        app.handle_key(key(KeyCode::Backspace)); // the dialog starts with the role
    }
    type_line(&mut app, "critic");
    let edited = app.workspace().session.clone();
    assert_eq!(edited.messages.len(), 1999);
    assert_eq!(edited.messages[1499].role(), "critic", "R sets the role");
    app.handle_key(key(KeyCode::Char('u')));
    assert_eq!(
        app.workspace().session.messages[1499].role(),
        "user",
        "the role dialog is its own undo step"
    );
    app.handle_key(key(KeyCode::Char('u')));
    assert_eq!(app.workspace().session, original);
    assert_eq!(app.messages().selected, 1499);
    app.handle_key(key(KeyCode::Char('U')));
    app.handle_key(key(KeyCode::Char('U')));
    assert_eq!(app.workspace().session, edited);

    // Another session: undo must not splice the old session's messages into it.
    let other = example_app(dir.path()).into_workspace();
    let opened = other.session.clone();
    app.load(other);
    app.handle_key(key(KeyCode::Char('u')));
    assert_eq!(app.workspace().session, opened);
    assert!(
        app.status().is_some_and(|s| s.error),
        "nothing to undo in the opened session"
    );
}

#[test]
fn content_can_be_empty_null_or_missing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Char('0')));
    assert_eq!(
        app.workspace().session.messages[0].0.get("content"),
        Some(&Json::Null)
    );
    app.handle_key(key(KeyCode::Char('0')));
    assert_eq!(app.workspace().session.messages[0].0.get("content"), None);
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("1 sys   (no content)"), "{shown}");
    app.handle_key(key(KeyCode::Char('0')));
    assert_eq!(
        app.workspace().session.messages[0].0.get("content"),
        Some(&json!(""))
    );
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("1 sys   \"\""), "{shown}");
}

#[test]
fn tab_types_a_real_tab_in_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Char('e')));
    app.handle_key(key(KeyCode::Tab));
    type_text(&mut app, "x");
    let content = app.workspace().session.messages[0].0["content"]
        .as_str()
        .unwrap();
    assert!(content.ends_with("\tx"), "{content:?}");
}

#[test]
fn new_message_roles_follow_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Char('G')));
    app.handle_key(key(KeyCode::Char('k')));
    app.handle_key(key(KeyCode::Char('a')));
    assert_eq!(
        app.workspace().session.messages[4].role(),
        "assistant",
        "after a tool result"
    );
    let mut empty = Session::new(app.workspace().session.template.clone());
    empty.messages.clear();
    let mut app = app_for(empty, dir.path());
    app.handle_key(key(KeyCode::Char('a')));
    assert_eq!(
        app.workspace().session.messages[0].role(),
        "system",
        "one key to a system prompt"
    );
}

#[test]
fn template_letters_are_commands_and_the_filter_starts_with_a_slash() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Char('1')));
    assert_eq!(app.scope(), Scope::Templates);
    app.handle_key(key(KeyCode::Char('2')));
    assert_eq!(
        app.screen().focus,
        Pane::Messages,
        "2 is a focus key, not filter text"
    );
    app.handle_key(key(KeyCode::Char('1')));
    app.handle_key(key(KeyCode::Char('/')));
    assert_eq!(app.scope(), Scope::Filter);
    type_text(&mut app, "q2");
    assert_eq!(
        app.templates().filter,
        "q2",
        "while filtering, letters are text"
    );
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.scope(), Scope::Templates);
    assert!(app.templates().filter.is_empty());
    app.handle_key(key(KeyCode::End));
    let last = app.templates().visible().len() - 1;
    assert_eq!(app.templates().cursor, last);
}

#[test]
fn template_source_scrolling_stops_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Templates));
    for _ in 0..200 {
        app.update(Action::Template(TemplateAction::ScrollSource(
            Direction::Down,
        )));
    }
    let at_end = app.templates().source_top;
    app.update(Action::Template(TemplateAction::ScrollSource(
        Direction::Down,
    )));
    assert_eq!(app.templates().source_top, at_end);
    let shown = screen(&mut app, 80, 24);
    let last = app.workspace().template.source.lines().count();
    assert!(
        shown.contains(&format!("│ {last} ")),
        "the last line is on screen:\n{shown}"
    );
}

#[test]
fn help_starts_with_the_focused_pane_and_stops_at_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Prompt));
    app.handle_key(key(KeyCode::Char('?')));
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("│Prompt pane"), "{shown}");
    app.handle_key(key(KeyCode::End));
    let Some(&Overlay::Help { scroll: end, .. }) = app.overlay() else {
        panic!("help closed")
    };
    app.handle_key(key(KeyCode::PageDown));
    app.handle_key(key(KeyCode::Down));
    let Some(&Overlay::Help { scroll, .. }) = app.overlay() else {
        panic!("help closed")
    };
    assert_eq!(scroll, end, "no scrolling into blank space");
    let shown = screen(&mut app, 80, 24);
    assert!(
        !shown.contains(
            "│                                                                              │\n└"
        ),
        "{shown}"
    );
    app.update(Action::Dialog(DialogAction::Cancel));
    app.update(Action::Focus(Pane::Messages));
    app.handle_key(key(KeyCode::Char('e')));
    app.handle_key(key(KeyCode::F(1)));
    let shown = screen(&mut app, 120, 40);
    assert!(shown.contains("Field editor: text keys"), "{shown}");
}

#[test]
fn zoom_shows_one_pane() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Prompt));
    app.handle_key(key(KeyCode::Char('z')));
    let shown = screen(&mut app, 120, 40);
    assert!(!shown.contains("┌ Messages"), "{shown}");
    assert_snapshot!("zoom_120x40", shown);
    app.handle_key(key(KeyCode::Char('z')));
    assert!(screen(&mut app, 120, 40).contains("┌ Messages"));
}

fn diff_app(dir: &std::path::Path) -> App {
    let mut app = example_app(dir);
    app.update(Action::SaveExpected);
    app.handle_key(key(KeyCode::Esc)); // not saved now
    app.settle();
    let Some(Expected::Prompt(expected)) = app.workspace().session.expected.clone() else {
        panic!("no expected prompt")
    };
    // Two changes far apart: the system prompt and the tool result.
    let changed = expected
        .replace("helpful weather", "helpful  weather")
        .replace("\"cloudy\"", "\"sunny\"");
    app.edit_session(|session| session.expected = Some(Expected::Prompt(changed)));
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::ToggleDiff));
    app.settle();
    app
}

#[test]
fn diff_hunks_and_change_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = diff_app(dir.path());
    app.handle_key(key(KeyCode::Char('H')));
    let first = app.prompt().top;
    app.handle_key(key(KeyCode::Char(']')));
    assert!(app.prompt().top > first, "to the second change");
    app.handle_key(key(KeyCode::Char(']')));
    assert!(app.status().is_some_and(|s| s.error), "no third change");
    app.handle_key(key(KeyCode::Char('[')));
    assert_eq!(app.prompt().top, first);
    assert_snapshot!("diff_hunks_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("diff_hunks_120x40", screen(&mut app, 120, 40));
}

#[test]
fn prompt_line_numbers_and_wrap_marks() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::Focus(Pane::Prompt));
    app.update(Action::Prompt(PromptAction::Scroll(Step::First)));
    app.handle_key(key(KeyCode::Char('#')));
    app.handle_key(key(KeyCode::Char('w')));
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains(" 1 <|im_start|>system␊"), "{shown}");
    assert!(shown.contains('↪'), "{shown}");
    assert_snapshot!("prompt_numbers_80x24", shown);
    assert_snapshot!("prompt_numbers_120x40", screen(&mut app, 120, 40));
}

#[test]
fn footer_fits_and_shows_only_what_applies() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Enter));
    let shown = screen(&mut app, 80, 24);
    let footer = shown.lines().last().unwrap();
    assert!(footer.contains("? help"), "{footer}");
    assert!(
        !footer.contains("obj/str") && !footer.contains("remove"),
        "{footer}"
    );
    app.update(msg(MessageAction::LeaveFields));
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::EnterFields));
    for _ in 0..5 {
        app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    }
    let shown = screen(&mut app, 80, 24);
    let footer = shown.lines().last().unwrap();
    assert!(footer.contains("obj/str"), "on the arguments: {footer}");
}

#[test]
fn views_at_both_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = long_app(dir.path(), 1000);
    app.handle_key(key(KeyCode::End));
    app.handle_key(key(KeyCode::Char('k')));
    assert_snapshot!("long_list_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("long_list_120x40", screen(&mut app, 120, 40));
    app.update(Action::Focus(Pane::Templates));
    app.update(Action::Template(TemplateAction::ToggleWrap));
    assert_snapshot!("templates_cut_120x40", screen(&mut app, 120, 40));
    app.handle_key(key(KeyCode::Char('?')));
    assert_snapshot!("help_templates_80x24", screen(&mut app, 80, 24));
}
