//! The engine matrix (`M`): every configured engine's verdict on the session's render,
//! kept current as the session is edited. One row per engine (`minijinja`, `hf-jinja`,
//! `python`, `llama.cpp` and the config file's plug-ins), each `same`, `differs at byte
//! N`, `error` or `could not run`, and Enter on a row opens that engine's side-by-side
//! diff in the compare view ([`Sides`]), which gives the matrix back when it closes.
//!
//! Each row is its own request to the worker ([`Job::Matrix`]), asked once the session's
//! own render is current, so a slow engine shows `…` while the others answer. An engine
//! in a child process or behind a server runs on a thread of its own; one request per
//! engine is in flight at a time and the next is asked only when it answers, so typing
//! never starts more than one process per engine, and a keystroke never waits for one.
//! The in-process engines wait in the worker's matrix slot one at a time (a newer
//! request there would replace a queued one), cancelled by a newer render.
//!
//! The matrix asks only while the Prompt pane shows it: the compare view or the template
//! preview on top of it is what the user looks at then.

use std::path::Path;
use std::sync::Arc;

use chatplate_core::compare::{self, Engine, EngineError, EngineSetup};
use chatplate_core::worker::comparing::{Compared, Counterpart};
use chatplate_core::worker::{Job, JobKind, Output, Reply};
use chatplate_render::{visible, RenderErrorKind};

use crate::tui::action::{CompareAction, Direction, Pane, PromptAction, Step};
use crate::tui::compare::{CompareContext, SideChoice, Sides};
use crate::tui::jobs::{Background, JobView, Said};

/// The built-in engines the matrix lists, in order (the reference is the session's own
/// render, not a row).
const BUILT_IN: [Engine; 6] = [
    Engine::MiniJinja,
    Engine::MiniJinja2,
    Engine::MistralRs,
    Engine::HfJinja,
    Engine::Python,
    Engine::LlamaCpp,
];

/// What an engine said about the session's render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The same prompt, byte for byte.
    Same,
    /// The prompts part at this byte (0-based) of the session's, at this 1-based line
    /// and column.
    Differs {
        /// The byte.
        byte: usize,
        /// Its line.
        line: usize,
        /// Its column, in characters.
        column: usize,
    },
    /// The engine raises where the session's template renders (its error).
    Error(String),
    /// Both raise: they agree, as `compare` counts it (the engine's error).
    BothRaise(String),
    /// The engine renders where the session's template raises.
    RendersWhereReferenceRaises,
    /// The engine could not run (not installed, its process or server failed).
    CouldNotRun {
        /// Why, in short (what was missing, what failed).
        reason: String,
        /// The engine's whole message, with how to install it.
        message: String,
    },
    /// No llama-server was named yet.
    NoServer,
}

impl Verdict {
    /// Its text in a row (cut there to the pane's width).
    pub fn text(&self) -> String {
        match self {
            Verdict::Same => "same".into(),
            Verdict::Differs { byte, line, column } => {
                format!("differs at byte {byte} (line {line}:{column})")
            }
            Verdict::Error(why) => format!("error: {why}"),
            Verdict::BothRaise(why) => format!("same: both raise ({why})"),
            Verdict::RendersWhereReferenceRaises => "renders where transformers raises".into(),
            Verdict::CouldNotRun { reason, .. } => format!("could not run: {reason}"),
            Verdict::NoServer => "no server: o takes its URL".into(),
        }
    }

    /// Its whole text, for the selected row's detail.
    pub fn full(&self) -> String {
        match self {
            Verdict::CouldNotRun { message, .. } => format!("could not run: {message}"),
            Verdict::NoServer => "no llama-server named yet: o in the Prompt pane takes its \
                                  URL (http://127.0.0.1:8080), and this row follows it"
                .into(),
            verdict => verdict.text(),
        }
    }

    /// Whether the engine agrees with the session's render.
    pub fn agrees(&self) -> bool {
        matches!(self, Verdict::Same | Verdict::BothRaise(_))
    }

    /// Whether the engine gave no answer about the template.
    pub fn could_not_run(&self) -> bool {
        matches!(self, Verdict::CouldNotRun { .. } | Verdict::NoServer)
    }

