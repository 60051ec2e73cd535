//! Pure state-update tests: actions in, state out. No terminal involved.

#![cfg(feature = "tui")]

use crate::tui_support;
use chatplate::tui::action::{
    Action, CopyTarget, DialogAction, Direction, MessageAction, Pane, PromptAction, Step,
};
use chatplate::tui::app::driver::{self, apply, press};
use chatplate::tui::context::Effect;
use chatplate::tui::dialogs::{Confirm, Overlay};
use chatplate::tui::panes::messages::fields::Field;
use chatplate_core::catalog::{Origin, TemplateSource};
use chatplate_core::session::{Expected, Session};
use chatplate_render::RenderErrorKind;
use crossterm::event::KeyCode;
use serde_json::json;
use tui_support::{ctrl, example_app, key, type_text};

fn msg(action: MessageAction) -> Action {
    Action::Message(action)
}

fn roles(app: &chatplate::tui::app::App) -> Vec<String> {
    app.workspace()
        .session
        .messages
        .iter()
        .map(|m| m.role().to_string())
        .collect()
}

#[test]
fn add_move_and_delete_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    assert!(!app.workspace().dirty);
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::Add));
    assert_eq!(
        roles(&app),
        ["system", "user", "assistant", "assistant", "tool"]
    );
    assert_eq!(app.messages().selected, 2);
    assert!(
        app.editor().is_some(),
        "a new message opens its content editor"
    );
    assert!(app.workspace().dirty);
    app.update(Action::Editor(chatplate::tui::action::EditorAction::Close));
    app.update(msg(MessageAction::Move(Direction::Up)));
    assert_eq!(app.messages().selected, 1);
    assert_eq!(app.workspace().session.messages[1].0["content"], json!(""));
    app.update(msg(MessageAction::Delete));
    assert_eq!(roles(&app), ["system", "user", "assistant", "tool"]);
    app.update(msg(MessageAction::Duplicate));
    assert_eq!(roles(&app), ["system", "user", "user", "assistant", "tool"]);
}

#[test]
fn typing_updates_the_prompt_live_and_undo_reverts() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Char('e')));
    type_text(&mut app, " Quickly!");
    app.settle();
    assert!(app
        .preview()
        .text()
        .contains("What's the weather in Paris? Quickly!<|im_end|>"));
    app.handle_key(ctrl('z'));
    let content = app.workspace().session.messages[1].0["content"].clone();
    assert_ne!(content, json!("What's the weather in Paris? Quickly!"));
    app.handle_key(ctrl('y'));
    assert_eq!(
        app.workspace().session.messages[1].0["content"],
        json!("What's the weather in Paris? Quickly!")
    );
}

#[test]
fn role_cycles_and_accepts_custom_strings() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Char('r')));
    assert_eq!(roles(&app)[1], "assistant");
    app.handle_key(key(KeyCode::Char('R')));
    for _ in 0.."assistant".len() {
        app.handle_key(key(KeyCode::Backspace));
    }
    type_text(&mut app, "developer");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(roles(&app)[1], "developer");
    assert!(app.overlay().is_none());
}

#[test]
fn invalid_json_keeps_the_last_good_value() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let tools_before = app.workspace().session.tools.clone();
    app.update(msg(MessageAction::Select(Step::Last)));
    app.update(msg(MessageAction::EnterFields));
    assert_eq!(
        app.messages().current_field(&app.workspace().session),
        Some(Field::Tools)
    );
    app.update(msg(MessageAction::EditField));
    app.handle_key(key(KeyCode::Char(',')));
    let editor = app.editor().expect("editor open");
    let error = editor.error.as_ref().expect("invalid JSON is reported");
    assert!(error.line.is_some() && error.column.is_some(), "{error:?}");
    assert_eq!(
        app.workspace().session.tools,
        tools_before,
        "good value kept"
    );
    // The first Esc refuses, the second drops the invalid text.
    app.handle_key(key(KeyCode::Esc));
    assert!(app.editor().is_some());
    app.handle_key(key(KeyCode::Esc));
    assert!(app.editor().is_none());
    assert_eq!(app.workspace().session.tools, tools_before);
}

#[test]
fn tool_call_arguments_are_validated_and_switch_form() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::EnterFields));
    while app.messages().current_field(&app.workspace().session) != Some(Field::CallArguments(0)) {
        app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    }
    app.update(msg(MessageAction::ToggleArgumentsForm));
    let arguments =
        &app.workspace().session.messages[2].0["tool_calls"][0]["function"]["arguments"];
    assert_eq!(arguments, &json!("{\"city\":\"Paris\"}"));
    app.update(msg(MessageAction::EditField));
    app.handle_key(key(KeyCode::Char('x')));
    assert!(app.editor().unwrap().error.is_some());
    let arguments =
        &app.workspace().session.messages[2].0["tool_calls"][0]["function"]["arguments"];
    assert_eq!(arguments, &json!("{\"city\":\"Paris\"}"));
}

