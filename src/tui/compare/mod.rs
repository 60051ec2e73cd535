//! The other side of the prompt pane: what the session's render is set beside (another
//! engine, another template, the fixture's `expected`), its answer from the worker, and
//! the rows the compare view draws (a unified diff, the preview's own lines, or both
//! sides aligned).
//!
//! Two sides can exist at once: the compare view the user picked, and the live preview
//! of the template under the Templates pane's cursor, which takes the prompt pane while
//! it lasts. Only the shown one asks the worker (two would cancel each other's jobs).
//!
//! [`Sides`] owns both. It is a background job ([`counterpart`]: the shown side is asked
//! for after each render and whenever it changes), and it handles the compare keys
//! ([`keys`], [`source`]) and the preview's following of the Templates cursor
//! ([`template_preview`]) through a [`CompareContext`], asking the app core for what
//! it cannot do itself.

pub mod context;
pub mod counterpart;
pub mod keys;
pub mod rows;
pub mod source;
pub mod template_preview;

pub use context::{CompareContext, CompareRequests};
pub use rows::{difference_starts, next_difference, rows, Layout, Row};

use std::sync::Arc;

use chatplate_core::catalog::TemplateSource;
use chatplate_core::compare::{Engine, EngineSetup};
use chatplate_core::session::{Expected, Session};
use chatplate_core::worker::comparing::{Compared, Counterpart};
use chatplate_core::worker::{Job, Template};

use crate::tui::compare::source::TypedSide;
use crate::tui::preview::app_limits;

/// What the session's render is compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum SideChoice {
    /// Another engine, on the session's template.
    Engine(Engine),
    /// chatplate's renderer on another template.
    Template(Box<TemplateSource>),
    /// The fixture's expected prompt.
    Expected,
    /// A template typed in (any source) or a revision of the session's model.
    Source {
        /// Its short name (`template NAME`, `revision REV`).
        label: String,
        /// Where it came from (`HF cache acme/chat@v1 2222222 (...)`).
        source: String,
        /// The template.
        template: Box<TemplateSource>,
    },
    /// A llama-server (`llama.cpp`) at this URL, on the session's template.
    Server(String),
    /// The prompt as it was before a change (a knob flipped): what the change did.
    Before {
        /// What changed (`before enable_thinking=false`).
        label: String,
        /// The prompt then.
        text: Arc<str>,
    },
}

/// The sides `C` steps through, in order (then off).
pub const CYCLE: [SideChoice; 4] = [
    SideChoice::Engine(Engine::MiniJinja),
    SideChoice::Engine(Engine::HfJinja),
    SideChoice::Engine(Engine::Python),
    SideChoice::Expected,
];

impl SideChoice {
    /// Its name in titles and headers.
    pub fn label(&self) -> String {
        match self {
            SideChoice::Engine(engine) => engine.name().to_string(),
            SideChoice::Template(template) => template.name.clone(),
            SideChoice::Expected => "expected".to_string(),
            SideChoice::Source { label, .. } => label.clone(),
            SideChoice::Server(_) => Engine::LlamaCpp.name().to_string(),
            SideChoice::Before { label, .. } => label.clone(),
        }
    }

    /// Where it came from, when the header names that rather than the engine's version.
    pub fn source(&self) -> Option<&str> {
        match self {
            SideChoice::Source { source, .. } => Some(source),
            SideChoice::Server(url) => Some(url),
            _ => None,
        }
    }

    /// Whether it renders the session's own template (an engine or a server).
    pub fn renders_own_template(&self) -> bool {
        matches!(self, SideChoice::Engine(_) | SideChoice::Server(_))
    }
}

/// What the worker last said about a side.
#[derive(Debug, Clone)]
pub enum Shown {
    /// Nothing yet.
    Waiting,
    /// The other render and its diff from the session's.
    Answer(Arc<Compared>),
    /// The job itself failed (timed out, crashed).
    Failed(String),
}

/// One side: its choice, its answer and the view's scroll position.
#[derive(Debug, Clone)]
pub struct OtherSide {
    /// What it is.
    pub choice: SideChoice,
    /// Its last answer.
    pub shown: Shown,
    /// The session generation `shown` answers (0: none).
    pub answered: u64,
    /// The request in flight: its id and the session generation it was asked for.
    pub asked: Option<(u64, u64)>,
    /// First row shown.
    pub top: usize,
    /// The difference `]` / `[` last jumped to (0-based), until the view scrolls.
    pub current: Option<usize>,
    /// Another template, compiled on the worker once.
    template: Option<Arc<Template>>,
}

impl OtherSide {
    /// A side with nothing rendered yet.
    pub fn new(choice: SideChoice) -> Self {
        let template = match &choice {
            SideChoice::Template(source)
            | SideChoice::Source {
                template: source, ..
            } => Some(Template::new(&source.source, app_limits())),
            _ => None,
        };
        OtherSide {
            choice,
            shown: Shown::Waiting,
            answered: 0,
            asked: None,
            top: 0,
            current: None,
            template,
        }
    }

