//! The engines that run in a child process: `python` (the user's transformers) and
//! `hf-jinja` (@huggingface/jinja on Node). The child gets the inputs as one JSON document
//! on stdin and answers with one on stdout. It runs an untrusted template, so it is
//! bounded: killed with everything it started after [`Bounds::timeout`], and its output
//! cut at [`Bounds::max_output`]. It starts fenced from the folder chatplate runs in
//! ([`process`]): nothing there is imported or required.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use chatplate_render::remedy::{means, Knob};
use chatplate_render::{visible, Conversation};
use serde_json::Value as Json;

use super::persistent::{AskError, Persistent};
use super::plugin::{Plugin, Runs, PROTOCOL_VERSION};
use super::token_level::{self, TokenAnswer, TokenComparison};
use super::{hf_jinja, input_document, process, scripts};
use super::{Engine, EngineError, EngineRender, EngineSetup};

/// Longest version an engine may report, in characters.
const MAX_VERSION_CHARS: usize = 100;

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

const NODE_HOW: &str = "install Node.js and @huggingface/jinja in a folder of your choice \
     (`npm install --prefix DIR @huggingface/jinja`) and name DIR/node_modules in NODE_PATH, \
     or install it globally (`npm install -g @huggingface/jinja`); a node_modules folder \
     of the working directory is never used";

/// How one engine's child is started.
struct Launch {
    /// The interpreter, located (an absolute path).
    program: PathBuf,
    /// Its arguments: isolation flags and the embedded script, or a plug-in's own.
    args: Vec<String>,
    /// The input document.
    input: Json,
    /// The reference's prompt, sent to a plug-in (its answer in tokens is compared with
    /// this prompt's tokens).
    reference: Option<String>,
}

/// How to make a plug-in available.
const PLUGIN_HOW: &str = "check the program of the `cmd:` engine (it runs in an empty \
     folder of its own, with a short environment: see docs/compare.md)";

/// How to make `mistral-common` available.
const MISTRAL_HOW: &str = "install mistral-common in a Python environment \
     (`pip install 'mistral-common[sentencepiece]'`) and name its interpreter with --python or \
     CHATPLATE_PYTHON";

/// How to make a `py:` encoder available.
const PY_HOW: &str = "check the `py:` engine's file or module and function; it runs in the \
     Python named by --python or CHATPLATE_PYTHON, isolated (`python -I`: an installed module \
     or a file, never the working folder's)";

/// Renders in the external `engine` (`Engine::Python`, `Engine::HfJinja` or a plug-in).
/// A persistent plug-in (`lines:`) is started for this render alone.
pub(super) fn render(
    engine: Engine,
    template: &str,
    conversation: &Conversation,
    setup: &EngineSetup,
) -> EngineRender {
    if let Engine::Plugin(plugin) = engine {
        if matches!(plugin.runs, Runs::Command { lines: true, .. }) {
            return render_kept(&mut None, engine, template, conversation, setup);
        }
    }
    let (launch, how) = launch(engine, template, conversation, setup);
    let launch = match launch {
        Ok(launch) => launch,
        Err(reason) => return missing(engine, reason, how),
    };
    match run(&launch, setup.bounds) {
        Ok(stdout) => answer(engine, &stdout, &how, launch.reference.as_deref()),
        Err(RunError::Spawn(err)) => missing(
            engine,
            format!("cannot run {}: {err}", launch.program.display()),
            how,
        ),
        Err(RunError::Engine(err)) => failed(engine, err),
    }
}

/// How `engine` is started for this conversation, and how to make it available.
fn launch(
    engine: Engine,
    template: &str,
    conversation: &Conversation,
    setup: &EngineSetup,
) -> (Result<Launch, String>, String) {
    let input = input_document(template, conversation);
    let Engine::Plugin(plugin) = engine else {
        return match engine {
            Engine::Python => (python(setup, input), python_how()),
            _ => (node(setup, input), NODE_HOW.to_string()),
        };
    };
    // A plug-in gets the reference's prompt too, so one that answers tokens can tokenize
    // it with its own tokenizer (see [`super::token_level`]).
    let reference = super::reference(template, conversation, setup.limits).ok();
    let (launch, how) = match &plugin.runs {
        Runs::Command { .. } => (Ok(command(plugin, input)), PLUGIN_HOW.to_string()),
        Runs::Encoder { .. } => (encoder(setup, plugin, input), PY_HOW.to_string()),
        Runs::MistralCommon { .. } => (mistral(setup, plugin, input), MISTRAL_HOW.to_string()),
    };
    let launch = launch.map(|mut launch| {
        launch.input["protocol"] = Json::from(PROTOCOL_VERSION);
        launch.input["reference"] = reference.clone().map_or(Json::Null, Json::String);
        launch.reference = reference;
        launch
    });
    (launch, how)
}