/// A string the user wrote comes back as written after `o` twice, spacing and all.
#[test]
fn switching_arguments_back_keeps_the_user_s_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    let written = "{ \"city\" :  \"Paris\",\n  \"units\": \"C\" }";
    let arguments = |app: &chatplate::tui::app::App| {
        app.workspace().session.messages[2].0["tool_calls"][0]["function"]["arguments"].clone()
    };
    app.edit_session(|session| {
        session.messages[2].0["tool_calls"][0]["function"]["arguments"] = json!(written);
    });
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::EnterFields));
    while app.messages().current_field(&app.workspace().session) != Some(Field::CallArguments(0)) {
        app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    }
    app.update(msg(MessageAction::ToggleArgumentsForm));
    assert_eq!(arguments(&app), json!({"city": "Paris", "units": "C"}));
    app.update(msg(MessageAction::ToggleArgumentsForm));
    assert_eq!(arguments(&app), json!(written));
}

#[test]
fn tool_result_is_filled_from_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(msg(MessageAction::Select(Step::First)));
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::AddToolCall));
    app.update(msg(MessageAction::LeaveFields));
    app.update(msg(MessageAction::AddToolResult));
    let added = &app.workspace().session.messages[app.messages().selected];
    assert_eq!(added.role(), "tool");
    assert_eq!(added.0["tool_call_id"], json!("call_2"));
    assert_eq!(added.0["name"], json!("get_weather"));
    assert_eq!(app.messages().selected, 4, "after the existing result");
}

#[test]
fn render_errors_are_state() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.use_template(TemplateSource::new(
        "broken",
        "line one\n{% if %}",
        Origin::Inline,
    ));
    app.settle();
    let error = app.preview().error().expect("syntax error");
    assert_eq!(error.kind, RenderErrorKind::Syntax);
    assert_eq!(error.position.map(|p| p.line), Some(2));
    app.update(Action::Prompt(PromptAction::Copy(CopyTarget::Prompt)));
    assert!(app.status().unwrap().error);
}

#[test]
fn save_as_expected_then_save_and_reload() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(Action::SaveExpected);
    let rendered = app.preview().text().to_string();
    assert_eq!(
        app.workspace().session.expected,
        Some(Expected::Prompt(rendered))
    );
    assert!(app.workspace().dirty);
    // E on this untitled session asks for its name straight away.
    assert!(
        matches!(app.overlay(), Some(Overlay::Input(_))),
        "asks for a name"
    );
    type_text(&mut app, "golden");
    press(&mut app, key(KeyCode::Enter));
    let path = dir.path().join("golden.json");
    assert!(!app.workspace().dirty);
    let saved = Session::load(&path).unwrap();
    assert_eq!(saved, app.workspace().session);
}

#[test]
fn quit_guard_and_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    assert_eq!(
        app.update(Action::Quit),
        Some(Effect::Quit),
        "clean: quits at once"
    );
    app.update(msg(MessageAction::Select(Step::Line(Direction::Down))));
    app.update(msg(MessageAction::CycleRole));
    assert_eq!(app.update(Action::Quit), None);
    assert_eq!(app.overlay(), Some(&Overlay::Confirm(Confirm::Quit)));
    let written = driver::emergency_save(&mut app)
        .unwrap()
        .expect("a recovery file");
    let recovery = dir
        .path()
        .join(".untitled-bundled-qwen2.5-reasoning-tools.recovery.json");
    assert_eq!(std::path::PathBuf::from(written), recovery);
    // A new app offers the recovery file; accepting restores the change.
    let mut next = example_app(dir.path());
    assert!(matches!(
        next.overlay(),
        Some(Overlay::Confirm(Confirm::Restore(found))) if found.path == recovery
    ));
    apply(&mut next, Action::Dialog(DialogAction::Accept));
    assert_eq!(roles(&next)[1], "assistant");
    assert!(next.workspace().dirty);
    // Quitting without saving removes it.
    next.update(Action::Quit);
    assert_eq!(
        apply(&mut next, Action::Dialog(DialogAction::Discard)),
        Some(Effect::Quit)
    );
    assert!(!recovery.exists());
}

#[test]
fn focus_cycles_and_number_keys_jump() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.screen().focus, Pane::Prompt);
    app.handle_key(key(KeyCode::Char('1')));
    assert_eq!(app.screen().focus, Pane::Templates);
    // Letters are commands here; `/` starts the filter.
    type_text(&mut app, "/gemma");
    assert_eq!(app.templates().visible().len(), 1);
    app.handle_key(key(KeyCode::Enter));
    app.settle();
    assert_eq!(app.workspace().template.name, "gemma-3-tools");
    // Choosing a template returns focus to where the user was.
    assert_eq!(app.screen().focus, Pane::Prompt);
    assert!(app.preview().text().contains("<start_of_turn>"));
}

#[test]
fn template_file_changes_are_picked_up() {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("mine.jinja");
    std::fs::write(
        &template,
        "{% for m in messages %}[{{ m.role }}]{% endfor %}",
    )
    .unwrap();
    let mut app = app_on_template(&template);
    app.settle();
    assert_eq!(app.preview().text(), "[system][user][assistant][tool]");
    std::fs::write(
        &template,
        "{% for m in messages %}<{{ m.role }}>{% endfor %}!",
    )
    .unwrap();
    driver::tick(&mut app, std::time::Instant::now());
    app.settle();
    assert_eq!(app.preview().text(), "<system><user><assistant><tool>!");
    assert!(app.status().unwrap().text.contains("reloaded"));
}

