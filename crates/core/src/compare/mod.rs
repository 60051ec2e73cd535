//! Compare: one conversation rendered by several engines, and where their prompts part.
//!
//! Every [`Engine`] gets the same inputs (messages, tools, documents, the generation
//! prompt, `continue_final_message`, the extra variables with `bos_token`/`eos_token`,
//! the fixed clock) and answers with a prompt or an error, plus its name and version.
//! `transformers` is chatplate's own renderer and the reference; `minijinja` is bare
//! MiniJinja as Rust servers embed it ([`bare`]); `python` and `hf-jinja` run the user's
//! own transformers or @huggingface/jinja in a child process, bounded in time and output
//! ([`external`]); `llama.cpp` asks a running llama-server ([`llama_server`]). See
//! docs/compare.md.

mod bare;
mod bare2;
pub mod causes;
mod external;
mod hf_jinja;
mod http;
mod llama_server;
mod loaded_template;
mod mistralrs;
mod persistent;
pub mod plugin;
mod process;
pub mod report;
mod scripts;
pub mod text;
mod token_level;

use std::borrow::Borrow;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use chatplate_render::{effective_messages, Conversation, Limits, RenderControl};
use serde_json::{json, Value as Json};

pub use external::Bounds;
pub use llama_server::check_server_url;
pub use plugin::Plugin;
pub use token_level::{Token, TokenComparison, TokenDifference};

/// A renderer a conversation can be compared across.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Engine {
    /// chatplate's renderer, byte-identical to transformers 5.23: the reference.
    Transformers,
    /// Bare MiniJinja 3.1 with minijinja-contrib's pycompat, as Rust servers embed it.
    MiniJinja,
    /// Bare MiniJinja 2.14 with pycompat: the 2.x line Rust servers embed.
    MiniJinja2,
    /// MiniJinja 2.14 with the filters, variables and template rewrites mistral.rs adds.
    MistralRs,
    /// The user's own transformers, run by their Python.
    Python,
    /// @huggingface/jinja (transformers.js, the Hub), run by Node.
    HfJinja,
    /// A running llama-server's `/apply-template` (llama.cpp's own Jinja engine).
    LlamaCpp,
    /// A plug-in named by the user (`cmd:PROGRAM [ARGS]`, see [`plugin`]). It lives as
    /// long as chatplate: the few the user names are kept for the whole run, which keeps
    /// an engine a small value that can be copied into every report row.
    Plugin(&'static Plugin),
}

impl Engine {
    /// Every engine, the reference first.
    pub const ALL: [Engine; 7] = [
        Engine::Transformers,
        Engine::MiniJinja,
        Engine::MiniJinja2,
        Engine::MistralRs,
        Engine::Python,
        Engine::HfJinja,
        Engine::LlamaCpp,
    ];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Transformers => "transformers",
            Engine::MiniJinja => "minijinja",
            Engine::MiniJinja2 => "minijinja@2",
            Engine::MistralRs => "mistralrs",
            Engine::Python => "python",
            Engine::HfJinja => "hf-jinja",
            Engine::LlamaCpp => "llama.cpp",
            Engine::Plugin(plugin) => &plugin.name,
        }
    }

    /// The plug-in engine `spec` (`cmd:PROGRAM [ARGS]`) named `name` (else by its spec),
    /// its relative paths taken from `base`: see [`Plugin::parse`].
    ///
    /// # Errors
    /// When `spec` is not a plug-in's.
    pub fn plugin(
        name: Option<&str>,
        spec: &str,
        base: &std::path::Path,
    ) -> Result<Engine, String> {
        let plugin = Plugin::parse(name, spec, base)?;
        Ok(Engine::Plugin(Box::leak(Box::new(plugin))))
    }

    /// How the engine travels to another chatplate process (`check`'s children): its
    /// name, or `NAME=cmd:...` for a plug-in; read back by [`Engine::from_spec`].
    pub fn spec(self) -> String {
        match self {
            Engine::Plugin(plugin) => format!("{}={}", plugin.name, plugin.resolved_spec()),
            engine => engine.name().to_string(),
        }
    }

    /// The engine [`Engine::spec`] wrote (plug-in paths are absolute by then).
    pub fn from_spec(spec: &str) -> Option<Engine> {
        if let Some(engine) = Engine::parse(spec) {
            return Some(engine);
        }
        // `NAME=SPEC`; a name may itself be a spec (`cmd:a b=SPEC`): the spec is after
        // the last `=` that a plug-in's prefix follows.
        let mistral = format!("{}:", plugin::MISTRAL_COMMON);
        let split = plugin::PREFIXES
            .iter()
            .chain([&mistral.as_str()])
            .filter_map(|prefix| spec.rfind(&format!("={prefix}")))
            .max();
        let (name, spec) = match split {
            Some(at) => (Some(&spec[..at]), &spec[at + 1..]),
            None => (None, spec),
        };
        let here = std::path::Path::new(".");
        Engine::plugin(name, spec, here).ok()
    }

    /// The engine called `name`, if any; `minijinja@3` is `minijinja`, named with its
    /// major version as `minijinja@2` is.
    pub fn parse(name: &str) -> Option<Engine> {
        let name = if name == "minijinja@3" {
            "minijinja"
        } else {
            name
        };
        Engine::ALL.into_iter().find(|engine| engine.name() == name)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, not `write_str`: reports align engine names with `{:>12}`.
        f.pad(self.name())
    }
}

