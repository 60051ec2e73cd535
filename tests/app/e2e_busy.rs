//! End to end: the app never waits for the worker. A key is echoed while a render that
//! cannot finish during the test runs, and background work that runs on is named on the
//! status line with the key that stops it. The proofs are orders of events, never clock
//! thresholds: the render's endless loop outlasts any test machine.

#![cfg(feature = "tui")]
#![cfg(unix)]

use crate::e2e_support;
use std::path::Path;

use chatplate_core::session::{Message, Session, TemplateRef};
use e2e_support::{Launch, Tui};

/// A loop of 10^12 steps: it ends only by the render's bounds, which the tests raise.
const ENDLESS: &str = "{% for i in range(10000) %}{% for j in range(10000) %}\
                       {% for k in range(10000) %}{% endfor %}{% endfor %}{% endfor %}";

/// Fuel and deadline no render here reaches.
const UNBOUNDED: [&str; 4] = ["--fuel", "1000000000000000", "--deadline", "3600"];

/// `sessions/busy.json`: a system message and a user message, on `template` (inline).
fn session(dir: &Path, template: &str) -> String {
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let mut session = Session::new(TemplateRef::Source(template.into()));
    session.messages = vec![
        Message::new("system", "You are terse."),
        Message::new("user", "Will it rain?"),
    ];
    session.add_generation_prompt = true;
    session.save(&sessions.join("busy.json")).unwrap();
    "sessions/busy.json".into()
}

fn launch<'a>(args: &'a [&'a str]) -> Launch<'a> {
    Launch {
        size: (24, 100),
        ..Launch::args(args)
    }
}

#[test]
fn a_key_is_echoed_while_the_render_runs() {
    let dir = tempfile::tempdir().unwrap();
    let template = format!("{{% for m in messages %}}{{{{ m.content }}}}{{% endfor %}}{ENDLESS}");
    let file = session(dir.path(), &template);
    let args: Vec<&str> = UNBOUNDED.iter().copied().chain([file.as_str()]).collect();
    let mut tui = Tui::launch(dir.path(), &launch(&args));
    // The first render started with the first frame and never ends.
    tui.wait_for("the first frame", |s| {
        s.contains("busy.json") && s.contains("stale")
    });
    tui.edit_user_message();
    tui.send(" Umbrella");
    tui.wait_for("the echo", |s| s.contains("rain? Umbrella"));
    let screen = tui.screen();
    assert!(
        screen.contains("· stale") && !screen.contains("terse.Will it rain?"),
        "the echo came while the render ran, with no render shown yet:\n{screen}"
    );
}

#[test]
fn long_background_work_is_named_and_ctrl_t_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    // The prompt renders at once; the renders without the generation prompt (the
    // attribution's prefixes, the probes) run on.
    let template = format!(
        "{{% for m in messages %}}{{{{ m.content }}}}{{% endfor %}}\
         {{% if add_generation_prompt %}}>{{% else %}}{ENDLESS}{{% endif %}}"
    );
    let file = session(dir.path(), &template);
    let args: Vec<&str> = UNBOUNDED.iter().copied().chain([file.as_str()]).collect();
    let mut tui = Tui::launch(dir.path(), &launch(&args));
    tui.wait_for("the prompt", |s| s.contains("You are terse.Will it rain?>"));
    tui.wait_for("the running job named", |s| s.contains("(Ctrl+T stops)"));
    tui.send("\x14"); // Ctrl+T
    tui.wait_for("the stop said", |s| {
        s.contains("stopped") && s.contains("starts again after the next change")
    });
    tui.wait_for("the title", |s| s.contains("attribution stopped"));
    // The next change asks again.
    tui.edit_user_message();
    tui.send("!");
    tui.wait_for("the new prompt", |s| s.contains("Will it rain?!>"));
    tui.wait_for("the work named again", |s| s.contains("(Ctrl+T stops)"));
}