/// Renders through `kept`, one engine process answering a request a line for as long as
/// it lives (started on the first render, and again after one that failed): Python,
/// Node, a `lines:` program or the scripts chatplate carries for `py:` and
/// `mistral-common`.
pub(super) fn render_kept(
    kept: &mut Option<Persistent>,
    engine: Engine,
    template: &str,
    conversation: &Conversation,
    setup: &EngineSetup,
) -> EngineRender {
    let (launch, how) = launch(engine, template, conversation, setup);
    let launch = match launch {
        Ok(launch) => launch,
        Err(reason) => return missing(engine, reason, how),
    };
    if kept.is_none() {
        let mut args: Vec<&OsStr> = launch.args.iter().map(OsStr::new).collect();
        // The scripts chatplate carries read a line at a time when told so; a `lines:`
        // program always does.
        match engine {
            Engine::HfJinja => args.extend(["--", "--lines"].map(OsStr::new)),
            Engine::Plugin(plugin) if matches!(plugin.runs, Runs::Command { .. }) => {}
            _ => args.push(OsStr::new("--lines")),
        }
        match Persistent::start(&launch.program, &args, setup.bounds.max_output) {
            Ok(started) => *kept = Some(started),
            Err(err) => {
                let reason = format!("cannot run {}: {err}", launch.program.display());
                return missing(engine, reason, how);
            }
        }
    }
    let Some(process) = kept.as_mut() else {
        return missing(engine, "not started".into(), how);
    };
    let request = launch.input.to_string().into_bytes();
    let failure = match process.ask(&request, setup.bounds.timeout) {
        Ok(line) => return answer(engine, &line, &how, launch.reference.as_deref()),
        Err(AskError::TimedOut) => EngineError::TimedOut(setup.bounds.timeout),
        Err(AskError::TooLarge) => EngineError::TooLarge(setup.bounds.max_output),
        Err(AskError::Ended(last)) => {
            let last = visible::cut(&last, visible::MAX_ECHO_CHARS).into_owned();
            EngineError::Failed(format!("the engine ended without answering: {last}"))
        }
    };
    *kept = None;
    failed(engine, failure)
}

fn failed(engine: Engine, error: EngineError) -> EngineRender {
    EngineRender {
        engine,
        version: "unknown".into(),
        result: Err(error),
        url: None,
        note: None,
        tokens: None,
    }
}

/// The user's Python, run isolated (`-I`: neither the working directory nor the script's
/// folder on `sys.path`, no `PYTHON*` variables, as the environment is the child's own).
fn python(setup: &EngineSetup, input: Json) -> Result<Launch, String> {
    let named = setup
        .python
        .as_deref()
        .ok_or_else(|| "no Python interpreter named".to_string())?;
    let program =
        process::locate(named).map_err(|err| format!("cannot run {}: {err}", named.display()))?;
    Ok(Launch {
        program,
        args: ["-I", "-c", scripts::PYTHON].map(String::from).to_vec(),
        input,
        reference: None,
    })
}

/// Node, given the absolute folder of @huggingface/jinja (see [`hf_jinja`]).
fn node(setup: &EngineSetup, mut input: Json) -> Result<Launch, String> {
    let program = process::locate(&setup.node)
        .map_err(|err| format!("cannot run {}: {err}", setup.node.display()))?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let folders = hf_jinja::search_folders(&setup.node_modules, &program, home.as_deref());
    let package = hf_jinja::find(&folders).ok_or_else(|| hf_jinja::not_found(&folders))?;
    input["package"] = Json::String(package.to_string_lossy().into_owned());
    Ok(Launch {
        program,
        args: ["-e", scripts::HF_JINJA].map(String::from).to_vec(),
        input,
        reference: None,
    })
}

/// A plug-in program, given the request (located when it runs).
fn command(plugin: &Plugin, input: Json) -> Launch {
    let (program, args) = match &plugin.runs {
        Runs::Command { program, args, .. } => (program.clone(), args.clone()),
        _ => (PathBuf::new(), Vec::new()),
    };
    Launch {
        program,
        args,
        input,
        reference: None,
    }
}

/// mistral-common's encoder in the user's Python, isolated, told which tokenizer.
fn mistral(setup: &EngineSetup, plugin: &Plugin, mut input: Json) -> Result<Launch, String> {
    if let Runs::MistralCommon { tokenizer } = &plugin.runs {
        input["tokenizer"] = Json::String(tokenizer.clone());
    }
    let mut launch = python(setup, input)?;
    launch.args = ["-I", "-c", scripts::MISTRAL_COMMON]
        .map(String::from)
        .to_vec();
    Ok(launch)
}

/// A Python encoder: the user's Python, isolated, running the encoder script with the
/// request and which function to call.
fn encoder(setup: &EngineSetup, plugin: &Plugin, mut input: Json) -> Result<Launch, String> {
    if let Runs::Encoder {
        file,
        module,
        function,
    } = &plugin.runs
    {
        input["encoder"] = match (file, module) {
            (Some(file), _) => serde_json::json!({"file": file, "function": function}),
            (None, module) => serde_json::json!({"module": module, "function": function}),
        };
    }
    let mut launch = python(setup, input)?;
    launch.args = ["-I", "-c", scripts::PY_ENCODER].map(String::from).to_vec();
    Ok(launch)
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
        tokens: None,
    }
}