/// Where the external engines are found and how far they may go.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EngineSetup {
    /// The Python interpreter for `python` (`--python`, else `$CHATPLATE_PYTHON`).
    pub python: Option<PathBuf>,
    /// The Node executable for `hf-jinja` (`node` on PATH by default).
    pub node: PathBuf,
    /// The folders searched for @huggingface/jinja before Node's global ones (NODE_PATH's
    /// by default); never the working directory's `node_modules`.
    pub node_modules: Vec<PathBuf>,
    /// Bounds on each external run.
    pub bounds: Bounds,
    /// Bounds on the in-process renders.
    pub limits: Limits,
    /// The `llama.cpp` engine's llama-server, `http://host:port` (none by default).
    pub llama_server: Option<String>,
}

impl Default for EngineSetup {
    fn default() -> Self {
        EngineSetup {
            python: std::env::var_os("CHATPLATE_PYTHON").map(PathBuf::from),
            node: PathBuf::from("node"),
            node_modules: hf_jinja::node_path_folders(std::env::var_os("NODE_PATH").as_deref()),
            bounds: Bounds::default(),
            limits: Limits::default(),
            llama_server: None,
        }
    }
}

/// Why an engine gave no prompt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The engine is not installed; the text says how to install it.
    #[error("{engine} is not available: {reason}; {how}")]
    NotInstalled {
        /// The engine's name.
        engine: &'static str,
        /// What was missing.
        reason: String,
        /// How to install it.
        how: String,
    },
    /// The template failed (or the input was refused) in that engine.
    #[error("{0}")]
    Render(String),
    /// The engine ran past its time.
    #[error("stopped after {0:?}: the engine did not finish in time")]
    TimedOut(Duration),
    /// The engine wrote more than allowed.
    #[error("stopped: the engine wrote more than {0} bytes")]
    TooLarge(usize),
    /// The engine's process failed or answered something else than expected.
    #[error("the engine failed: {0}")]
    Failed(String),
}

impl EngineError {
    /// Whether the engine could not run at all (not installed, its process or server
    /// failed), as opposed to an answer about the template: a report counts these apart
    /// from the cases that agree or differ.
    pub fn could_not_run(&self) -> bool {
        matches!(
            self,
            EngineError::NotInstalled { .. } | EngineError::Failed(_)
        )
    }
}