    /// The answer, when there is one.
    pub fn answer(&self) -> Option<&Compared> {
        match &self.shown {
            Shown::Answer(answer) => Some(answer),
            _ => None,
        }
    }

    /// Whether it must be asked again for the session at `generation`: it answers an
    /// older one, or the expected prompt changed since.
    pub fn outdated(&self, generation: u64, session: &Session) -> bool {
        if self.answered < generation {
            return true;
        }
        match (&self.choice, self.answer()) {
            (SideChoice::Expected, Some(answer)) => *answer.other != *expected_text(session),
            _ => false,
        }
    }

    /// What renders it on the worker; engines render the session's template `source`.
    pub fn counterpart(
        &self,
        source: &str,
        session: &Session,
        setup: &Arc<EngineSetup>,
    ) -> Counterpart {
        match (&self.choice, &self.template) {
            (_, Some(template)) => Counterpart::Template(Arc::clone(template)),
            (SideChoice::Expected, _) => Counterpart::Text {
                text: expected_text(session).into(),
                error: expected_error(session),
            },
            (SideChoice::Before { text, .. }, _) => Counterpart::Text {
                text: Arc::clone(text),
                error: None,
            },
            (SideChoice::Engine(engine), _) => Counterpart::Engine {
                engine: *engine,
                source: source.into(),
                setup: Arc::clone(setup),
            },
            (SideChoice::Server(url), _) => Counterpart::Engine {
                engine: Engine::LlamaCpp,
                source: source.into(),
                setup: Arc::new(with_server(setup, url)),
            },
            (
                SideChoice::Template(other)
                | SideChoice::Source {
                    template: other, ..
                },
                None,
            ) => Counterpart::Template(Template::new(&other.source, app_limits())),
        }
    }
}

/// `setup` with the llama-server at `url`.
fn with_server(setup: &EngineSetup, url: &str) -> EngineSetup {
    let mut setup = setup.clone();
    setup.llama_server = Some(url.to_string());
    setup
}

/// The expected prompt's text (empty when there is none or it is an error).
fn expected_text(session: &Session) -> &str {
    match &session.expected {
        Some(Expected::Prompt(text)) => text,
        _ => "",
    }
}

/// Why the expected side has no prompt, if it has none.
fn expected_error(session: &Session) -> Option<String> {
    match &session.expected {
        Some(Expected::Prompt(_)) => None,
        Some(Expected::Error(text)) => Some(format!("expected an error containing {text:?}")),
        Some(Expected::Exception(text)) => Some(format!("expected the exception {text:?}")),
        None => Some("no expected prompt yet (press E to take it from the render)".into()),
    }
}

/// The compare view and the template preview, and the ids of their requests.
#[derive(Debug)]
pub struct Sides {
    /// The template under the Templates pane's cursor, while it is not the session's.
    preview: Option<OtherSide>,
    /// The side the user picked.
    compare: Option<OtherSide>,
    /// Where the external engines are, and their bounds.
    setup: Arc<EngineSetup>,
    /// A typed side the worker is opening.
    typed: Option<TypedSide>,
    /// The job that opens the typed side, until the worker is asked.
    opening: Option<Job>,
    /// The llama-server last compared with (`o`), which the engine matrix uses too.
    server: Option<String>,
    last_id: u64,
}

impl Default for Sides {
    fn default() -> Self {
        Sides {
            preview: None,
            compare: None,
            setup: Arc::new(EngineSetup::default()),
            typed: None,
            opening: None,
            server: None,
            last_id: 0,
        }
    }
}

impl Sides {
    /// The side the prompt pane shows: the preview while there is one.
    pub fn shown(&self) -> Option<&OtherSide> {
        self.preview.as_ref().or(self.compare.as_ref())
    }

    /// Whether the shown side is the template preview (else the compare view).
    pub fn previewing(&self) -> bool {
        self.preview.is_some()
    }

    /// Where the compare view finds the external engines (`python`, `hf-jinja`) and
    /// their bounds.
    pub fn set_engines(&mut self, setup: EngineSetup) {
        self.setup = Arc::new(setup);
    }

    /// The llama-server last compared with in this run, if any.
    pub fn server(&self) -> Option<&str> {
        self.server.as_deref()
    }

    /// The shown side, to change.
    fn shown_mut(&mut self) -> Option<&mut OtherSide> {
        self.preview.as_mut().or(self.compare.as_mut())
    }

    /// A fresh request id.
    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// The side whose request `id` is, if it still waits for it.
    fn asking(&mut self, id: u64) -> Option<&mut OtherSide> {
        let asked = |side: &&mut OtherSide| side.asked.is_some_and(|(asked, _)| asked == id);
        self.preview
            .as_mut()
            .filter(asked)
            .or(self.compare.as_mut().filter(asked))
    }
}
