//! Where templates come from, through the real binary: model folders with named
//! templates, model ids from a local Hugging Face cache (built here in the exact layout),
//! and fixtures that record which snapshot they were made with. Every run is offline with
//! a cache of its own.

use crate::hf_support;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chatplate_core::session::{Session, TemplateRef};
use hf_support::{fake_cache, set_ref, MAIN, V1};

fn chatplate(args: &[&str], dir: &Path, cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chatplate"))
        .args(args)
        .current_dir(dir)
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HUB_CACHE", cache)
        .env_remove("HF_TOKEN")
        .output()
        .expect("chatplate runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models")
}

/// A temporary folder with `m.json` (one user message) and `tools.json` (one tool).
fn inputs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let messages = r#"[{"role": "user", "content": "hi"}]"#;
    std::fs::write(dir.path().join("m.json"), messages).unwrap();
    let tools = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]"#;
    std::fs::write(dir.path().join("tools.json"), tools).unwrap();
    dir
}

fn first_line(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    text(&output.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn render_with_tools_uses_the_tool_use_template_and_a_name_wins() {
    let dir = inputs();
    let cache = dir.path().join("cache");
    let folder = models().join("additional");
    let folder = folder.to_str().unwrap();
    let base = ["render", "--template", folder, "--messages", "m.json"];
    let line =
        |extra: &[&str]| first_line(&chatplate(&[&base[..], extra].concat(), dir.path(), &cache));
    assert_eq!(line(&[]), "(default file)");
    assert_eq!(line(&["--tools", "tools.json"]), "(tool_use file)");
    assert_eq!(
        line(&["--tools", "tools.json", "--template-name", "rag"]),
        "(rag file)"
    );
    let pinned = format!("{folder}#default");
    let output = chatplate(
        &[
            "render",
            "--template",
            &pinned,
            "--messages",
            "m.json",
            "--tools",
            "tools.json",
        ],
        dir.path(),
        &cache,
    );
    assert_eq!(first_line(&output), "(default file)");
    let output = chatplate(
        &[&base[..], &["--template-name", "nope"]].concat(),
        dir.path(),
        &cache,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr)
        .contains("no chat template named \"nope\" (it has: default, rag, tool_use)"));
}

#[test]
fn model_ids_render_from_the_cache_at_a_revision() {
    let dir = inputs();
    let cache = dir.path().join("cache");
    fake_cache(&cache);
    let render = |template: &str| {
        let output = chatplate(
            &["render", "--template", template, "--messages", "m.json"],
            dir.path(),
            &cache,
        );
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    assert_eq!(render("acme/chat"), "(main)<s>hi</s>");
    assert_eq!(render("acme/chat@v1"), "(v1)<s>hi</s>");
    assert_eq!(render(&format!("acme/chat@{V1}")), "(v1)<s>hi</s>");
    assert_eq!(render("acme/chat#tool_use"), "(main tool_use)<s>hi</s>");
    let output = chatplate(
        &[
            "render",
            "--template",
            "acme/absent",
            "--messages",
            "m.json",
        ],
        dir.path(),
        &cache,
    );
    assert_eq!(output.status.code(), Some(2));
    let err = text(&output.stderr);
    assert!(
        err.contains("acme/absent@main is not in the local Hugging Face cache")
            && err.contains("HF_HUB_OFFLINE"),
        "{err}"
    );
}

#[test]
fn templates_lists_cached_models_and_a_sources_entries() {
    let dir = inputs();
    let cache = dir.path().join("cache");
    fake_cache(&cache);
    let output = chatplate(&["templates", "--cached"], dir.path(), &cache);
    let listed = text(&output.stdout);
    assert!(
        listed.contains("acme/chat#tool_use  [HF cache acme/chat@main 1111111"),
        "{listed}"
    );
    assert!(
        listed.contains("acme/chat  [HF cache acme/chat@v1 2222222"),
        "{listed}"
    );
    assert!(!listed.contains("weights-only"), "{listed}");
    let output = chatplate(&["templates", "acme/chat"], dir.path(), &cache);
    let listed = text(&output.stdout);
    assert!(
        listed.contains("acme/chat#default") && listed.contains("tokens: bos_token=\"<s>\""),
        "{listed}"
    );
}

#[test]
fn check_says_when_the_cached_template_changed_under_a_fixture() {
    let dir = inputs();
    let cache = dir.path().join("cache");
    let repo = fake_cache(&cache);
    let fixture = dir.path().join("f.json");
    let session = serde_json::json!({
        "version": 1,
        "template": {"model": {"id": "acme/chat", "revision": "main", "snapshot": MAIN}},
        "messages": [{"role": "user", "content": "hi"}],
        "expected": {"prompt": "(main)<s>hi</s>"},
    });
    std::fs::write(&fixture, session.to_string()).unwrap();
    let output = chatplate(&["check", "f.json"], dir.path(), &cache);
    assert_eq!(text(&output.stdout), "1 passed, 0 failed\n");

    set_ref(&repo, "main", V1);
    let output = chatplate(&["check", "f.json"], dir.path(), &cache);
    assert_eq!(output.status.code(), Some(1));
    let report = text(&output.stdout);
    assert!(report.contains("FAIL f.json: prompt differs"), "{report}");
    assert!(
        report.contains("note: the cached template changed under this fixture: acme/chat@main was commit 1111111 when recorded, the cache now resolves it to 2222222"),
        "{report}"
    );

    let output = chatplate(&["check", "--bless", "f.json"], dir.path(), &cache);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
    let blessed = Session::load(&fixture).unwrap();
    let TemplateRef::Model { snapshot, .. } = &blessed.template else {
        panic!("still a model reference")
    };
    assert_eq!(snapshot.as_deref(), Some(V1));
    let output = chatplate(&["check", "f.json"], dir.path(), &cache);
    assert_eq!(text(&output.stdout), "1 passed, 0 failed\n");
}

fn requests() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/requests")
}

#[test]
fn import_a_body_check_it_and_export_it_back() {
    let dir = inputs();
    let cache = dir.path().join("cache");
    let body = requests().join("vllm-tools.json");
    let body = body.to_str().unwrap();
    let output = chatplate(
        &["import", body, "-o", "sessions/weather.json", "--bless"],
        dir.path(),
        &cache,
    );
    let err = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "kept (not part of the prompt): model, tool_choice, temperature, max_tokens, stream"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "Qwen/Qwen3-8B is not a model in the local Hugging Face cache: using the bundled"
        ),
        "{err}"
    );
    let output = chatplate(&["check", "sessions/weather.json"], dir.path(), &cache);
    assert_eq!(text(&output.stdout), "1 passed, 0 failed\n");

    let output = chatplate(
        &["export", "--openai", "sessions/weather.json"],
        dir.path(),
        &cache,
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let exported: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(body).unwrap()).unwrap();
    for (key, value) in original.as_object().unwrap() {
        assert_eq!(&exported[key], value, "{key}");
    }
    assert!(
        exported["chat_template"].is_string(),
        "the bundled template goes along"
    );

    // A body renders as it is, too.
    let output = chatplate(&["render", body], dir.path(), &cache);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("18°C, cloudy"));
}

