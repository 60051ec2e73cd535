//! Fetching template files from the Hub, against a local HTTP server this test starts on
//! 127.0.0.1 that answers the Hub's own paths (`/api/models/{repo}/revision/{rev}`,
//! `/{repo}/resolve/{commit}/{file}`) with its headers (`X-Repo-Commit`, `ETag`,
//! `X-Linked-Etag`, `X-Error-Code`). The server stops by itself after a minute at most;
//! no test reaches the internet.

#![cfg(feature = "hub")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chatplate_core::catalog::hf_cache::{self, ModelId};
use chatplate_core::catalog::hub::{fetch_templates, FetchEvent, HubError, HubSettings, Token};

const COMMIT: &str = "abcdef0123456789abcdef0123456789abcdef01";
const GOOD_TOKEN: &str = "hf_good_secret_token";
const TEMPLATE: &str =
    "{% for m in messages %}{{ bos_token }}{{ m.content }}{{ eos_token }}{% endfor %}";
const TOOL_TEMPLATE: &str = "(tool_use){% for m in messages %}{{ m.content }}{% endfor %}";

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    authorized: bool,
}

/// The fake Hub: its address, what it was asked, and a flag that stops it.
struct Hub {
    endpoint: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Hub {
    fn start() -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, halt) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            let started = Instant::now();
            while !halt.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(60) {
                match listener.accept() {
                    Ok((stream, _)) => serve(stream, port, &log),
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Hub {
            endpoint: format!("http://127.0.0.1:{port}"),
            seen,
            stop,
        }
    }

    fn settings(&self, cache: &Path, token: Option<&str>) -> HubSettings {
        HubSettings {
            endpoint: self.endpoint.clone(),
            token: token.map(Token::new),
            offline: false,
            cache: cache.to_path_buf(),
        }
    }

    fn paths(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.path.clone())
            .collect()
    }
}

fn serve(stream: TcpStream, port: u16, log: &Mutex<Vec<Seen>>) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    let _ = reader.read_line(&mut request_line);
    let mut authorization = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("authorization") {
                authorization = Some(value.trim().to_string());
            }
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    log.lock().unwrap().push(Seen {
        path: path.clone(),
        authorized: authorization.is_some(),
    });
    let (status, headers, body) = answer(&path, authorization.as_deref(), port);
    let mut out = stream;
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body.as_bytes());
}

type Answer = (&'static str, Vec<(&'static str, String)>, String);

/// A named template whose file name sets the terminal's title when printed as it is.
const EVIL_FILE: &str = "additional_chat_templates/t\x1b]0;pwned\x07.jinja";