/// One engine's answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EngineRender {
    /// Which engine.
    pub engine: Engine,
    /// Its version (`unknown` when it could not say).
    pub version: String,
    /// The prompt, or why there is none.
    pub result: Result<String, EngineError>,
    /// Where the engine runs, for one reached over the network (`llama.cpp`'s URL).
    pub url: Option<String>,
    /// What the reader should know beside the render (a server's template that is not the
    /// session's).
    pub note: Option<String>,
    /// For an engine that answers tokens (`mistral-common`, a plug-in's `"tokens"`): its
    /// tokens against the reference's prompt tokenized by its tokenizer. The comparison
    /// then goes by tokens; `result` holds the text they stand for (the reference's prompt
    /// when the tokens are the same).
    pub tokens: Option<TokenComparison>,
}

/// Renders `conversation` with `template` in `engine`.
pub fn render(
    engine: Engine,
    template: &str,
    conversation: &Conversation,
    setup: &EngineSetup,
) -> EngineRender {
    match engine {
        Engine::Transformers => EngineRender {
            engine,
            version: format!("chatplate {}", env!("CARGO_PKG_VERSION")),
            result: reference(template, conversation, setup.limits),
            url: None,
            note: None,
            tokens: None,
        },
        Engine::MiniJinja => EngineRender {
            engine,
            version: bare::VERSION.to_string(),
            result: bare::render(template, conversation),
            url: None,
            note: None,
            tokens: None,
        },
        Engine::MiniJinja2 => EngineRender {
            engine,
            version: bare2::VERSION.to_string(),
            result: bare2::render(template, conversation),
            url: None,
            note: None,
            tokens: None,
        },
        Engine::MistralRs => EngineRender {
            engine,
            version: mistralrs::VERSION.to_string(),
            result: bare2::render_mistralrs(template, conversation),
            url: None,
            note: None,
            tokens: None,
        },
        Engine::Python | Engine::HfJinja | Engine::Plugin(_) => {
            external::render(engine, template, conversation, setup)
        }
        Engine::LlamaCpp => llama_server::render(template, conversation, setup),
    }
}

/// Renders many conversations (a corpus report), keeping an engine's process running
/// between them where it can: one Node for every `hf-jinja` render and one Python for
/// every `python` render, instead of one a case.
#[derive(Default)]
pub struct Renderer {
    node: Option<persistent::Persistent>,
    python: Option<persistent::Persistent>,
    /// The persistent plug-ins' processes (`lines:`, `py:`, `mistral-common`).
    plugins: std::collections::HashMap<Engine, persistent::Persistent>,
}

impl Renderer {
    /// Renders `conversation` with `template` in `engine`, as [`render`] does.
    pub fn render(
        &mut self,
        engine: Engine,
        template: &str,
        conversation: &Conversation,
        setup: &EngineSetup,
    ) -> EngineRender {
        match engine {
            Engine::HfJinja => {
                external::render_kept(&mut self.node, engine, template, conversation, setup)
            }
            Engine::Python => {
                external::render_kept(&mut self.python, engine, template, conversation, setup)
            }
            Engine::Plugin(plugin) if plugin.persistent() => {
                let mut kept = self.plugins.remove(&engine);
                let render =
                    external::render_kept(&mut kept, engine, template, conversation, setup);
                if let Some(kept) = kept {
                    self.plugins.insert(engine, kept);
                }
                render
            }
            _ => render(engine, template, conversation, setup),
        }
    }
}

fn reference(
    template: &str,
    conversation: &Conversation,
    limits: Limits,
) -> Result<String, EngineError> {
    // The compiled template keeps `limits`, its deadline included. Compiled once per
    // process: a report's cases share their templates (798 cases, 57 templates).
    let control = RenderControl::default();
    crate::rendering::compiled::shared(template, limits)
        .and_then(|compiled| compiled.render_controlled(conversation, &control))
        .map_err(|err| EngineError::Render(err.to_string()))
}

