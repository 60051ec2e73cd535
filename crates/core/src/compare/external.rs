//! The engines that run in a child process: `python` (the user's transformers) and
//! `hf-jinja` (@huggingface/jinja on Node). The child gets the inputs as one JSON document
//! on stdin and answers with one on stdout. It runs an untrusted template, so it is
//! bounded: killed after [`Bounds::timeout`], and its output cut at [`Bounds::max_output`].

use chatplate_render::remedy::{means, Knob};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use chatplate_render::Conversation;
use serde_json::Value as Json;

use super::{input_document, scripts, Engine, EngineError, EngineRender, EngineSetup};

/// How far one external render may go.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Bounds {
    /// Wall time before the child is killed (interpreter start-up included).
    pub timeout: Duration,
    /// Most bytes read from the child's stdout (and, separately, its stderr).
    pub max_output: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            timeout: Duration::from_secs(30),
            max_output: 64 << 20,
        }
    }
}

impl Bounds {
    /// These bounds with `timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// How to make the `transformers` engine available.
fn python_how() -> String {
    format!(
        "install transformers in a Python environment (`pip install transformers`) \
         and name its interpreter with {} PATH or CHATPLATE_PYTHON",
        means(Knob::Python)
    )
}

const NODE_HOW: &str =
    "install Node.js and @huggingface/jinja (`npm install @huggingface/jinja`), \
     where Node finds it: a node_modules folder above the working directory, or NODE_PATH";

/// Renders in the external `engine` (`Engine::Python` or `Engine::HfJinja`).
pub(super) fn render(
    engine: Engine,
    template: &str,
    conversation: &Conversation,
    setup: &EngineSetup,
) -> EngineRender {
    let (program, flag, script, how) = match engine {
        Engine::Python => match &setup.python {
            Some(python) => (python.as_path(), "-c", scripts::PYTHON, python_how()),
            None => return missing(engine, "no Python interpreter named".into(), python_how()),
        },
        _ => (
            setup.node.as_path(),
            "-e",
            scripts::HF_JINJA,
            NODE_HOW.to_string(),
        ),
    };
    let input = input_document(template, conversation).to_string();
    match run(program, &[flag, script], input.as_bytes(), setup.bounds) {
        Ok(stdout) => answer(engine, &stdout, &how),
        Err(RunError::Spawn(err)) => missing(
            engine,
            format!("cannot run {}: {err}", program.display()),
            how,
        ),
        Err(RunError::Engine(err)) => EngineRender {
            engine,
            version: "unknown".into(),
            result: Err(err),
            url: None,
            note: None,
        },
    }
}

fn missing(engine: Engine, reason: String, how: String) -> EngineRender {
    EngineRender {
        engine,
        version: "not installed".into(),
        result: Err(EngineError::NotInstalled {
            engine: engine.name(),
            reason,
            how,
        }),
        url: None,
        note: None,
    }
}

/// The child's JSON answer: `{"prompt"|"error", "version"}` or `{"missing"}`.
fn answer(engine: Engine, stdout: &[u8], how: &str) -> EngineRender {
    let Ok(Json::Object(fields)) = serde_json::from_slice::<Json>(stdout) else {
        let text = String::from_utf8_lossy(stdout);
        let failure = EngineError::Failed(format!("unexpected output: {}", text.trim()));
        return EngineRender {
            engine,
            version: "unknown".into(),
            result: Err(failure),
            url: None,
            note: None,
        };
    };
    let text = |key: &str| fields.get(key).and_then(Json::as_str).map(str::to_string);
    if let Some(reason) = text("missing") {
        return missing(engine, reason, how.to_string());
    }
    let result = match (text("prompt"), text("error")) {
        (Some(prompt), _) => Ok(prompt),
        (None, Some(error)) => Err(EngineError::Render(error)),
        (None, None) => Err(EngineError::Failed(
            "no prompt and no error in its answer".into(),
        )),
    };
    let version = text("version").unwrap_or_else(|| "unknown".into());
    EngineRender {
        engine,
        version,
        result,
        url: None,
        note: None,
    }
}

enum RunError {
    /// The program could not be started (not installed).
    Spawn(std::io::Error),
    /// It started, but failed, ran too long or wrote too much.
    Engine(EngineError),
}

/// Runs `program args` with `input` on stdin; its stdout when it exits successfully.
fn run(program: &Path, args: &[&str], input: &[u8], bounds: Bounds) -> Result<Vec<u8>, RunError> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(RunError::Spawn)?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    // A child that never reads its stdin must not block us: the write has its own thread.
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let stdout = capped_reader(
        child.stdout.take().expect("stdout is piped"),
        bounds.max_output,
    );
    let stderr = capped_reader(
        child.stderr.take().expect("stderr is piped"),
        bounds.max_output,
    );
    let status = wait_bounded(&mut child, bounds.timeout);
    let _ = writer.join();
    let out = stdout.join().unwrap_or_default();
    let err = stderr.join().unwrap_or_default();
    let status = status.ok_or(RunError::Engine(EngineError::TimedOut(bounds.timeout)))?;
    if out.len() > bounds.max_output || err.len() > bounds.max_output {
        return Err(RunError::Engine(EngineError::TooLarge(bounds.max_output)));
    }
    if !status.success() {
        let said = String::from_utf8_lossy(&err);
        let last = said
            .trim()
            .lines()
            .last()
            .unwrap_or("no message")
            .to_string();
        return Err(RunError::Engine(EngineError::Failed(format!(
            "{status}: {last}"
        ))));
    }
    Ok(out)
}

/// Reads `source` to its end in a thread, keeping at most `cap + 1` bytes (one more than
/// allowed shows it went over) and discarding the rest, so the child never blocks.
fn capped_reader(mut source: impl Read + Send + 'static, cap: usize) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buffer = [0u8; 64 * 1024];
        while let Ok(n) = source.read(&mut buffer) {
            if n == 0 {
                break;
            }
            let room = (cap + 1).saturating_sub(kept.len());
            kept.extend_from_slice(&buffer[..n.min(room)]);
        }
        kept
    })
}

/// Waits for `child` until `timeout`; kills it then (`None`).
fn wait_bounded(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}