#[test]
fn import_uses_the_bodys_model_from_the_cache_or_a_chosen_template() {
    let dir = inputs();
    let cache = dir.path().join("cache");
    fake_cache(&cache);
    let body =
        r#"{"model": "acme/chat", "messages": [{"role": "user", "content": "hi"}], "seed": 7}"#;
    std::fs::write(dir.path().join("body.json"), body).unwrap();
    let output = chatplate(&["import", "body.json", "--bless"], dir.path(), &cache);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let session = Session::parse(&text(&output.stdout), Path::new("stdout")).unwrap();
    assert_eq!(
        session.template,
        TemplateRef::Model {
            id: "acme/chat".into(),
            revision: Some("main".into()),
            snapshot: Some(MAIN.into()),
            name: None
        }
    );
    assert_eq!(session.request["seed"], 7);
    assert_eq!(
        session.expected,
        Some(chatplate_core::session::Expected::Prompt(
            "(main)<s>hi</s>".into()
        ))
    );

    let folder = models().join("additional");
    let output = chatplate(
        &[
            "import",
            "body.json",
            "-o",
            "out/s.json",
            "--template",
            folder.to_str().unwrap(),
            "--template-name",
            "rag",
        ],
        dir.path(),
        &cache,
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let session = Session::load(&dir.path().join("out/s.json")).unwrap();
    let TemplateRef::Named { path, name } = &session.template else {
        panic!("{:?}", session.template)
    };
    assert_eq!(name, "rag");
    assert!(
        dir.path()
            .join("out")
            .join(path)
            .join("chat_template.jinja")
            .is_file(),
        "{path}"
    );
}
