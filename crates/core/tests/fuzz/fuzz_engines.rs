//! Fuzzing what the other engines answer: an external engine's output (stdout, stderr and
//! exit status) and a llama-server's HTTP answers, made hostile: random bytes, JSON of
//! every shape at the places chatplate reads (`prompt`, `error`, `version`, `missing`;
//! `build_info`, `chat_template`, `error.message`), huge strings, control characters,
//! truncation, wrong lengths. Each goes through the real answer handling
//! (`compare::render`): a stand-in interpreter (a shell script that prints the answer)
//! for `python` and `hf-jinja`, and a stand-in server (a local listener that answers with
//! the bytes) for `llama.cpp`. The property: no panic, no hang, and every answer bounded:
//! a prompt within the output cap, messages, versions and notes cut.
//!
//! Bounded like `fuzz.rs` (see there): `CHATPLATE_FUZZ_CASES` inputs per target,
//! `CHATPLATE_FUZZ_SECONDS` each, a fixed seed under CI.

#![cfg(unix)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use chatplate_core::compare::{self, Bounds, Engine, EngineError, EngineRender, EngineSetup};
use chatplate_render::Conversation;
use proptest::prelude::*;
use serde_json::{json, Value as Json};

use crate::fuzz::{config, last_input, mutation, odd_value, Budget};

/// How an answer ended.
const ENDS: [&str; 4] = ["prompt", "render error", "failed", "not available"];

/// The output cap the engines run with here.
const CAP: usize = 1 << 20;

/// Longest error or note accepted: a cut message (4,000 characters), its size, and
/// chatplate's own words around it.
const MAX_SAID: usize = 6_000;

/// Strings an answer may carry: empty, escapes (C0 and C1), invalid surrogates as
/// JSON escapes cannot make them, long ones, and templates of the shape llama.cpp
/// changes on load.
fn hostile_string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            &[
                "",
                "\u{1b}]0;pwned\u{7}",
                "\u{9b}31m",
                "\u{0}",
                "\u{202e}",
                "line\nbreak\r\n",
                "{%- if false %}x{% endif %}",
                "{%- if m.content is none %}x{% endif %}",
                "{% if",
            ][..]
        )
        .prop_map(str::to_string),
        "[\\PC]{0,16}",
        (1usize..300_000).prop_map(|n| "x".repeat(n)),
    ]
}

/// A JSON value at a key chatplate reads.
fn answer_value() -> impl Strategy<Value = Json> {
    prop_oneof![
        3 => hostile_string().prop_map(Json::from),
        2 => odd_value(),
        1 => hostile_string().prop_map(|message| json!({"message": message, "code": 500})),
    ]
}

/// An answer document: some of the keys the engines answer with, at odd values.
fn answer_json() -> impl Strategy<Value = Json> {
    const KEYS: &[&str] = &[
        "prompt",
        "error",
        "version",
        "missing",
        "build_info",
        "chat_template",
    ];
    prop::collection::btree_map(prop::sample::select(KEYS), answer_value(), 0..4)
        .prop_map(|fields| Json::Object(fields.into_iter().map(|(k, v)| (k.into(), v)).collect()))
}

/// The bytes of an answer: a document, a document cut or spliced, random bytes, deep
/// nesting, or more than the cap.
fn answer_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => answer_json().prop_map(|json| json.to_string().into_bytes()),
        2 => (answer_json(), any::<prop::sample::Index>(), mutation()).prop_map(|(json, at, insert)| {
            let mut text = json.to_string().into_bytes();
            let at = at.index(text.len() + 1);
            text.splice(at..at, insert.into_bytes());
            text
        }),
        1 => (answer_json(), any::<prop::sample::Index>()).prop_map(|(json, at)| {
            let text = json.to_string().into_bytes();
            let at = at.index(text.len() + 1);
            text[..at].to_vec()
        }),
        1 => prop::collection::vec(any::<u8>(), 0..64),
        1 => (1usize..200_000).prop_map(|n| "[".repeat(n).into_bytes()),
        1 => Just(vec![b'x'; CAP + 10]),
    ]
}