    /// The verdict on `answer`, a render diffed from the session's prompt (`session_ok`:
    /// the session's template rendered).
    fn of(answer: &Compared, session_ok: bool) -> Verdict {
        let first_line = |err: &EngineError| {
            let text = err.to_string();
            visible::message(text.lines().next().unwrap_or_default())
        };
        match (&answer.render.result, session_ok) {
            (Ok(other), true) => match compare::first_difference(&answer.against, other) {
                None => Verdict::Same,
                Some(byte) => {
                    let (line, column) = compare::line_col(&answer.against, byte);
                    Verdict::Differs { byte, line, column }
                }
            },
            (Ok(_), false) => Verdict::RendersWhereReferenceRaises,
            (Err(err), _) if err.could_not_run() => {
                let reason = match err {
                    EngineError::NotInstalled { reason, .. } => visible::message(reason),
                    EngineError::Failed(why) => visible::message(why),
                    other => first_line(other),
                };
                let message = visible::message(&err.to_string());
                Verdict::CouldNotRun { reason, message }
            }
            (Err(err), true) => Verdict::Error(first_line(err)),
            (Err(err), false) => Verdict::BothRaise(first_line(err)),
        }
    }
}

/// A request in flight for a row.
#[derive(Debug, Clone, Copy)]
struct Asked {
    id: u64,
    generation: u64,
    /// The session's template rendered (the diff is against its prompt).
    session_ok: bool,
    /// It runs in a child process or behind a server (on a thread of its own).
    external: bool,
}

/// One engine's row.
#[derive(Debug, Clone)]
pub struct EngineRow {
    /// The engine.
    pub engine: Engine,
    /// Its last verdict (`None`: not answered yet).
    pub verdict: Option<Verdict>,
    /// Its version, from its last answer.
    pub version: String,
    /// Its last answer, handed to the compare view by Enter.
    answer: Option<Arc<Compared>>,
    /// The session generation the verdict answers (0: none).
    answered: u64,
    asked: Option<Asked>,
}

impl EngineRow {
    fn new(engine: Engine) -> Self {
        EngineRow {
            engine,
            verdict: None,
            version: String::new(),
            answer: None,
            answered: 0,
            asked: None,
        }
    }

    /// Whether its verdict is older than the session at `generation`, or a newer one is
    /// on its way: the row shows `…`.
    pub fn waiting(&self, generation: u64) -> bool {
        self.asked.is_some() || self.answered < generation
    }
}

/// The engine matrix's state: its rows, whether it is open, its cursor.
#[derive(Debug)]
pub struct EngineMatrix {
    open: bool,
    /// The compare view or the template preview is drawn over it.
    covered: bool,
    rows: Vec<EngineRow>,
    setup: Arc<EngineSetup>,
    /// The llama-server the compare view was last given (`o`), for the `llama.cpp` row.
    server: Option<String>,
    /// The selected row.
    pub cursor: usize,
    last_id: u64,
}

impl Default for EngineMatrix {
    fn default() -> Self {
        EngineMatrix {
            open: false,
            covered: false,
            rows: BUILT_IN.into_iter().map(EngineRow::new).collect(),
            setup: Arc::new(EngineSetup::default()),
            server: None,
            cursor: 0,
            last_id: 0,
        }
    }
}

impl EngineMatrix {
    /// Whether the matrix is open (shown in the Prompt pane unless something covers it).
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// The rows, one per engine.
    pub fn rows(&self) -> &[EngineRow] {
        &self.rows
    }

    /// Where the external engines are, and their bounds.
    pub fn set_engines(&mut self, setup: EngineSetup) {
        self.setup = Arc::new(setup);
        self.forget();
    }

    /// Adds the config file's plug-ins after the built-in engines.
    pub fn add_plugins(&mut self, plugins: Vec<Engine>) {
        self.rows.extend(plugins.into_iter().map(EngineRow::new));
    }