/// The inputs as the external engines read them: one JSON document. The messages are
/// prepared as `apply_chat_template` prepares them before its Jinja render (`None` keys
/// dropped, reasoning aliased), so every engine sees the same messages.
pub(crate) fn input_document(template: &str, conversation: &Conversation) -> Json {
    json!({
        "template": template,
        "messages": effective_messages(&conversation.messages),
        "tools": conversation.tools,
        "documents": conversation.documents,
        "add_generation_prompt": conversation.add_generation_prompt,
        "continue_final_message": conversation.continue_final_message.field(),
        "variables": conversation.variables,
        "clock": conversation.clock.map(|clock| clock.strftime("%Y-%m-%dT%H:%M:%S").to_string()),
    })
}

/// The 0-based byte offset where `a` and `b` first differ, `None` when equal.
pub fn first_difference(a: &str, b: &str) -> Option<usize> {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (common < a.len().max(b.len()) || a.len() != b.len()).then_some(common)
}

/// Where the renders first part from the reference (`renders[0]`): the smallest byte
/// offset at which any prompt differs from it. A render that fails where the reference
/// renders (or renders where it fails) differs at byte 0; when the reference and every
/// other render fail, nothing differs. A render compared by tokens differs where its first
/// differing token starts in the reference's prompt.
/// The renders may be wrapped (anything that borrows as an [`EngineRender`]).
pub fn first_divergence<R: Borrow<EngineRender>>(renders: &[R]) -> Option<usize> {
    let (reference, others) = renders.split_first()?;
    let reference: &EngineRender = reference.borrow();
    others
        .iter()
        .map(Borrow::borrow)
        .filter_map(
            |other: &EngineRender| match (&reference.result, &other.result) {
                (Ok(want), Ok(_)) if other.tokens.is_some() => {
                    let first = other.tokens.as_ref()?.first.as_ref()?;
                    Some(first.byte.min(want.len()))
                }
                (Ok(want), Ok(got)) => first_difference(want, got),
                (Err(_), Err(_)) => None,
                _ => Some(0),
            },
        )
        .min()
}

/// The 1-based line and column (in characters) of byte `offset` of `text`; an offset
/// inside a character counts as that character.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_difference_finds_the_byte_and_the_shorter_end() {
        assert_eq!(first_difference("abc", "abc"), None);
        assert_eq!(first_difference("abc", "abd"), Some(2));
        assert_eq!(first_difference("ab", "abc"), Some(2));
        assert_eq!(first_difference("", "x"), Some(0));
    }

    #[test]
    fn line_col_counts_characters_from_one() {
        assert_eq!(line_col("ab\ncé d", 0), (1, 1));
        assert_eq!(line_col("ab\ncé d", 3), (2, 1));
        // 'd' is at byte 7 (é is two bytes), the 4th character of line 2.
        assert_eq!(line_col("ab\ncé d", 7), (2, 4));
        assert_eq!(line_col("ab\ncé d", 5), (2, 2));
    }

    #[test]
    fn engines_parse_by_name() {
        for engine in Engine::ALL {
            assert_eq!(Engine::parse(engine.name()), Some(engine));
        }
        assert_eq!(Engine::parse("jinja2"), None);
        assert_eq!(Engine::parse("minijinja@3"), Some(Engine::MiniJinja));
    }

    #[test]
    fn a_plugin_travels_by_spec_with_its_paths_resolved() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("adapter.py"), "").unwrap();
        let engine = Engine::plugin(Some("mine"), "cmd:python3 adapter.py", dir.path()).unwrap();
        let back = Engine::from_spec(&engine.spec()).expect("read back");
        assert_eq!(back.name(), "mine");
        let Engine::Plugin(plugin) = back else {
            panic!("a plug-in")
        };
        let adapter = std::path::absolute(dir.path().join("adapter.py")).unwrap();
        let want = format!("cmd:python3 {}", adapter.display());
        assert_eq!(plugin.resolved_spec(), want);
        let unnamed = Engine::plugin(None, "py:vendor.enc:encode", dir.path()).unwrap();
        let back = Engine::from_spec(&unnamed.spec()).expect("read back");
        assert_eq!(back.name(), "py:vendor.enc:encode");
    }
}