/// The conversation every engine gets (it does not matter what they make of it).
fn conversation() -> Conversation {
    Conversation::new(vec![json!({"role": "user", "content": "Hi"})])
}

/// Checks that `render` is bounded, and says how it ended.
fn bounded(render: &EngineRender) -> Result<usize, TestCaseError> {
    prop_assert!(
        render.version.chars().count() <= 200,
        "{}",
        render.version.len()
    );
    if let Some(note) = &render.note {
        prop_assert!(note.chars().count() <= MAX_SAID, "{}", note.len());
    }
    Ok(match &render.result {
        Ok(prompt) => {
            prop_assert!(prompt.len() <= CAP);
            0
        }
        Err(err) => {
            prop_assert!(
                err.to_string().chars().count() <= MAX_SAID,
                "{}",
                err.to_string().len()
            );
            match err {
                EngineError::Render(_) => 1,
                EngineError::NotInstalled { .. } => 3,
                _ => 2,
            }
        }
    })
}

/// A stand-in interpreter in its own folder: it prints the files `out` and `err` and
/// exits with the status in `code`; and a package folder for `hf-jinja` to be found in.
struct FakeEngine {
    dir: tempfile::TempDir,
    program: PathBuf,
}

impl FakeEngine {
    fn new() -> FakeEngine {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name).display().to_string();
        let script = format!(
            "#!/bin/sh\ncat '{}'\ncat '{}' >&2\nexit \"$(cat '{}')\"\n",
            at("out"),
            at("err"),
            at("code")
        );
        let program = dir.path().join("engine");
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let package = dir.path().join("modules/@huggingface/jinja");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(package.join("package.json"), "{}").unwrap();
        FakeEngine { dir, program }
    }

    fn answer(&self, out: &[u8], err: &[u8], code: u8) {
        let path = |name: &str| self.dir.path().join(name);
        std::fs::write(path("out"), out).unwrap();
        std::fs::write(path("err"), err).unwrap();
        std::fs::write(path("code"), code.to_string()).unwrap();
    }

    fn setup(&self) -> EngineSetup {
        let mut setup = EngineSetup::default();
        setup.python = Some(self.program.clone());
        setup.node = self.program.clone();
        setup.node_modules = vec![self.dir.path().join("modules")];
        setup.bounds = Bounds::default().with_timeout(Duration::from_secs(10));
        setup.bounds.max_output = CAP;
        setup
    }
}

/// A stand-in llama-server: answers `GET /props` and `POST /apply-template` with the
/// bytes set for each, then closes the connection.
struct FakeServer {
    url: String,
    answers: Arc<Mutex<(Vec<u8>, Vec<u8>)>>,
}

impl FakeServer {
    fn start() -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let answers = Arc::new(Mutex::new((Vec::new(), Vec::new())));
        let shared = Arc::clone(&answers);
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let head = read_head(&mut stream);
                let (props, apply) = shared.lock().unwrap().clone();
                let answer = if head.starts_with("GET /props") {
                    props
                } else {
                    apply
                };
                let _ = stream.write_all(&answer);
            }
        });
        FakeServer { url, answers }
    }

    fn answer(&self, props: Vec<u8>, apply: Vec<u8>) {
        *self.answers.lock().unwrap() = (props, apply);
    }
}

/// The request up to its blank line, and its body when it says how long it is.
fn read_head(stream: &mut impl Read) -> String {
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") && seen.len() < 64 * 1024 {
        match stream.read(&mut byte) {
            Ok(1) => seen.push(byte[0]),
            _ => break,
        }
    }
    let head = String::from_utf8_lossy(&seen).into_owned();
    let length = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().to_string())
        })
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let _ = stream.read_exact(&mut vec![0; length.min(1 << 20)]);
    head
}

