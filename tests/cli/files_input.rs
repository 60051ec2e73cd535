//! Hostile files and input against the real binary: a
//! fixture's tokenizer path, oversized request bodies and tokenizers, duplicate keys in a
//! request body, links out of the Hugging Face cache. Each test failed before its fix.
//! Every run has a time limit, so a hang (a FIFO) is a failure rather than a stuck test.

#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::common::binary::{binary_under_test, run_bounded, Run};
use crate::hf_support;

/// Runs chatplate in `dir` with `env` set (and an empty, offline Hugging Face cache of
/// its own unless `env` names one), killing it after a minute (a hang).
pub(crate) fn run_env(args: &[&str], dir: &Path, env: &[(&str, &Path)]) -> Run {
    let mut command = Command::new(binary_under_test());
    command
        .args(args)
        .current_dir(dir)
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", dir.join(".no-cache"))
        .env_remove("HF_TOKEN");
    for (key, value) in env {
        command.env(key, value);
    }
    run_bounded(command, Duration::from_secs(60))
}

pub(crate) fn run(args: &[&str], dir: &Path) -> Run {
    run_env(args, dir, &[])
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A fixture `f.json` in `dir` with one user message, `extra` merged in.
fn fixture(dir: &Path, extra: Json) {
    let mut session = json!({
        "version": 1,
        "template": {"source": "{% for m in messages %}{{ m.content }}{% endfor %}"},
        "messages": [{"role": "user", "content": "Hi"}],
    });
    for (key, value) in extra.as_object().into_iter().flatten() {
        session[key] = value.clone();
    }
    write(&dir.join("f.json"), &session.to_string());
}

// A fixture's tokenizer path read any file (the CI environment), a FIFO hung.
#[cfg(feature = "tokens")]
#[test]
fn a_fixtures_tokenizer_path_follows_the_template_path_rules() {
    use crate::tokens_support::write_tiny_tokenizer;
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("tree");
    let outside = top.path().join("outside");
    write_tiny_tokenizer(&outside, &Json::Null);
    for (tokenizer, shown) in [
        ("/proc/self/environ", "\"/proc/self/environ\""),
        ("../outside", "\"../outside\""),
    ] {
        fixture(&dir, json!({"tokenizer": tokenizer}));
        let tokens = run(&["tokens", "f.json"], &dir);
        assert_eq!(tokens.code(), Some(2), "{}", tokens.stderr);
        let refused = format!("tokenizer path {shown} leads outside");
        assert!(tokens.stderr.contains(&refused), "{}", tokens.stderr);
        assert!(!tokens.stderr.contains("PATH="), "{}", tokens.stderr);
        // The same rule, with the same words, in `check`'s expected_tokens step.
        fixture(
            &dir,
            json!({"tokenizer": tokenizer, "expected": {"prompt": "Hi"}, "expected_tokens": 1}),
        );
        let check = run(&["check", "f.json"], &dir);
        assert!(check.stdout.contains(&refused), "{}", check.stdout);
        assert!(
            check.stdout.contains("0 passed, 1 failed"),
            "{}",
            check.stdout
        );
    }
    // Allowed like a template root.
    fixture(&dir, json!({"tokenizer": "../outside"}));
    let root = outside.to_str().unwrap();
    let allowed = run(&["tokens", "f.json", "--template-root", root], &dir);
    assert_eq!(allowed.code(), Some(0), "{}", allowed.stderr);
    // A folder inside the tree whose tokenizer.json links out is refused too.
    std::fs::create_dir_all(dir.join("model")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("tokenizer.json"),
        dir.join("model/tokenizer.json"),
    )
    .unwrap();
    fixture(&dir, json!({"tokenizer": "model"}));
    let linked = run(&["tokens", "f.json"], &dir);
    assert!(
        linked.stderr.contains("leads outside") && linked.stderr.contains("tokenizer.json"),
        "{}",
        linked.stderr
    );
}

// Only regular files, and a cap (a sparse 70 MB file stands for a huge one).
#[cfg(feature = "tokens")]
#[test]
fn a_tokenizer_that_is_a_fifo_or_too_large_is_refused_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    mkfifo(&dir.join("fifo.json"));
    fixture(dir, json!({"tokenizer": "fifo.json"}));
    let fifo = run(&["tokens", "f.json"], dir);
    assert_eq!(fifo.code(), Some(2), "{}", fifo.stderr);
    assert!(
        fifo.stderr
            .contains("fifo.json: is a FIFO, not a regular file"),
        "{}",
        fifo.stderr
    );
    let huge = std::fs::File::create(dir.join("huge.json")).unwrap();
    huge.set_len(70 << 20).unwrap();
    fixture(dir, json!({"tokenizer": "huge.json"}));
    let started = Instant::now();
    let large = run(&["tokens", "f.json"], dir);
    assert_eq!(large.code(), Some(2), "{}", large.stderr);
    assert!(
        large
            .stderr
            .contains("huge.json: 73400320 bytes is more than the 67108864 bytes"),
        "{}",
        large.stderr
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A request body with one user message whose content is `size` bytes of `x`.
fn large_body(path: &Path, size: usize) {
    let mut text = String::with_capacity(size + 64);
    text.push_str(r#"{"messages": [{"role": "user", "content": ""#);
    text.extend(std::iter::repeat_n('x', size));
    text.push_str(r#""}]}"#);
    write(path, &text);
}

// A request body had only the session cap (256 MiB, about 2 GB once parsed).
#[test]
fn a_request_body_over_its_cap_is_refused_before_it_is_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    large_body(&dir.join("body.json"), 65 << 20);
    let size = std::fs::metadata(dir.join("body.json")).unwrap().len();
    let message = format!("body.json: {size} bytes is more than the 67108864 bytes");
    for args in [&["render", "body.json"][..], &["import", "body.json"]] {
        let refused = run(args, dir);
        assert_eq!(refused.code(), Some(2), "{args:?}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(&message),
            "{args:?}: {}",
            refused.stderr
        );
    }
    // A session is not a request body: its own cap applies.
    large_body(&dir.join("small.json"), 1 << 20);
    let small = run(&["render", "small.json"], dir);
    assert_eq!(small.code(), Some(0), "{}", small.stderr);
}

// A second `messages` list silently replaced the first.
#[test]
fn a_request_body_with_a_key_written_twice_is_refused_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let body = "{\"messages\": [{\"role\": \"user\", \"content\": \"first\"}],\n \"messages\": [{\"role\": \"user\", \"content\": \"second\"}]}";
    write(&dir.join("body.json"), body);
    for args in [&["render", "body.json"][..], &["import", "body.json"]] {
        let refused = run(args, dir);
        assert_eq!(refused.code(), Some(2), "{args:?}: {}", refused.stderr);
        assert!(
            refused.stderr.contains(
                "body.json:2:2: duplicate key \"messages\" (each key may appear once per object)"
            ),
            "{args:?}: {}",
            refused.stderr
        );
        assert!(!refused.stdout.contains("second"), "{}", refused.stdout);
    }
}

// A snapshot file linking out of the Hugging Face cache was followed.
#[test]
fn a_link_out_of_the_huggingface_cache_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let cache = dir.join("cache");
    let repo = hf_support::fake_cache(&cache);
    write(&dir.join("secret.jinja"), "TOP-SECRET");
    let link = repo
        .join("snapshots")
        .join(hf_support::MAIN)
        .join("chat_template.jinja");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(dir.join("secret.jinja"), &link).unwrap();
    write(
        &dir.join("m.json"),
        r#"[{"role": "user", "content": "hi"}]"#,
    );
    let env = [("HF_HUB_CACHE", cache.as_path())];
    let args = ["render", "--template", "acme/chat", "--messages", "m.json"];
    let refused = run_env(&args, dir, &env);
    assert_eq!(refused.code(), Some(2), "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("chat_template.jinja: a link that leads outside the Hugging Face cache"),
        "{}",
        refused.stderr
    );
    assert!(!refused.stdout.contains("TOP-SECRET"));
    // The commit before it has only links into the cache.
    let older = [
        "render",
        "--template",
        "acme/chat@v1",
        "--messages",
        "m.json",
    ];
    let kept = run_env(&older, dir, &env);
    assert_eq!(kept.code(), Some(0), "{}", kept.stderr);
    // Listing the cache leaves that revision out.
    let listed = run_env(&["templates", "--cached"], dir, &env);
    assert!(!listed.stdout.contains("@main"), "{}", listed.stdout);
}

/// An escape sequence that sets the terminal's title, and how chatplate prints it.
const TITLE: &str = "\x1b]0;pwned\x07";
const TITLE_SHOWN: &str = "\\u{001b}]0;pwned\\u{0007}";

fn assert_escaped(run: &Run, what: &str) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.contains('\x1b'),
            "{what}: raw escape on {stream}: {text:?}"
        );
        assert!(
            !text.contains('\x07'),
            "{what}: raw bell on {stream}: {text:?}"
        );
    }
}

