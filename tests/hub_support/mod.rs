//! A fake Hugging Face Hub for the Hub tests: a local HTTP server on 127.0.0.1 that
//! answers the Hub's own paths (`/api/models/{repo}/revision/{rev}`,
//! `/{repo}/resolve/{commit}/{file}`) with its headers (`X-Repo-Commit`, `ETag`,
//! `X-Linked-Etag`, `X-Error-Code`). The server stops by itself after a minute at most;
//! no test reaches the internet. Used by the engine's Hub tests (crates/core/tests) and
//! the command line's (tests/engine).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chatplate_core::catalog::hub::{HubSettings, Token};

pub const COMMIT: &str = "abcdef0123456789abcdef0123456789abcdef01";
pub const GOOD_TOKEN: &str = "hf_good_secret_token";
pub const TEMPLATE: &str =
    "{% for m in messages %}{{ bos_token }}{{ m.content }}{{ eos_token }}{% endfor %}";
pub const TOOL_TEMPLATE: &str = "(tool_use){% for m in messages %}{{ m.content }}{% endfor %}";

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub authorized: bool,
}

/// The fake Hub: its address, what it was asked, and a flag that stops it.
pub struct Hub {
    pub endpoint: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Hub {
    pub fn start() -> Hub {
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

    pub fn settings(&self, cache: &Path, token: Option<&str>) -> HubSettings {
        HubSettings {
            endpoint: self.endpoint.clone(),
            token: token.map(Token::new),
            offline: false,
            cache: cache.to_path_buf(),
            token_for_files: false,
        }
    }

    pub fn paths(&self) -> Vec<String> {
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
