//! A side for the compare view typed in (`o` in the Prompt pane): any template source
//! the opener takes (a file, a model folder, a `.gguf`, a bundled name, a model id
//! `ORG/NAME[@REV][#ENTRY]`), `@REV` for the session's own model at another revision of
//! the Hugging Face cache (or the Hub with the `hub` feature), or a llama-server's
//! `http://` URL for the `llama.cpp` engine.
//!
//! A template is resolved on the worker (a [`Job::Open`], as the opener's are: nothing
//! is read on the UI thread); [`Sides`] asks for it as a background job and takes the
//! answer in while it waits for one, and the answer becomes the side. A server needs no lookup: its
//! renders run on the compare thread with the external engines' bounds.

use chatplate_core::catalog::CachedModel;
use chatplate_core::compare::check_server_url;
use chatplate_core::target::Opened;
use chatplate_core::worker::{Job, Output, Reply};

use crate::tui::compare::CompareContext;

use crate::tui::compare::SideChoice;

use crate::tui::compare::Sides;
use crate::tui::dialogs::open::could_not_open;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;

/// What a typed side waits for from the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedSide {
    /// A template source, as typed.
    Template(String),
    /// The session's model at this revision.
    Revision(String),
}

impl TypedSide {
    /// What was typed, and the side's label when it is not the template's own name.
    fn typed(&self) -> (String, Option<String>) {
        match self {
            TypedSide::Template(text) => (text.clone(), None),
            TypedSide::Revision(revision) => {
                (format!("@{revision}"), Some(format!("revision {revision}")))
            }
        }
    }
}

impl Sides {
    /// Starts comparing with what was typed: a server at once, a template once the
    /// worker has opened it.
    pub fn compare_source(&mut self, text: &str, ctx: &mut CompareContext) {
        let text = text.trim();
        if text.is_empty() {
            return ctx.warn("type a template source, @REVISION or a llama-server URL");
        }
        if text.starts_with("http://") || text.starts_with("https://") {
            return self.compare_with_server(text, ctx);
        }
        let (job, typed) = match text.strip_prefix('@') {
            Some(revision) => match CachedModel::of(&ctx.workspace.template) {
                Some(model) => {
                    let revision = revision.to_string();
                    let typed = TypedSide::Revision(revision.clone());
                    (Job::OpenRevision { model, revision }, typed)
                }
                None => {
                    let origin = ctx.workspace.template.origin_label();
                    return ctx.warn(format!(
                        "@{revision}: the session's template is not a model from the Hugging Face cache ({origin})"
                    ));
                }
            },
            None => {
                let target = text.to_string();
                (Job::Open { target }, TypedSide::Template(text.into()))
            }
        };
        self.typed = Some(typed);
        self.opening = Some(job);
        ctx.ask();
        ctx.notify(format!("opening {text} to compare…"));
    }

    fn compare_with_server(&mut self, url: &str, ctx: &mut CompareContext) {
        if let Err(why) = check_server_url(url) {
            return ctx.warn(format!("{url}: {why}"));
        }
        self.preview = None;
        self.server = Some(url.trim_end_matches('/').to_string());
        ctx.notify(self.start_comparing(SideChoice::Server(url.to_string())));
        ctx.ask();
    }

    /// Takes the opened template in as the compare view's side; returns whether the
    /// screen changed.
    pub(super) fn receive_opened(&mut self, reply: Reply, view: &JobView, said: &mut Said) -> bool {
        let Some(typed) = self.typed.take() else {
            return false;
        };
        let (typed_text, label) = typed.typed();
        let set = match reply.result {
            Ok(Output::Opened(opened)) => match *opened {
                Opened::Templates(set) => set,
                _ => {
                    said.warn(format!("{typed_text} is a session, not a template"));
                    return true;
                }
            },
            Ok(_) => return false,
            Err(err) => {
                said.warn(could_not_open(&typed_text, &err.message));
                return true;
            }
        };
        let session = &view.workspace.session;
        let tools = session.tools.as_ref().is_some_and(|t| !t.is_empty());
        match set.choose(tools) {
            Ok(template) => {
                let label = label.unwrap_or_else(|| format!("template {}", template.name));
                let source = template.origin_label();
                self.preview = None;
                said.notify(self.start_comparing(SideChoice::Source {
                    label,
                    source,
                    template: Box::new(template),
                }));
            }
            Err(err) => said.warn(could_not_open(&typed_text, &err.to_string())),
        }
        true
    }
}