/// A GGUF v3 file with `general.name` and the given template keys and sources.
fn gguf(path: &Path, name: &str, templates: &[(&str, &str)]) {
    let mut out: Vec<u8> = b"GGUF".to_vec();
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&(1 + templates.len() as u64).to_le_bytes());
    let string = |out: &mut Vec<u8>, text: &str| {
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    };
    let mut pairs = vec![("general.name", name)];
    pairs.extend_from_slice(templates);
    for (key, value) in pairs {
        string(&mut out, key);
        out.extend_from_slice(&8u32.to_le_bytes());
        string(&mut out, value);
    }
    std::fs::write(path, out).unwrap();
}

// Names from a GGUF file reached the terminal as they were.
#[test]
fn gguf_template_names_are_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let key = format!("tokenizer.chat_template.tool{TITLE}");
    gguf(
        &dir.join("x.gguf"),
        &format!("model{TITLE}"),
        &[("tokenizer.chat_template", "A"), (&key, "B")],
    );
    let listed = run(&["templates", "x.gguf"], dir);
    assert_eq!(listed.code(), Some(0), "{}", listed.stderr);
    assert_escaped(&listed, "templates x.gguf");
    assert!(
        listed.stdout.contains(&format!("tool{TITLE_SHOWN}")),
        "{}",
        listed.stdout
    );
}