/// A URL path segment with its `%XX` escapes decoded.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = text.get(index + 1..index + 3);
        match (
            bytes[index],
            hex.and_then(|h| u8::from_str_radix(h, 16).ok()),
        ) {
            (b'%', Some(byte)) => {
                out.push(byte);
                index += 3;
            }
            (byte, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The Hub's answers for a few repositories.
fn answer(path: &str, authorization: Option<&str>, port: u16) -> Answer {
    let files: BTreeMap<&str, (&str, String)> = BTreeMap::from([
        (
            "tokenizer_config.json",
            (
                "etag-config",
                r#"{"bos_token": "<s>", "eos_token": "</s>"}"#.to_string(),
            ),
        ),
        (
            "chat_template.jinja",
            ("etag-template", TEMPLATE.to_string()),
        ),
        (
            "additional_chat_templates/tool_use.jinja",
            ("etag-tool-use", TOOL_TEMPLATE.to_string()),
        ),
        (EVIL_FILE, ("etag-evil", TOOL_TEMPLATE.to_string())),
    ]);
    let not_found = |code: &str| {
        (
            "404 Not Found",
            vec![("X-Error-Code", code.to_string())],
            "{}".into(),
        )
    };
    let token_ok = authorization == Some(&format!("Bearer {GOOD_TOKEN}")[..]);
    if let Some(rest) = path.strip_prefix("/api/models/") {
        let (repo, revision) = rest.split_once("/revision/").unwrap_or((rest, ""));
        let siblings: Vec<&str> = match repo {
            "acme/open" | "acme/gated" | "acme/moved" => ["config.json", "model.safetensors"]
                .into_iter()
                .chain(files.keys().copied().filter(|f| *f != EVIL_FILE))
                .collect(),
            "acme/evil" => vec!["config.json", "chat_template.jinja", EVIL_FILE],
            "acme/gguf-only" => vec!["model-Q4_K_M.gguf", "README.md"],
            _ => {
                return (
                    "401 Unauthorized",
                    vec![("X-Error-Code", "RepoNotFound".into())],
                    "{}".into(),
                )
            }
        };
        if revision != "main" && revision != COMMIT {
            return not_found("RevisionNotFound");
        }
        let list: Vec<String> = siblings
            .iter()
            .map(|f| format!(r#"{{"rfilename": {}}}"#, serde_json::to_string(f).unwrap()))
            .collect();
        let body = format!(
            r#"{{"id": "{repo}", "sha": "{COMMIT}", "siblings": [{}]}}"#,
            list.join(", ")
        );
        return ("200 OK", vec![], body);
    }
    if let Some(name) = path.strip_prefix(&format!("/cdn/{COMMIT}/")) {
        let (_, text) = &files[name];
        return ("200 OK", vec![], text.clone());
    }
    let Some((repo, file)) = path
        .trim_start_matches('/')
        .split_once(&format!("/resolve/{COMMIT}/"))
    else {
        return not_found("EntryNotFound");
    };
    if repo == "acme/gated" && !token_ok {
        return match authorization {
            None => (
                "401 Unauthorized",
                vec![("X-Error-Code", "GatedRepo".into())],
                "{}".into(),
            ),
            Some(_) => (
                "403 Forbidden",
                vec![("X-Error-Code", "GatedRepo".into())],
                "{}".into(),
            ),
        };
    }
    let file = percent_decoded(file);
    let Some((etag, text)) = files.get(file.as_str()) else {
        return not_found("EntryNotFound");
    };
    let mut headers = vec![("X-Repo-Commit", COMMIT.to_string())];
    if repo == "acme/moved" {
        // Like the Hub's CDN: the file is elsewhere (another origin), the metadata here.
        headers.push(("X-Linked-Etag", format!("\"{etag}\"")));
        headers.push((
            "Location",
            format!("http://localhost:{port}/cdn/{COMMIT}/{file}"),
        ));
        return ("302 Found", headers, String::new());
    }
    headers.push(("ETag", format!("\"{etag}\"")));
    ("200 OK", headers, text.clone())
}

fn fetch(
    hub: &Hub,
    cache: &Path,
    id: &str,
    token: Option<&str>,
) -> Result<Vec<FetchEvent>, HubError> {
    let mut events = Vec::new();
    let settings = hub.settings(cache, token);
    fetch_templates(&settings, &ModelId::parse(id).unwrap(), &mut |e| {
        events.push(e.clone())
    })?;
    Ok(events)
}

#[test]
fn only_the_template_files_land_in_the_huggingface_hub_layout() {
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    let events = fetch(&hub, cache.path(), "acme/open", None).unwrap();
    assert!(matches!(&events[0], FetchEvent::Resolving { .. }));
    assert!(matches!(events.last(), Some(FetchEvent::Done(s)) if s.commit == COMMIT));
    let repo = cache.path().join("models--acme--open");
    assert_eq!(
        std::fs::read_to_string(repo.join("refs/main")).unwrap(),
        COMMIT
    );
    let snapshot = repo.join("snapshots").join(COMMIT);
    let link = std::fs::read_link(snapshot.join("chat_template.jinja")).unwrap();
    assert_eq!(link, PathBuf::from("../../blobs/etag-template"));
    let nested =
        std::fs::read_link(snapshot.join("additional_chat_templates/tool_use.jinja")).unwrap();
    assert_eq!(nested, PathBuf::from("../../../blobs/etag-tool-use"));
    assert_eq!(
        std::fs::read_to_string(repo.join("blobs/etag-template")).unwrap(),
        TEMPLATE
    );
    let fetched = hub.paths();
    assert!(!fetched
        .iter()
        .any(|p| p.contains("safetensors") || p.contains("config.json\0")));
    assert_eq!(fetched.len(), 4, "{fetched:?}");

    // Offline from now on: the cache resolves it, with its named template.
    let snapshot = hf_cache::snapshot(cache.path(), &ModelId::parse("acme/open").unwrap()).unwrap();
    let set =
        chatplate_core::catalog::model::load(chatplate_core::catalog::ModelPlace::Cache(snapshot))
            .unwrap();
    assert_eq!(set.names(), ["default", "tool_use"]);
    assert_eq!(set.choose(false).unwrap().bos_token.as_deref(), Some("<s>"));
}

#[test]
fn python_tools_find_what_was_fetched() {
    let python = std::env::var("CHATPLATE_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = std::process::Command::new(&python)
        .args(["-c", "import huggingface_hub"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        crate::common::skip_unless_ci(
            "python_tools_find_what_was_fetched",
            &format!("{python} has no huggingface_hub"),
        );
        return;
    }
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    fetch(&hub, cache.path(), "acme/open", None).unwrap();
    let script = "import sys; from huggingface_hub import try_to_load_from_cache as t; \
                  print(open(t('acme/open', 'additional_chat_templates/tool_use.jinja', cache_dir=sys.argv[1])).read())";
    let output = std::process::Command::new(&python)
        .args(["-c", script, cache.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim_end(),
        TOOL_TEMPLATE,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn gated_models_need_an_accepted_token_sent_only_to_the_hub() {
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    let err = fetch(&hub, cache.path(), "acme/gated", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("401") && err.contains("HF_TOKEN"), "{err}");
    let err = fetch(&hub, cache.path(), "acme/gated", Some("hf_wrong"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("403") && err.contains("gated"), "{err}");
    assert!(!err.contains("hf_wrong"));
    fetch(&hub, cache.path(), "acme/gated", Some(GOOD_TOKEN)).unwrap();
    // A redirect to another origin (the CDN) gets no token.
    fetch(&hub, cache.path(), "acme/moved", Some(GOOD_TOKEN)).unwrap();
    let seen = hub.seen.lock().unwrap().clone();
    let cdn: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.path.starts_with("/cdn/"))
        .collect();
    assert_eq!(cdn.len(), 3);
    assert!(cdn.iter().all(|s| !s.authorized), "{cdn:?}");
    let moved = cache.path().join("models--acme--moved/blobs/etag-tool-use");
    assert_eq!(std::fs::read_to_string(moved).unwrap(), TOOL_TEMPLATE);
}

#[test]
fn missing_models_revisions_and_templates_are_clear_errors() {
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    let err = fetch(&hub, cache.path(), "acme/nothing", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("401") && err.contains("does not exist"),
        "{err}"
    );
    let err = fetch(&hub, cache.path(), "acme/open@v9", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("revision \"v9\" of acme/open not found") && err.contains("404"),
        "{err}"
    );
    let err = fetch(&hub, cache.path(), "acme/gguf-only", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no chat template files") && err.contains(".gguf"),
        "{err}"
    );
}

#[test]
fn offline_never_connects_and_no_network_says_so() {
    let hub = Hub::start();
    let cache = tempfile::tempdir().unwrap();
    let mut settings = hub.settings(cache.path(), None);
    settings.offline = true;
    let id = ModelId::parse("acme/open").unwrap();
    let err = fetch_templates(&settings, &id, &mut |_| {}).unwrap_err();
    assert!(matches!(err, HubError::Offline { .. }));
    assert!(err.to_string().contains("HF_HUB_OFFLINE is set"));
    assert!(hub.paths().is_empty());

    // A port nothing listens on.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    settings.offline = false;
    settings.endpoint = endpoint.clone();
    let err = fetch_templates(&settings, &id, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("cannot reach {endpoint}")), "{err}");
}

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

// Issue 18: Hub file names reached the terminal as they were, in the progress lines and
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
