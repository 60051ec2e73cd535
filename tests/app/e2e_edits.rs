//! Edits are never lost and the app never freezes, on the real binary in a pty: a
//! runaway template while typing, recovery files kept for later, keyed to what was
//! opened, sessions changed on disk, missing templates, pasted line breaks, Esc and
//! Ctrl+S in one read, an external editor that changes nothing, copying inside tmux.

#![cfg(feature = "tui")]
#![cfg(unix)]

use crate::e2e_support;
use std::path::Path;
use std::time::{Duration, Instant};

use chatplate_core::session::{Session, TemplateRef};
use e2e_support::{message_content, weather_session, Launch, Tui, DEADLINE};

/// A session in `dir/sessions/` on template `reference`, with the weather messages.
fn session_on(dir: &Path, name: &str, reference: TemplateRef) -> std::path::PathBuf {
    let file = weather_session(dir);
    let mut session = Session::load(&file).unwrap();
    session.template = reference;
    let path = dir.join("sessions").join(name);
    session.save(&path).unwrap();
    path
}

#[test]
fn a_runaway_template_never_freezes_typing_and_threads_stay_bounded() {
    let dir = tempfile::tempdir().unwrap();
    // A loop far longer than the two-second deadline: the step budget is raised with
    // --fuel so that only the deadline can stop it.
    let slow = "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}\
                {% for m in messages %}{{ m.content }}{% endfor %}";
    std::fs::create_dir_all(dir.path().join("sessions")).unwrap();
    std::fs::write(dir.path().join("sessions/slow.jinja"), slow).unwrap();
    session_on(
        dir.path(),
        "slow.json",
        TemplateRef::Path("slow.jinja".into()),
    );
    let mut tui = Tui::launch(
        dir.path(),
        &Launch::args(&["--fuel", "100000000000", "sessions/slow.json"]),
    );
    tui.wait_for("the first frame", |s| s.contains("slow.json"));
    tui.edit_user_message();
    // Twenty keystrokes, each echoed while renders time out behind them. Before the
    // worker each one froze the app for the two-second deadline.
    let started = Instant::now();
    let mut most_threads = 0;
    for n in 1..=20 {
        tui.send("k");
        let (typed, more) = ("k".repeat(n), "k".repeat(n + 1));
        tui.wait_for("the keystroke's echo", |s| {
            s.contains(&typed) && !s.contains(&more)
        });
        most_threads = most_threads.max(tui.threads());
    }
    assert!(
        started.elapsed() < DEADLINE,
        "20 keystrokes took {:?}",
        started.elapsed()
    );
    tui.wait_for("the timeout in the prompt pane", |s| {
        s.contains("timed out")
    });
    most_threads = most_threads.max(tui.threads());
    // UI, input, signals, hang-up watch, dispatcher, runner, the render in flight, one
    // abandoned render, and up to 4 idle render threads kept for reuse
    // (render/threads.rs MAX_IDLE): 12 at most, whatever the number of keystrokes.
    // Before the worker every keystroke left one more thread (3 -> 13 after ten keys,
    // so 23 after these twenty).
    assert!(most_threads <= 12, "{most_threads} threads");
}

#[test]
fn decide_later_keeps_the_recovery_file_and_new_edits_go_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = weather_session(dir.path());
    let mut earlier = Session::load(&file).unwrap();
    earlier.messages[0].0["content"] = "KEPT FOR LATER".into();
    let kept = dir.path().join("sessions/weather.recovery.json");
    earlier.save(&kept).unwrap();
    let kept_bytes = std::fs::read(&kept).unwrap();

    let mut tui = Tui::start(dir.path(), "sessions/weather.json");
    tui.wait_for("the restore question", |s| {
        s.contains("Recovery file found") && s.contains("4 messages")
    });
    tui.send("\x1b"); // Esc: decide later
    tui.wait_for("the question gone", |s| s.contains("offered again"));
    tui.edit_user_message();
    tui.send(" later");
    let second = dir.path().join("sessions/weather~2.recovery.json");
    let deadline = Instant::now() + DEADLINE;
    while !second.exists() {
        assert!(
            Instant::now() < deadline,
            "this run's edits were not autosaved"
        );
        tui.pump(Duration::from_millis(100));
    }
    assert!(message_content(&second, 1).ends_with(" later"));
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        kept_bytes,
        "kept file untouched"
    );
    tui.send("\x1b\x11"); // Esc, Ctrl+Q
    tui.wait_for("the quit question", |s| s.contains("Unsaved changes"));
    tui.send("n");
    assert_eq!(tui.wait_exit(), 0);
    assert!(
        !second.exists(),
        "this run's recovery goes with the discard"
    );
    assert_eq!(std::fs::read(&kept).unwrap(), kept_bytes, "still kept");
}