/// The child's JSON answer: `{"prompt"|"tokens"|"error", "version"}` or `{"missing"}`;
/// tokens are compared with the `reference` prompt's (see [`token_level`]).
fn answer(engine: Engine, stdout: &[u8], how: &str, reference: Option<&str>) -> EngineRender {
    let Ok(Json::Object(fields)) = serde_json::from_slice::<Json>(stdout) else {
        let text = String::from_utf8_lossy(stdout);
        let failure = EngineError::Failed(format!(
            "unexpected output: {}",
            visible::cut(text.trim(), visible::MAX_ECHO_CHARS)
        ));
        return failed(engine, failure);
    };
    let text = |key: &str| fields.get(key).and_then(Json::as_str).map(str::to_string);
    // Messages and the version are cut (a template's error can be as long as it likes);
    // the prompt is kept whole, within the output cap.
    let said = |key: &str, max: usize| text(key).map(|t| visible::cut(&t, max).into_owned());
    if let Some(reason) = said("missing", visible::MAX_ECHO_CHARS) {
        return missing(engine, reason, how.to_string());
    }
    let error = said("error", visible::MAX_MESSAGE_CHARS).or_else(|| error_object(&fields));
    let mut tokens = None;
    let result = match (text("prompt"), error, TokenAnswer::read(&fields)) {
        (_, Some(error), _) => Err(EngineError::Render(error)),
        (prompt, None, Some(answer)) => {
            compared_tokens(answer, prompt, reference).map(|(prompt, compared)| {
                tokens = compared;
                prompt
            })
        }
        (Some(prompt), None, None) => Ok(prompt),
        (None, None, None) => Err(EngineError::Failed(
            "no prompt, no tokens and no error in its answer".into(),
        )),
    };
    let version = said("version", MAX_VERSION_CHARS).unwrap_or_else(|| "unknown".into());
    EngineRender {
        engine,
        version,
        result,
        url: None,
        note: None,
        tokens,
    }
}

/// An answer in tokens against the reference's tokens: the prompt it stands for (the
/// reference's own when the tokens are the same, so text comparisons agree too) and the
/// comparison (none when the reference did not render).
fn compared_tokens(
    answer: Result<TokenAnswer, String>,
    prompt: Option<String>,
    reference: Option<&str>,
) -> Result<(String, Option<TokenComparison>), EngineError> {
    let answer = answer.map_err(EngineError::Failed)?;
    let text = prompt.or_else(|| answer.text()).unwrap_or_default();
    let Some(reference) = reference else {
        return Ok((text, None));
    };
    let Some(reference_tokens) = &answer.reference else {
        return Err(EngineError::Failed(
            "it answered \"tokens\" without \"reference_tokens\" (the request's \
             \"reference\" prompt tokenized by the same tokenizer)"
                .into(),
        ));
    };
    let compared = token_level::compare(reference_tokens, &answer.tokens);
    let text = match compared.first {
        None => reference.to_string(),
        Some(_) => text,
    };
    Ok((text, Some(compared)))
}

/// A plug-in's `{"error": {"type", "message"}}`, as `type: message`.
fn error_object(fields: &serde_json::Map<String, Json>) -> Option<String> {
    let error = fields.get("error")?.as_object()?;
    let part = |key: &str| error.get(key).and_then(Json::as_str);
    let message = part("message").unwrap_or("no message");
    let said = match part("type") {
        Some(kind) => format!("{kind}: {message}"),
        None => message.to_string(),
    };
    Some(visible::cut(&said, visible::MAX_MESSAGE_CHARS).into_owned())
}

enum RunError {
    /// The program could not be started (not installed).
    Spawn(std::io::Error),
    /// It started, but failed, ran too long or wrote too much.
    Engine(EngineError),
}

/// Runs `launch` in a folder and an environment of its own (see [`process`]); its stdout
/// when it exits successfully.
fn run(launch: &Launch, bounds: Bounds) -> Result<Vec<u8>, RunError> {
    let folder = process::private_folder().map_err(RunError::Spawn)?;
    let args: Vec<&OsStr> = launch.args.iter().map(OsStr::new).collect();
    let command =
        process::command(&launch.program, &args, folder.path()).map_err(RunError::Spawn)?;
    let input = launch.input.to_string().into_bytes();
    let finished = match process::run(command, input, bounds.timeout, bounds.max_output) {
        Ok(finished) => finished,
        Err(process::RunError::Spawn(err)) => return Err(RunError::Spawn(err)),
        Err(process::RunError::TimedOut) => {
            return Err(RunError::Engine(EngineError::TimedOut(bounds.timeout)))
        }
    };
    let (out, err) = (finished.stdout, finished.stderr);
    if out.len() > bounds.max_output || err.len() > bounds.max_output {
        return Err(RunError::Engine(EngineError::TooLarge(bounds.max_output)));
    }
    if !finished.status.success() {
        let said = String::from_utf8_lossy(&err);
        let last = said.trim().lines().last().unwrap_or("no message");
        let last = visible::cut(last, visible::MAX_ECHO_CHARS);
        return Err(RunError::Engine(EngineError::Failed(format!(
            "{}: {last}",
            finished.status
        ))));
    }
    Ok(out)
}