// Names of cached models and of their templates.
#[test]
fn cached_model_and_template_names_are_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let cache = dir.join("cache");
    let repo = hf_support::fake_cache(&cache);
    let evil = format!("additional_chat_templates/t{TITLE}.jinja");
    hf_support::put(&repo, hf_support::MAIN, &evil, "EVIL");
    let odd = cache.join(format!("models--acme--odd{TITLE}"));
    hf_support::put(&odd, hf_support::MAIN, "chat_template.jinja", "ODD");
    hf_support::set_ref(&odd, "main", hf_support::MAIN);
    let listed = run_env(&["templates", "--cached"], dir, &[("HF_HUB_CACHE", &cache)]);
    assert_eq!(listed.code(), Some(0), "{}", listed.stderr);
    assert_escaped(&listed, "templates --cached");
    assert!(
        listed.stdout.contains(&format!("#t{TITLE_SHOWN}")),
        "{}",
        listed.stdout
    );
    // A folder no Hub id could have made is not a model.
    assert!(!listed.stdout.contains("acme/odd"), "{}", listed.stdout);
}

// `import` echoed the body's model and keys.
#[test]
fn import_prints_the_bodys_model_and_keys_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let body = json!({
        "model": format!("acme{TITLE}"),
        format!("extra{TITLE}"): 1,
        "messages": [{"role": "user", "content": "hi", format!("key{TITLE}"): "v"}],
    });
    write(&dir.join("body.json"), &body.to_string());
    let imported = run(&["import", "body.json"], dir);
    assert_eq!(imported.code(), Some(0), "{}", imported.stderr);
    assert_escaped(&imported, "import");
    assert!(
        imported.stderr.contains(&format!(
            "kept (not part of the prompt): model, extra{TITLE_SHOWN}"
        )),
        "{}",
        imported.stderr
    );
    assert!(
        imported
            .stderr
            .contains(&format!("acme{TITLE_SHOWN} is not a model")),
        "{}",
        imported.stderr
    );
}

/// Runs chatplate in `dir` with a stdout whose reader is already gone (`| head -0`).
fn run_into_closed_pipe(args: &[&str], dir: &Path, cache: &Path) -> Run {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = Command::new(binary_under_test())
        .args(args)
        .current_dir(dir)
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", cache)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("chatplate runs");
    Run {
        status: output.status,
        stdout: String::new(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

// `tokens ... | head` (and others) panicked in println! on the closed pipe.
#[test]
fn every_command_that_prints_ends_quietly_when_its_reader_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let cache = dir.join("cache");
    hf_support::fake_cache(&cache);
    fixture(dir, json!({"expected": {"prompt": "Hi"}}));
    write(
        &dir.join("body.json"),
        r#"{"messages": [{"role": "user", "content": "hi"}]}"#,
    );
    write(&dir.join("corpus/MANIFEST.json"), r#"{"cases": []}"#);
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["render", "f.json"],
        vec!["check", "f.json"],
        vec!["check", "--format", "json", "f.json"],
        vec!["bench", "--iterations", "1", "f.json"],
        vec!["inspect", "--fixture", "f.json"],
        vec!["inspect", "--json", "gemma-3-tools"],
        vec!["import-corpus", "corpus", "out"],
        vec!["templates"],
        vec!["templates", "--cached"],
        vec!["templates", "acme/chat"],
        vec!["import", "body.json"],
        vec!["export", "--openai", "f.json"],
        vec!["completions", "bash"],
        vec!["man"],
        vec!["--help"],
    ];
    #[cfg(feature = "tokens")]
    {
        crate::tokens_support::write_tiny_tokenizer(&dir.join("model"), &Json::Null);
        write(&dir.join("p.txt"), "Hi");
        commands.push(vec!["tokens", "--tokenizer", "model", "--text", "p.txt"]);
        commands.push(vec!["tokens", "--json", "--tokenizer", "model", "f.json"]);
    }
    for args in commands {
        let run = run_into_closed_pipe(&args, dir, &cache);
        assert_eq!(
            run.code(),
            Some(0),
            "{args:?}: {:?}\n{}",
            run.status,
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{args:?}: {}", run.stderr);
        assert!(
            !run.stderr.contains("Broken pipe"),
            "{args:?}: {}",
            run.stderr
        );
    }
}