    /// What the compare view tells it: whether it is drawn over the matrix, and the
    /// llama-server it was last given.
    pub fn follow(&mut self, sides: &Sides) {
        self.covered = sides.shown().is_some();
        if sides.server() != self.server.as_deref() && sides.server().is_some() {
            self.server = sides.server().map(str::to_string);
            self.forget_engine(Engine::LlamaCpp);
        }
    }

    /// Every verdict asked again (the engines changed).
    fn forget(&mut self) {
        for row in &mut self.rows {
            row.answered = 0;
        }
    }

    fn forget_engine(&mut self, engine: Engine) {
        for row in self.rows.iter_mut().filter(|row| row.engine == engine) {
            row.answered = 0;
        }
    }

    /// The matrix's keys before the compare view's: `M` opens or closes it, Esc closes
    /// it when no compare view is over it. Returns whether it took `action`.
    pub fn took_compare(
        &mut self,
        action: CompareAction,
        sides: &mut Sides,
        ctx: &mut CompareContext,
    ) -> bool {
        match action {
            CompareAction::Matrix if self.open => {
                self.open = false;
                ctx.notify("engine matrix closed");
            }
            CompareAction::Matrix => {
                self.open = true;
                sides.close_compare();
                ctx.notify("engine matrix: every engine on this session (↑/↓, Enter: its diff, Esc: close)");
            }
            CompareAction::Close if self.open && sides.shown().is_none() => {
                self.open = false;
                ctx.notify("engine matrix closed");
            }
            _ => return false,
        }
        self.follow(sides);
        ctx.ask();
        true
    }

    /// The Prompt pane's cursor keys move between rows and Enter opens the row's diff,
    /// while the matrix is shown. Returns whether it took `action`.
    pub fn took_prompt(
        &mut self,
        action: PromptAction,
        sides: &mut Sides,
        ctx: &mut CompareContext,
    ) -> bool {
        if !self.open || sides.shown().is_some() {
            return false;
        }
        let last = self.rows.len().saturating_sub(1);
        match action {
            PromptAction::Scroll(Step::Line(Direction::Up) | Step::Page(Direction::Up)) => {
                self.cursor = self.cursor.saturating_sub(1);
            }
            PromptAction::Scroll(Step::Line(Direction::Down) | Step::Page(Direction::Down)) => {
                self.cursor = (self.cursor + 1).min(last);
            }
            PromptAction::Scroll(Step::First) => self.cursor = 0,
            PromptAction::Scroll(Step::Last) => self.cursor = last,
            PromptAction::JumpToSource => self.open_diff(sides, ctx),
            _ => return false,
        }
        true
    }

    /// Opens the selected row's diff in the compare view, with its answer when it has
    /// one (the compare view asks again when the session changed since).
    fn open_diff(&mut self, sides: &mut Sides, ctx: &mut CompareContext) {
        let Some(row) = self.rows.get(self.cursor) else {
            return;
        };
        let choice = match (row.engine, &self.server) {
            (Engine::LlamaCpp, Some(url)) => SideChoice::Server(url.clone()),
            (Engine::LlamaCpp, None) => {
                return ctx.warn("no llama-server yet: o in the Prompt pane takes its URL");
            }
            (engine, _) => SideChoice::Engine(engine),
        };
        let answer = row.answer.clone().map(|answer| (answer, row.answered));
        let notice = sides.show_answered(choice, answer);
        ctx.notify(notice);
        ctx.focus(Pane::Prompt);
        self.follow(sides);
        ctx.ask();
    }

