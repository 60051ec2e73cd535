//! A real llama-server for the app's and the CLI's tests: the binary and tiny GGUF from
//! scripts/build_llama_server.sh (target/llama-server, or `CHATPLATE_LLAMA_SERVER` / `CHATPLATE_LLAMA_GGUF`), started on
//! a free port and killed by a guard when the test ends.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A running llama-server, killed when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The llama-server binary and the tiny GGUF, or `None` (skipped; a failure under CI=true).
pub fn server_files(test: &str) -> Option<(PathBuf, PathBuf)> {
    let cache = Path::new(ROOT).join("target/llama-server");
    let path =
        |var: &str, default: PathBuf| std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
    let binary = path("CHATPLATE_LLAMA_SERVER", cache.join("bin/llama-server"));
    let gguf = path("CHATPLATE_LLAMA_GGUF", cache.join("tiny.gguf"));
    if binary.is_file() && gguf.is_file() {
        return Some((binary, gguf));
    }
    common::skip_unless_ci(
        test,
        "no llama-server or tiny GGUF (run scripts/build_llama_server.sh)",
    );
    None
}

/// Starts llama-server on a free port with `template` as its chat template (or the GGUF's
/// own when `None`), and waits until it answers `/health`.
pub fn start(files: &(PathBuf, PathBuf), template: Option<&Path>, log: &Path) -> Server {
    try_start(files, template, log).unwrap_or_else(|said| panic!("{said}"))
}

/// [`start`], or what the server said when it exited instead (llama-server refuses a
/// template it cannot apply at startup).
pub fn try_start(
    files: &(PathBuf, PathBuf),
    template: Option<&Path>,
    log: &Path,
) -> Result<Server, String> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let mut command = Command::new(&files.0);
    command
        .args(["-m", files.1.to_str().unwrap()])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", "512", "-t", "1", "--jinja", "--no-webui"]);
    if let Some(template) = template {
        command.args(["--chat-template-file", template.to_str().unwrap()]);
    }
    let log_file = std::fs::File::create(log).expect("log file");
    let child = command
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .spawn()
        .expect("llama-server starts");
    let mut server = Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !healthy(port) {
        if let Ok(Some(status)) = server.child.try_wait() {
            let said = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!("llama-server exited ({status}):\n{said}"));
        }
        assert!(Instant::now() < deadline, "llama-server did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
    server.url = format!("http://127.0.0.1:{port}");
    Ok(server)
}

fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && answer.starts_with("HTTP/1.1 200")
}
