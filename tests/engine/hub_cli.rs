//! The command line fetching template files from the Hub, against the fake Hub of
//! `tests/hub_support` (a local server on 127.0.0.1; no test reaches the internet). The
//! library's own Hub tests are in crates/core/tests/files/hub.rs.

#![cfg(feature = "hub")]

use crate::hub_support::{Hub, GOOD_TOKEN};

#[test]
fn the_cli_fetches_with_progress_and_never_prints_the_token() {
    let hub = Hub::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.json"),
        r#"[{"role": "user", "content": "hi"}]"#,
    )
    .unwrap();
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_chatplate"))
            .args(["render", "--template", "acme/gated", "--messages", "m.json"])
            .current_dir(dir.path())
            .env("HF_ENDPOINT", &hub.endpoint)
            .env("HF_HUB_CACHE", dir.path().join("cache"))
            .env("HF_TOKEN", GOOD_TOKEN)
            .env_remove("HF_HUB_OFFLINE")
            .output()
            .unwrap()
    };
    let output = run();
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert_eq!(out, "<s>hi</s>");
    assert!(
        err.contains(
            "acme/gated@main is not cached; fetching its template files from http://127.0.0.1:"
        ),
        "{err}"
    );
    assert!(
        err.contains("chat_template.jinja (") && err.contains("cached in"),
        "{err}"
    );
    assert!(!out.contains(GOOD_TOKEN) && !err.contains(GOOD_TOKEN));
    // The second run finds it in the cache and does not ask the Hub.
    let before = hub.paths().len();
    let again = run();
    assert_eq!(again.status.code(), Some(0));
    assert!(
        again.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(hub.paths().len(), before);
}

// Hub file names reached the terminal as they were, in the progress lines and
// in the listing.
#[test]
fn the_cli_prints_hub_file_names_escaped() {
    let hub = Hub::start();
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_chatplate"))
        .args(["templates", "acme/evil"])
        .current_dir(dir.path())
        .env("HF_ENDPOINT", &hub.endpoint)
        .env("HF_HUB_CACHE", dir.path().join("cache"))
        .env_remove("HF_TOKEN")
        .env_remove("HF_HUB_OFFLINE")
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{err}");
    for text in [&out, &err] {
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    }
    let shown = "t\\u{001b}]0;pwned\\u{0007}";
    assert!(
        err.contains(&format!("additional_chat_templates/{shown}.jinja (")),
        "{err}"
    );
    assert!(out.contains(&format!("acme/evil#{shown}")), "{out}");
}

/// `check` on a fixture that names the gated `acme/gated`, with the user's token in
/// HF_TOKEN; what the fake Hub saw.
fn check_gated(
    hub: &Hub,
    extra: &[&str],
    config: Option<&str>,
) -> (std::process::Output, Vec<bool>) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = r#"{"version": 1, "template": {"model": {"id": "acme/gated"}}, "messages": [{"role": "user", "content": "hi"}], "expected": {"prompt": "<s>hi</s>"}}"#;
    std::fs::write(dir.path().join("f.json"), fixture).unwrap();
    let config_file = dir.path().join("config.json");
    std::fs::write(&config_file, config.unwrap_or("{}")).unwrap();
    let before = hub.seen.lock().unwrap().len();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_chatplate"))
        .args([&["check", "f.json", "--color", "never"], extra].concat())
        .current_dir(dir.path())
        .env("HF_ENDPOINT", &hub.endpoint)
        .env("HF_HUB_CACHE", dir.path().join("cache"))
        .env("HF_TOKEN", GOOD_TOKEN)
        .env("CHATPLATE_CONFIG", &config_file)
        .env_remove("HF_HUB_OFFLINE")
        .output()
        .unwrap();
    let seen = hub.seen.lock().unwrap()[before..]
        .iter()
        .map(|s| s.authorized)
        .collect();
    (output, seen)
}

#[test]
fn a_fixtures_model_is_fetched_without_the_token_unless_the_user_allows_it() {
    let hub = Hub::start();
    let (output, seen) = check_gated(&hub, &[], None);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        !seen.is_empty() && seen.iter().all(|sent| !sent),
        "{seen:?}"
    );
    assert!(
        err.contains("acme/gated@main is named by a file (a fixture, session or request body), so it was fetched without your Hugging Face token")
            && err.contains("--hub-token-for-fixtures"),
        "{err}"
    );
    // Allowed by the flag or by the config file, the token goes and the fixture passes.
    for (flag, config) in [
        (&["--hub-token-for-fixtures"][..], None),
        (&[][..], Some(r#"{"hub_token_for_fixtures": true}"#)),
    ] {
        let (output, seen) = check_gated(&hub, flag, config);
        let out = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{out}");
        assert!(out.contains("1 passed, 0 failed"), "{out}");
        assert!(seen.iter().any(|sent| *sent), "{seen:?}");
    }
}

#[test]
fn a_model_named_on_the_command_line_is_fetched_with_the_token() {
    let hub = Hub::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.json"),
        r#"[{"role": "user", "content": "hi"}]"#,
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_chatplate"))
        .args(["render", "--template", "acme/gated", "--messages", "m.json"])
        .current_dir(dir.path())
        .env("HF_ENDPOINT", &hub.endpoint)
        .env("HF_HUB_CACHE", dir.path().join("cache"))
        .env("HF_TOKEN", GOOD_TOKEN)
        .env_remove("HF_HUB_OFFLINE")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let seen = hub.seen.lock().unwrap().clone();
    let files: Vec<_> = seen
        .iter()
        .filter(|s| s.path.contains("/resolve/"))
        .collect();
    assert!(
        !files.is_empty() && files.iter().all(|s| s.authorized),
        "{seen:?}"
    );
}