    /// A fresh request id.
    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// The requests for every row whose verdict is older than the shown render and that
    /// has none in flight; an in-process engine only when no other one is in flight.
    fn ask(&mut self, view: &JobView) -> Vec<(u64, Job)> {
        if !self.open || self.covered || view.stale() {
            return Vec::new();
        }
        let generation = view.generation;
        let workspace = view.workspace;
        let (against, session_ok) = match &view.preview.output {
            Ok(prompt) => (Arc::clone(prompt), true),
            Err(_) => (Arc::from(""), false),
        };
        let source: Arc<str> = workspace.template.source.as_str().into();
        let served = self.server.as_ref().map(|url| {
            let mut setup = (*self.setup).clone();
            setup.llama_server = Some(url.clone());
            Arc::new(setup)
        });
        let mut in_process_busy = self
            .rows
            .iter()
            .any(|row| row.asked.is_some_and(|asked| !asked.external));
        let mut jobs = Vec::new();
        for index in 0..self.rows.len() {
            let row = &mut self.rows[index];
            if row.asked.is_some() || row.answered >= generation {
                continue;
            }
            if let Some(why) = &workspace.missing_template {
                let (reason, message) = (why.clone(), why.clone());
                row.verdict = Some(Verdict::CouldNotRun { reason, message });
                row.answered = generation;
                continue;
            }
            let setup = match (row.engine, &served) {
                (Engine::LlamaCpp, None) => {
                    row.verdict = Some(Verdict::NoServer);
                    row.answered = generation;
                    continue;
                }
                (Engine::LlamaCpp, Some(served)) => Arc::clone(served),
                _ => Arc::clone(&self.setup),
            };
            let counterpart = Counterpart::Engine {
                engine: row.engine,
                source: Arc::clone(&source),
                setup,
            };
            let external = counterpart.is_external();
            if !external && in_process_busy {
                continue;
            }
            in_process_busy |= !external;
            let id = self.next_id();
            self.rows[index].asked = Some(Asked {
                id,
                generation,
                session_ok,
                external,
            });
            let against = Arc::clone(&against);
            jobs.push((
                id,
                Job::Matrix {
                    counterpart,
                    against,
                },
            ));
        }
        jobs
    }
}

impl Background for EngineMatrix {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::Matrix
    }

    /// One request per row that needs one: the engines answer side by side.
    fn request_all(&mut self, view: &JobView, _said: &mut Said) -> Vec<(u64, Job)> {
        self.ask(view)
    }

    fn receive(&mut self, reply: Reply, _view: &JobView, _said: &mut Said) -> bool {
        let asking = |row: &&mut EngineRow| row.asked.is_some_and(|a| a.id == reply.generation);
        let Some(row) = self.rows.iter_mut().find(asking) else {
            return false;
        };
        let Some(asked) = row.asked.take() else {
            return false;
        };
        match reply.result {
            Ok(Output::Compared(answer)) => {
                row.verdict = Some(Verdict::of(&answer, asked.session_ok));
                row.version.clone_from(&answer.render.version);
                row.answer = Some(answer);
            }
            // A newer render replaced it: asked again for that one.
            Err(err) if err.kind == RenderErrorKind::Cancelled => return false,
            Err(err) => {
                row.verdict = Some(Verdict::Error(visible::message(&err.message)));
                row.answer = None;
            }
            Ok(_) => return false,
        }
        row.answered = asked.generation;
        true
    }

    fn pending(&self, view: &JobView) -> bool {
        let shown = self.open && !self.covered;
        shown && self.rows.iter().any(|row| row.waiting(view.generation))
    }
}

/// The plug-in engines the config file's `"engines"` names (the app lists them in the
/// matrix), and what was wrong with any of them. The file was read already at start-up
/// (its problems are reported by [`crate::tui::config`]); a missing file names none.
pub fn configured_plugins() -> (Vec<Engine>, Vec<String>) {
    let Some(path) = crate::template_roots::config_path() else {
        return (Vec::new(), Vec::new());
    };
    let Ok(Some(config)) = crate::template_roots::read_config(&path) else {
        return (Vec::new(), Vec::new());
    };
    let Some(engines) = config
        .get(crate::engines_config::KEY)
        .and_then(serde_json::Value::as_object)
    else {
        return (Vec::new(), Vec::new());
    };
    let base = path.parent().unwrap_or(Path::new("."));
    let mut plugins = Vec::new();
    let mut problems = Vec::new();
    for (name, spec) in engines {
        let Some(spec) = spec.as_str() else {
            continue;
        };
        match Engine::plugin(Some(name), spec, base) {
            Ok(engine) => plugins.push(engine),
            Err(why) => problems.push(format!(
                "engine {}: {} (not in the engine matrix)",
                visible::quoted(name),
                visible::message(&why)
            )),
        }
    }
    (plugins, problems)
}
