//! End to end: the real binary in a pseudo-terminal opens a model folder and a `.gguf`
//! through `Ctrl+P` while it runs (no restart), and reports a missing path and a broken
//! GGUF without changing anything.

#![cfg(feature = "tui")]
#![cfg(unix)]

use crate::e2e_support;
use crate::hf_support;
use std::path::PathBuf;

use e2e_support::{weather_session, Launch, Tui};

fn fixture(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
        .display()
        .to_string()
}

/// Types `target` into the open dialog and submits it.
fn open(tui: &mut Tui, target: &str) {
    tui.send("\x10"); // Ctrl+P
    tui.wait_for("the open dialog", |s| s.contains("Open: a session"));
    tui.send(target);
    tui.send("\r");
}

/// The app on the weather session in `dir`, with `env` (the Hugging Face settings).
fn launch_weather(dir: &std::path::Path, env: &[(&str, &str)]) -> Tui {
    weather_session(dir);
    Tui::launch(
        dir,
        &Launch {
            env,
            ..Launch::args(&["sessions/weather.json"])
        },
    )
}

/// Answers the quit question without saving and checks the exit status.
fn quit_without_saving(tui: &mut Tui) {
    tui.send("\x11"); // Ctrl+Q
    tui.wait_for("the quit question", |s| s.contains("nsaved"));
    tui.send("n");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_model_folder_and_a_gguf_open_in_the_running_app() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("empty-hf-cache");
    let cache = cache.display().to_string();
    let env = [("HF_HUB_CACHE", cache.as_str()), ("HF_HUB_OFFLINE", "1")];
    let mut tui = launch_weather(dir.path(), &env);
    tui.wait_for("the first frame", |s| s.contains("<|im_start|>"));

    open(&mut tui, &fixture("models/additional"));
    // The session has tools: the model's tool_use template renders it.
    tui.wait_for("the model's template", |s| {
        s.contains("additional#tool_use") && s.contains("(tool_use file)")
    });

    open(&mut tui, "/nonexistent/model");
    tui.wait_for("the error", |s| s.contains("could not open /nonexistent"));
    open(&mut tui, &fixture("gguf/truncated.gguf"));
    tui.wait_for("the GGUF error", |s| s.contains("could not open"));
    assert!(tui.screen().contains("(tool_use file)"), "template kept");

    open(&mut tui, &fixture("gguf/chat.gguf"));
    tui.wait_for("the GGUF's template", |s| {
        s.contains("opened") && s.contains("GGUF")
    });
    assert!(!tui.screen().contains("(tool_use file)"));

    tui.send("\x11"); // Ctrl+Q
    tui.wait_for("the quit question", |s| s.contains("nsaved"));
    tui.send("n");
    assert_eq!(tui.wait_exit(), 0);
    tui.wait_restored();
}

#[test]
fn a_hub_download_that_hangs_never_holds_the_renders() {
    // A "Hub" that accepts connections and never answers.
    let hub = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", hub.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in hub.incoming().flatten() {
            held.push(stream);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("empty-hf-cache").display().to_string();
    let env = [
        ("HF_HUB_CACHE", cache.as_str()),
        ("HF_ENDPOINT", endpoint.as_str()),
    ];
    let mut tui = launch_weather(dir.path(), &env);
    // An idle worker, so the download starts at once rather than after other jobs.
    tui.wait_for("the first frame, attributed", |s| {
        s.contains("<|im_start|>") && !s.contains("attributing")
    });
    open(&mut tui, "some-org/some-model");
    tui.wait_for("the download to start", |s| {
        s.contains("opening some-org/some-model")
    });
    // Jobs queued before it (template badges) end within milliseconds; after this pause the
    // download is what the worker would be running if it ran downloads itself.
    tui.pump(std::time::Duration::from_secs(1));
    // While the download waits, an edit still renders (before, the worker ran the
    // download itself and renders waited for the Hub's timeout).
    tui.send("\x1b[Be"); // Down, edit the user message
    tui.wait_for("the editor", |s| s.contains("#2 user"));
    tui.send(" while-the-hub-waits");
    tui.wait_for("the edit rendered", |s| {
        s.contains("while-the-hub-waits<|im_end|>")
    });
    tui.send("\x1b"); // leave the editor
    quit_without_saving(&mut tui);
}

#[test]
fn cached_models_are_listed_and_open_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("hf-cache");
    hf_support::fake_cache(&cache);
    let cache = cache.display().to_string();
    let env = [("HF_HUB_CACHE", cache.as_str()), ("HF_HUB_OFFLINE", "1")];
    let mut tui = launch_weather(dir.path(), &env);
    tui.wait_for("the first frame", |s| s.contains("<|im_start|>"));
    tui.send("1"); // the Templates pane: the cache scan adds its section
    tui.wait_for("the cache section", |s| s.contains("acme/chat"));
    open(&mut tui, "acme/chat");
    // The session has tools, so the model's tool_use template is chosen; the main
    // snapshot's templates print "(main…)" before each message.
    tui.wait_for("the cached model's template", |s| {
        s.contains("(main tool_use)<s>")
    });
    quit_without_saving(&mut tui);
}