#[test]
fn untitled_recovery_belongs_to_the_template_opened_and_leaves_no_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        let source = format!("{name}:{{% for m in messages %}}[{{{{ m.role }}}}]{{% endfor %}}");
        std::fs::write(dir.path().join(format!("{name}.jinja")), source).unwrap();
    }
    let mut tui = Tui::start(dir.path(), "a.jinja");
    tui.wait_for("a's first frame", |s| s.contains("a:[system]"));
    tui.send("r"); // the first message's role: an unsaved change
    tui.wait_for("the change", |s| s.contains("a:[user]"));
    tui.kill("TERM");
    assert_eq!(tui.wait_exit(), 143);
    drop(tui);

    let mut tui = Tui::start(dir.path(), "b.jinja");
    tui.wait_for("b's first frame", |s| s.contains("b:[system]"));
    assert!(
        !tui.screen().contains("Recovery file found"),
        "a's changes not offered"
    );
    tui.send("r");
    tui.wait_for("the change", |s| s.contains("b:[user]"));
    let recoveries = |dir: &Path| {
        std::fs::read_dir(dir.join("sessions"))
            .map(|entries| entries.count())
            .unwrap_or(0)
    };
    let deadline = Instant::now() + DEADLINE;
    while recoveries(dir.path()) < 2 {
        assert!(Instant::now() < deadline, "b's edit was not autosaved");
        tui.pump(Duration::from_millis(100));
    }
    tui.send("q");
    tui.wait_for("the quit question", |s| s.contains("Unsaved changes"));
    tui.send("n");
    assert_eq!(tui.wait_exit(), 0);
    drop(tui);

    let mut tui = Tui::start(dir.path(), "a.jinja");
    tui.wait_for("a's recovery offered", |s| {
        s.contains("Recovery file found") && s.contains("a.jinja")
    });
    tui.send("n"); // discard it
    tui.wait_for("the discard", |s| s.contains("discarded"));
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0);
    assert!(
        !dir.path().join("sessions").exists(),
        "no empty sessions/ left behind"
    );
}

#[test]
fn a_session_changed_on_disk_is_not_silently_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let file = weather_session(dir.path());
    let mut tui = Tui::start(dir.path(), "sessions/weather.json");
    tui.wait_for("the first frame", |s| s.contains("weather.json"));
    tui.send("r"); // system -> user
    tui.wait_for("the change", |s| s.contains("weather.json*"));
    let mut theirs = Session::load(&file).unwrap();
    theirs.messages[0].0["content"] = "Written by another program.".into();
    theirs.save(&file).unwrap();
    tui.send("\x13"); // Ctrl+S
    tui.wait_for("the question", |s| s.contains("Changed on disk"));
    tui.send("\x1b");
    tui.wait_for("the question gone", |s| !s.contains("Changed on disk"));
    assert_eq!(message_content(&file, 0), "Written by another program.");
    tui.send("\x13");
    tui.wait_for("the question again", |s| s.contains("Changed on disk"));
    tui.send("o");
    tui.wait_for("the save", |s| s.contains("saved sessions/weather.json"));
    let saved = Session::load(&file).unwrap();
    assert_eq!(saved.messages[0].role(), "user", "ours, after the choice");
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_missing_template_is_shown_and_saving_keeps_its_reference() {
    let dir = tempfile::tempdir().unwrap();
    let reference = TemplateRef::Path("gone.jinja".into());
    let file = session_on(dir.path(), "lost.json", reference.clone());
    let mut tui = Tui::start(dir.path(), "sessions/lost.json");
    tui.wait_for("the error state", |s| {
        s.contains("template not found") && s.contains("gone.jinja")
    });
    assert!(!tui.screen().contains('✓'), "no success mark");
    tui.send("r");
    tui.wait_for("the change", |s| s.contains("lost.json*"));
    tui.send("\x13");
    tui.wait_for("the save", |s| s.contains("saved sessions/"));
    assert_eq!(Session::load(&file).unwrap().template, reference);
    tui.send("q");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn pasted_carriage_returns_are_stored_as_newlines() {
    let dir = tempfile::tempdir().unwrap();
    let file = weather_session(dir.path());
    let mut tui = Tui::start(dir.path(), "sessions/weather.json");
    tui.wait_for("the first frame", |s| s.contains("weather.json"));
    tui.edit_user_message();
    tui.send("\x1b[200~ line one\rline two\r\nline three\x1b[201~");
    tui.wait_for("the paste", |s| s.contains("line three"));
    tui.send("\x1b");
    tui.wait_for("the editor closed", |s| s.contains("#2 fields"));
    tui.send("\x13");
    tui.wait_for("the save", |s| s.contains("saved sessions/"));
    assert!(message_content(&file, 1).ends_with(" line one\nline two\nline three"));
}

#[test]
fn escape_and_ctrl_s_in_one_read_close_the_editor_and_save() {
    let dir = tempfile::tempdir().unwrap();
    let file = weather_session(dir.path());
    let mut tui = Tui::start(dir.path(), "sessions/weather.json");
    tui.wait_for("the first frame", |s| s.contains("weather.json"));
    tui.edit_user_message();
    tui.send(" fast");
    tui.wait_for("the typing", |s| s.contains("fast"));
    tui.send("\x1b\x13"); // Esc and Ctrl+S, one write
    tui.wait_for("the save", |s| {
        s.contains("saved sessions/") && s.contains("#2 fields")
    });
    assert!(message_content(&file, 1).ends_with("Paris? fast"));
}

#[test]
fn an_external_editor_that_changes_nothing_leaves_the_session_clean() {
    let dir = tempfile::tempdir().unwrap();
    weather_session(dir.path());
    let launch = Launch {
        env: &[("VISUAL", "true")],
        ..Launch::args(&["sessions/weather.json"])
    };
    let mut tui = Tui::launch(dir.path(), &launch);
    tui.wait_for("the first frame", |s| s.contains("weather.json"));
    tui.send("\x1b[B\x07"); // Down, Ctrl+G
    tui.wait_for("the editor's return", |s| s.contains("no changes"));
    assert!(
        !tui.screen().contains("weather.json*"),
        "not marked unsaved"
    );
}

#[test]
fn copying_inside_tmux_goes_through_tmux_itself() {
    let dir = tempfile::tempdir().unwrap();
    weather_session(dir.path());
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("tmux");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1 $2 $3\" = \"load-buffer -w -\" ] && cat > \"$FAKE_TMUX_OUT\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x"])
        .arg(&fake)
        .status()
        .unwrap();
    let copied = dir.path().join("copied.txt");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let copied_text = copied.display().to_string();
    let launch = Launch {
        env: &[
            ("TMUX", "/tmp/fake-tmux,1,0"),
            ("PATH", &path),
            ("FAKE_TMUX_OUT", &copied_text),
        ],
        ..Launch::args(&["sessions/weather.json"])
    };
    let mut tui = Tui::launch(dir.path(), &launch);
    tui.wait_for("the first frame", |s| s.contains("weather.json"));
    tui.send("3y");
    // The fake tmux does not say `set-clipboard on`: the status says how, once.
    tui.wait_for("the copy", |s| {
        s.contains("→ tmux buffer (for the clipboard: set -g set-clipboard on)")
    });
    let expected = std::process::Command::new(env!("CARGO_BIN_EXE_chatplate"))
        .args(["render", "sessions/weather.json"])
        .current_dir(dir.path())
        .output()
        .unwrap()
        .stdout;
    assert_eq!(std::fs::read(&copied).unwrap(), expected);
}