/// An HTTP answer around `body`: a status, and a length that is right, wrong, chunked,
/// missing (read to the close), or raw bytes instead.
fn http_answer() -> impl Strategy<Value = Vec<u8>> {
    let status = prop::sample::select(
        &[
            "200 OK",
            "400 Bad Request",
            "500 Error",
            "302 Found",
            "204 No Content",
            "999 What",
        ][..],
    );
    let framing =
        prop::sample::select(&["length", "short", "long", "chunked", "bad-chunk", "close"][..]);
    prop_oneof![
        8 => (status, framing, answer_bytes()).prop_map(|(status, framing, body)| {
            let mut out = format!("HTTP/1.1 {status}\r\nContent-Type: application/json\r\n").into_bytes();
            match framing {
                "length" => out.extend(format!("Content-Length: {}\r\n\r\n", body.len()).bytes()),
                "short" => out.extend(format!("Content-Length: {}\r\n\r\n", body.len() / 2).bytes()),
                "long" => out.extend(format!("Content-Length: {}\r\n\r\n", body.len() + 100).bytes()),
                "chunked" => {
                    out.extend(format!("Transfer-Encoding: chunked\r\n\r\n{:x}\r\n", body.len()).bytes());
                    out.extend(&body);
                    out.extend(b"\r\n0\r\n\r\n");
                    return out;
                }
                "bad-chunk" => out.extend(b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"),
                _ => out.extend(b"\r\n"),
            }
            out.extend(&body);
            out
        }),
        1 => prop::collection::vec(any::<u8>(), 0..64),
    ]
}

fn fake_engine() -> &'static Mutex<FakeEngine> {
    static ENGINE: OnceLock<Mutex<FakeEngine>> = OnceLock::new();
    ENGINE.get_or_init(|| Mutex::new(FakeEngine::new()))
}

fn fake_server() -> &'static FakeServer {
    static SERVER: OnceLock<FakeServer> = OnceLock::new();
    SERVER.get_or_init(FakeServer::start)
}

fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    format!("{text} ({} bytes)", bytes.len())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn external_engine_answers_end_bounded(
        out in answer_bytes(),
        err in prop_oneof![Just(Vec::new()), answer_bytes()],
        code in prop::sample::select(&[0u8, 0, 0, 1, 2, 127][..]),
        node in any::<bool>(),
    ) {
        static BUDGET: OnceLock<Budget> = OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::labelled("engine answers", ENDS));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        last_input(&format!("{}\n{}\n{code}", shown(&out), shown(&err)));
        let engine = fake_engine().lock().unwrap();
        engine.answer(&out, &err, code);
        let which = if node { Engine::HfJinja } else { Engine::Python };
        let started = Instant::now();
        let render = compare::render(which, "x", &conversation(), &engine.setup());
        prop_assert!(started.elapsed() < Duration::from_secs(15), "slow");
        budget.ended(bounded(&render)?);
    }

    #[test]
    fn llama_server_answers_end_bounded(props in http_answer(), apply in http_answer()) {
        static BUDGET: OnceLock<Budget> = OnceLock::new();
        let budget = BUDGET.get_or_init(|| Budget::labelled("llama-server answers", ENDS));
        if budget.spent() {
            return Ok(());
        }
        budget.count();
        last_input(&format!("{}\n{}", shown(&props), shown(&apply)));
        let server = fake_server();
        server.answer(props, apply);
        let mut setup = EngineSetup::default();
        setup.llama_server = Some(server.url.clone());
        setup.bounds = Bounds::default().with_timeout(Duration::from_secs(2));
        setup.bounds.max_output = CAP;
        let started = Instant::now();
        let render = compare::render(Engine::LlamaCpp, "{%- if m.content is none %}x{% endif %}", &conversation(), &setup);
        prop_assert!(started.elapsed() < Duration::from_secs(15), "slow");
        budget.ended(bounded(&render)?);
    }
}

#[test]
fn the_stand_in_engine_answers_as_the_real_ones_do() {
    // The harness itself: a well-formed answer comes through whole.
    let engine = fake_engine().lock().unwrap();
    engine.answer(br#"{"version": "1.0", "prompt": "<s>Hi"}"#, b"", 0);
    let render = compare::render(Engine::Python, "x", &conversation(), &engine.setup());
    assert_eq!(render.result, Ok("<s>Hi".to_string()));
    assert_eq!(render.version, "1.0");
}