/// A deleted template file is shown until it is back, not only until the next key.
#[test]
fn a_deleted_template_file_stays_flagged() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("mine.jinja");
    let source = "{% for m in messages %}[{{ m.role }}]{% endfor %}";
    std::fs::write(&template, source).unwrap();
    let mut app = app_on_template(&template);
    app.settle();
    let marker = "⚠ template deleted: last version in use";
    std::fs::remove_file(&template).unwrap();
    driver::tick(&mut app, Instant::now());
    assert!(app
        .status()
        .unwrap()
        .text
        .contains("template reload failed"));
    press(&mut app, key(KeyCode::Tab));
    assert!(app.status().is_none(), "the warning went with the key");
    let screen = tui_support::screen(&mut app, 80, 24);
    assert!(screen.contains(marker), "{screen}");
    assert_eq!(app.preview().text(), "[system][user][assistant][tool]");
    std::fs::write(&template, source).unwrap();
    driver::tick(&mut app, Instant::now() + Duration::from_secs(1));
    press(&mut app, key(KeyCode::Tab));
    assert!(!tui_support::screen(&mut app, 80, 24).contains("⚠ template"));
}

#[test]
fn tokenizer_config_brings_bos_and_eos() {
    use chatplate::tui::files::startup::open;
    use chatplate::tui::TuiOptions;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tokenizer_config.json");
    let source = "{{ bos_token }}{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}";
    let text =
        json!({"chat_template": source, "bos_token": "<s>", "eos_token": {"content": "</s>"}});
    std::fs::write(&config, text.to_string()).unwrap();
    let opened = open(&TuiOptions {
        file: Some(config),
        ..TuiOptions::default()
    })
    .unwrap();
    assert_eq!(opened.workspace.session.bos_token.as_deref(), Some("<s>"));
    assert_eq!(opened.workspace.session.eos_token.as_deref(), Some("</s>"));
}

#[test]
fn external_editor_result_is_validated_like_typing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    app.update(msg(MessageAction::Select(Step::Last)));
    app.update(msg(MessageAction::EnterFields));
    let effect = app.update(Action::ExternalEdit);
    assert!(matches!(
        effect,
        Some(Effect::EditExternally {
            suffix: ".json",
            ..
        })
    ));
    let before = app.workspace().session.tools.clone();
    app.update(Action::ExternalEdited("[{\"broken\": }]\n".into()));
    let error = app
        .editor()
        .as_ref()
        .and_then(|e| e.error.clone())
        .expect("error shown");
    assert_eq!((error.line, error.column), (Some(1), Some(13)));
    assert_eq!(app.workspace().session.tools, before);
    assert_eq!(app.editor().unwrap().text(), "[{\"broken\": }]");
    app.update(Action::ExternalEdited("[]".into()));
    assert_eq!(app.workspace().session.tools, Some(vec![]));
}

#[test]
fn save_as_expected_records_a_render_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    while !app.workspace().session.messages.is_empty() {
        app.update(msg(MessageAction::Delete));
    }
    app.settle();
    assert!(app.preview().error().is_some());
    app.update(Action::SaveExpected);
    let Some(Expected::Error(text)) = &app.workspace().session.expected else {
        panic!("expected an error outcome")
    };
    assert!(text.contains("empty conversation"));
}

#[test]
fn the_workers_copy_of_the_conversation_follows_every_kind_of_edit() {
    use chatplate_render::{CompiledTemplate, Limits};
    let dir = tempfile::tempdir().unwrap();
    let mut app = example_app(dir.path());
    // Typing sends single messages; structural and settings edits send everything.
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Char('e')));
    type_text(&mut app, " And Porto?");
    app.handle_key(key(KeyCode::Esc));
    app.update(msg(MessageAction::Duplicate));
    app.handle_key(key(KeyCode::Char('e')));
    type_text(&mut app, " Twice.");
    app.handle_key(key(KeyCode::Esc));
    app.update(msg(MessageAction::Select(Step::Last)));
    app.update(msg(MessageAction::EnterFields));
    app.update(msg(MessageAction::EditField));
    app.settle();
    let template = CompiledTemplate::compile(&app.workspace().template.source, Limits::default());
    let conversation = app.workspace().session.conversation().unwrap();
    let fresh = template.unwrap().render(&conversation).unwrap();
    assert_eq!(app.preview().text(), fresh);
    assert!(fresh.contains("And Porto? Twice."));
}

/// The app as `chatplate TEMPLATE` opens it.
fn app_on_template(template: &std::path::Path) -> chatplate::tui::app::App {
    use chatplate::tui::files::startup::{open, Opened};
    let options = chatplate::tui::TuiOptions {
        file: Some(template.to_path_buf()),
        ..chatplate::tui::TuiOptions::default()
    };
    let Opened {
        workspace, catalog, ..
    } = open(&options).unwrap();
    chatplate::tui::app::App::new(workspace, catalog)
}