/// Over ssh, inside a tmux on the user's machine (the app sees `$SSH_TTY` and tmux's
/// `TERM`, not `$TMUX`): the copy says where it went and the one-line fix, and the log
/// keeps it.
#[test]
fn a_copy_over_ssh_into_tmux_names_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    weather_session(dir.path());
    let launch = Launch {
        env: &[("SSH_TTY", "/dev/pts/7"), ("TERM", "tmux-256color")],
        size: (24, 120),
        ..Launch::args(&["sessions/weather.json"])
    };
    let mut tui = Tui::launch(dir.path(), &launch);
    tui.wait_for("the first frame", |s| s.contains("weather.json"));
    tui.send("3y");
    tui.wait_for("the copy", |s| {
        s.contains("OSC 52 over ssh to your tmux: dropped unless it has set -g set-clipboard on")
    });
    tui.send("L");
    tui.wait_for("the log keeps it", |s| {
        s.contains("Message log") && s.contains("over ssh")
    });
}

#[test]
fn the_external_editor_gets_every_keystroke() {
    let dir = tempfile::tempdir().unwrap();
    let file = weather_session(dir.path());
    // An "editor" that says it is ready, reads one line from the terminal and saves it
    // as the text.
    let editor = dir.path().join("line-editor");
    std::fs::write(
        &editor,
        "#!/bin/sh\necho EDITOR-READY\nIFS= read -r line\nprintf '%s' \"$line\" > \"$1\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&editor)
        .status()
        .unwrap();
    let visual = editor.display().to_string();
    let launch = Launch {
        env: &[("VISUAL", &visual)],
        ..Launch::args(&["sessions/weather.json"])
    };
    let mut tui = Tui::launch(dir.path(), &launch);
    tui.wait_for("the first frame", |s| s.contains("weather.json"));
    tui.send("\x1b[B\x07"); // Down, Ctrl+G
    tui.wait_for("the editor", |s| s.contains("EDITOR-READY"));
    tui.send("every key for the editor\r");
    let deadline = Instant::now() + DEADLINE;
    while !tui.parser.screen().alternate_screen() {
        assert!(
            Instant::now() < deadline,
            "the app did not take the terminal back"
        );
        tui.pump(Duration::from_millis(50));
    }
    // The list row is cut to its pane (shorter once per-message byte counts arrive), so
    // the rendered prompt is what proves the edit came back.
    tui.wait_for("the edit back in the app", |s| {
        s.contains("2 user  every key for the") && s.contains("every key for the editor<|im_end|>")
    });
    tui.send("\x1b\x13");
    tui.wait_for("the save", |s| s.contains("saved sessions/"));
    assert_eq!(message_content(&file, 1), "every key for the editor");
}
