//! A session saved on a template from `--templates DIR` outside the session's folder, on
//! the real binary in a pty: the app asks before writing a reference `chatplate check`
//! would refuse; allowing the folder (the config file's `template_roots`) makes the saved
//! fixture pass `check` from the same folder and open again on its template; writing the
//! template's text instead makes a fixture that needs no root at all.

#![cfg(feature = "tui")]
#![cfg(unix)]

use crate::e2e_support;
use std::path::PathBuf;
use std::process::Command;

use chatplate_core::session::{Session, TemplateRef};
use e2e_support::{Launch, Tui};

const TEMPLATE: &str = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}";

/// A project folder and, beside it, a folder with one template, `mine.jinja`.
struct Setup {
    _root: tempfile::TempDir,
    project: PathBuf,
    templates: PathBuf,
    config: PathBuf,
}

fn setup() -> Setup {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    let templates = root.path().join("templates");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(templates.join("mine.jinja"), TEMPLATE).unwrap();
    let config = root.path().join("config/config.json");
    Setup {
        project,
        templates,
        config,
        _root: root,
    }
}

/// `chatplate ARGS` in the project, with the setup's config file.
fn launch(setup: &Setup, args: &[&str]) -> Tui {
    let config = setup.config.to_string_lossy().into_owned();
    let env = [("CHATPLATE_CONFIG", config.as_str())];
    Tui::launch(
        &setup.project,
        &Launch {
            env: &env,
            ..Launch::args(args)
        },
    )
}

/// Uses `mine` from the Templates pane, stores the render as expected and saves as
/// `sessions/a.json`, which brings up the template question.
fn save_on_mine(setup: &Setup) -> Tui {
    let templates = setup.templates.to_string_lossy().into_owned();
    let mut tui = launch(setup, &["--templates", &templates]);
    tui.wait_for("the first frame", |s| s.contains("<|im_start|>"));
    tui.send("1");
    tui.wait_for("the templates pane", |s| s.contains("mine"));
    tui.send("\x1b[F"); // End: the last template, mine
    tui.send("\r");
    tui.wait_for("the render on mine", |s| s.contains("<user>"));
    tui.send("E"); // on an untitled session, asks for the name
    tui.wait_for("the expected prompt and the save dialog", |s| {
        s.contains("expected prompt set") && s.contains("Save session as")
    });
    tui.send("a\r");
    tui.wait_for("the template question", |s| s.contains("Template outside"));
    tui
}

fn check(setup: &Setup, env_config: bool) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_chatplate"));
    command
        .args(["check", "sessions/"])
        .current_dir(&setup.project);
    let config = match env_config {
        true => setup.config.clone(),
        false => setup.project.join("no-config.json"),
    };
    command.env("CHATPLATE_CONFIG", config);
    command.output().expect("run chatplate check")
}

fn saved(setup: &Setup) -> Session {
    Session::load(&setup.project.join("sessions/a.json")).expect("the saved session")
}

#[test]
fn allowing_the_folder_saves_a_fixture_that_checks_and_reopens() {
    let setup = setup();
    let mut tui = save_on_mine(&setup);
    tui.send("y");
    tui.wait_for("the save", |s| s.contains("saved sessions/a.json"));
    tui.send("\x11");
    assert_eq!(tui.wait_exit(), 0);

    let TemplateRef::Path(path) = saved(&setup).template else {
        panic!("not a path: {:?}", saved(&setup).template)
    };
    assert!(path.ends_with("templates/mine.jinja"), "{path}");
    let config = std::fs::read_to_string(&setup.config).unwrap();
    assert!(config.contains("template_roots"), "{config}");

    let run = check(&setup, true);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(out.contains("1 passed"), "{out}");
    // Without the config file's root, `check` says what to allow, as the app would.
    let refused = check(&setup, false);
    let out = String::from_utf8_lossy(&refused.stdout);
    assert!(!refused.status.success(), "{out}");
    let real = std::fs::canonicalize(&setup.templates).unwrap();
    assert!(out.contains("leads outside sessions"), "{out}");
    assert!(out.contains(&format!("allow {}", real.display())), "{out}");

    let mut again = launch(&setup, &["sessions/a.json"]);
    again.wait_for("the session on its template", |s| {
        s.contains("a.json · mine") && s.contains("matches expected")
    });
}

#[test]
fn the_template_text_instead_needs_no_root_and_esc_saves_nothing() {
    let setup = setup();
    let mut tui = save_on_mine(&setup);
    tui.send("\x1b");
    tui.wait_for("the question gone", |s| !s.contains("Template outside"));
    assert!(
        !setup.project.join("sessions/a.json").exists(),
        "Esc saves nothing"
    );
    tui.send("\x13");
    tui.wait_for("the save dialog", |s| s.contains("Save session as"));
    tui.send("a\r");
    tui.wait_for("the template question", |s| s.contains("Template outside"));
    tui.send("n");
    tui.wait_for("the save", |s| s.contains("saved sessions/a.json"));
    assert_eq!(saved(&setup).template, TemplateRef::Source(TEMPLATE.into()));
    assert!(!setup.config.exists(), "no root allowed");
    let run = check(&setup, true);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
    // Saving again keeps the text and asks nothing.
    tui.send("2");
    tui.wait_for("the status cleared", |s| !s.contains("saved sessions/"));
    tui.send("\x13");
    tui.wait_for("the second save", |s| s.contains("saved sessions/a.json"));
    assert!(!tui.screen().contains("Template outside"));
    assert_eq!(saved(&setup).template, TemplateRef::Source(TEMPLATE.into()));
}
