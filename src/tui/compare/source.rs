//! A side for the compare view typed in (`o` in the Prompt pane): any template source
//! the opener takes (a file, a model folder, a `.gguf`, a bundled name, a model id
//! `ORG/NAME[@REV][#ENTRY]`), `@REV` for the session's own model at another revision of
//! the Hugging Face cache (or the Hub with the `hub` feature), or a llama-server's
//! `http://` URL for the `llama.cpp` engine.
//!
//! A template is resolved on the worker (a [`Job::Open`], as the opener's are: nothing
//! is read on the UI thread); its answer becomes the side. A server needs no lookup: its
//! renders run on the compare thread with the external engines' bounds.

use chatplate_core::catalog::CachedModel;
use chatplate_core::compare::check_server_url;
use chatplate_core::target::Opened;
use chatplate_core::worker::{Job, Output, Reply};

use crate::tui::app::App;
use crate::tui::compare::SideChoice;
use crate::tui::dialogs::open::could_not_open;
use crate::tui::dialogs::{InputDialog, InputKind, Overlay};

/// What a typed side waits for from the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedSide {
    /// A template source, as typed.
    Template(String),
    /// The session's model at this revision.
    Revision(String),
}

impl App {
    /// Asks for the side to compare with.
    pub(in crate::tui) fn ask_compare_source(&mut self) {
        let input = InputDialog::new(InputKind::CompareWith, "");
        self.overlay = Some(Overlay::Input(input));
    }

    /// Starts comparing with what was typed: a server at once, a template once the
    /// worker has opened it.
    pub(in crate::tui) fn compare_source(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return self.warn("type a template source, @REVISION or a llama-server URL");
        }
        if text.starts_with("http://") || text.starts_with("https://") {
            return self.compare_with_server(text);
        }
        let (job, typed) = match text.strip_prefix('@') {
            Some(revision) => match CachedModel::of(&self.workspace.template) {
                Some(model) => {
                    let revision = revision.to_string();
                    let typed = TypedSide::Revision(revision.clone());
                    (Job::OpenRevision { model, revision }, typed)
                }
                None => {
                    let origin = self.workspace.template.origin_label();
                    return self.warn(format!(
                        "@{revision}: the session's template is not a model from the Hugging Face cache ({origin})"
                    ));
                }
            },
            None => {
                let target = text.to_string();
                (Job::Open { target }, TypedSide::Template(text.into()))
            }
        };
        self.sides.typed = Some(typed);
        self.submit_job(self.generation(), job);
        self.notify(format!("opening {text} to compare…"));
    }

    fn compare_with_server(&mut self, url: &str) {
        if let Err(why) = check_server_url(url) {
            return self.warn(format!("{url}: {why}"));
        }
        self.sides.preview = None;
        self.start_comparing(SideChoice::Server(url.to_string()));
        self.request_sides();
    }

    /// Whether an opened template is awaited for the compare view (its answer is routed
    /// here, not to the opener).
    pub(in crate::tui) fn awaits_side(&self) -> bool {
        self.sides.typed.is_some()
    }

    /// Takes the opened template in as the compare view's side; returns whether the
    /// screen changed.
    pub(in crate::tui) fn receive_side_opened(&mut self, reply: Reply) -> bool {
        let Some(typed) = self.sides.typed.take() else {
            return false;
        };
        let (typed_text, label) = match &typed {
            TypedSide::Template(text) => (text.clone(), None),
            TypedSide::Revision(revision) => {
                (format!("@{revision}"), Some(format!("revision {revision}")))
            }
        };
        let set = match reply.result {
            Ok(Output::Opened(opened)) => match *opened {
                Opened::Templates(set) => set,
                _ => {
                    self.warn(format!("{typed_text} is a session, not a template"));
                    return true;
                }
            },
            Ok(_) => return false,
            Err(err) => {
                self.warn(could_not_open(&typed_text, &err.message));
                return true;
            }
        };
        let tools = (self.workspace.session.tools.as_ref()).is_some_and(|t| !t.is_empty());
        match set.choose(tools) {
            Ok(template) => {
                let label = label.unwrap_or_else(|| format!("template {}", template.name));
                let source = template.origin_label();
                self.sides.preview = None;
                self.start_comparing(SideChoice::Source {
                    label,
                    source,
                    template: Box::new(template),
                });
                self.request_sides();
            }
            Err(err) => self.warn(could_not_open(&typed_text, &err.to_string())),
        }
        true
    }
}
