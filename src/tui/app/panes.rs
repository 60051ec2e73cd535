//! Lending the panes what they may touch ([`PaneContext`]) and doing what they ask for
//! ([`Requests`]) once their handler returns; the same for the dialogs
//! ([`DialogContext`], [`DialogRequest`]).

use std::path::Path;

use chatplate_core::session::Message;
use serde_json::Value as Json;

use super::App;
use crate::tui::app::action::{Action, DialogAction, Effect, Pane};
use crate::tui::app::pane::{PaneContext, Requests};
use crate::tui::dialogs::context::{DialogContext, DialogParts, DialogRequest};
use crate::tui::dialogs::{open, tool_skeleton, InputKind, Overlay};
use crate::tui::files::disk::Job;
use crate::tui::files::workspace::Workspace;
use crate::tui::jobs::Said;
use crate::tui::panes::messages::{Editor, MessagesPane};
use crate::tui::panes::prompt::{PromptFacts, PromptPane};
use crate::tui::panes::templates::TemplatesPane;

impl App {
    /// Runs `handle` on the templates pane with its context, then what it asked for.
    pub(in crate::tui) fn in_templates(
        &mut self,
        handle: impl FnOnce(&mut TemplatesPane, &mut PaneContext) -> Option<Effect>,
    ) -> Option<Effect> {
        let mut ctx = PaneContext::new(
            &mut self.workspace,
            &self.preview,
            self.screen,
            &mut self.status,
        );
        let effect = handle(&mut self.templates, &mut ctx);
        let asked = ctx.into_requests();
        self.carry_out(effect, asked)
    }

    /// Runs `handle` on the messages pane (and the field editor it lends) with its
    /// context, then what it asked for.
    pub(in crate::tui) fn in_messages(
        &mut self,
        handle: impl FnOnce(&mut MessagesPane, &mut PaneContext, &mut Editor) -> Option<Effect>,
    ) -> Option<Effect> {
        let mut ctx = PaneContext::new(
            &mut self.workspace,
            &self.preview,
            self.screen,
            &mut self.status,
        );
        let effect = handle(&mut self.messages, &mut ctx, &mut self.editor);
        let asked = ctx.into_requests();
        self.carry_out(effect, asked)
    }

    /// Runs `handle` on the prompt pane with its context and what it reads of the rest
    /// of the app, then what it asked for.
    pub(in crate::tui) fn in_prompt(
        &mut self,
        handle: impl FnOnce(&mut PromptPane, &mut PaneContext, PromptFacts) -> Option<Effect>,
    ) -> Option<Effect> {
        let facts = PromptFacts {
            anchor: self.prompt_anchor(),
            tokens: &self.jobs.token_mode,
            explanation: &self.jobs.explanation,
        };
        let mut ctx = PaneContext::new(
            &mut self.workspace,
            &self.preview,
            self.screen,
            &mut self.status,
        );
        let effect = handle(&mut self.prompt, &mut ctx, facts);
        let asked = ctx.into_requests();
        self.carry_out(effect, asked)
    }

    /// A pane's handler returned `effect` and asked for `asked`: does it, and returns
    /// the effect (or the one an action waiting for the render has at once).
    fn carry_out(&mut self, effect: Option<Effect>, asked: Requests) -> Option<Effect> {
        if let Some(template) = asked.template {
            self.use_template(template);
        }
        if asked.touched {
            self.workspace.touch();
        }
        if let Some(index) = asked.message_edited {
            self.workspace.touch();
            self.invalidate_message(index);
        }
        if asked.edited {
            self.edited();
        }
        if asked.follow {
            self.prompt.follow();
        }
        if let Some(index) = asked.select_message {
            self.messages.selected = index;
            self.messages.in_fields = false;
        }
        if asked.focus_editor {
            // Keys go to the editor; the pane beside the prompt stays what it was.
            self.screen.focus = Pane::Messages;
        }
        if let Some(pane) = asked.focus {
            self.focus(pane);
        }
        if let Some(overlay) = asked.overlay {
            self.overlay = Some(overlay);
        }
        let deferred = asked.deferred.and_then(|action| self.when_current(action));
        effect.or(deferred)
    }
}

/// Lending the dialogs what they may touch ([`DialogContext`]) and doing what they ask
/// for ([`DialogRequest`]).
impl App {
    /// Runs `handle` with a dialog context; puts the dialog it returns on top (the one
    /// it handled, still open), then does what it asked for.
    pub(in crate::tui) fn in_dialogs(
        &mut self,
        handle: impl FnOnce(&mut DialogContext) -> Option<Overlay>,
    ) -> Option<Effect> {
        let parts = DialogParts {
            workspace: &self.workspace,
            preview: &self.preview,
            screen: self.screen,
            opening: &self.opening,
            catalog: &self.templates.catalog,
        };
        let mut ctx = DialogContext::new(parts, &mut self.status);
        let kept = handle(&mut ctx);
        let asked = ctx.into_requests();
        if kept.is_some() {
            self.overlay = kept;
        }
        let effects: Vec<Effect> = (asked.into_iter())
            .filter_map(|request| self.carry_out_dialog(request))
            .collect();
        effects.into_iter().next()
    }

    /// Hands a dialog action to the open dialog, which stays unless it closes.
    pub(in crate::tui) fn update_dialog(&mut self, action: DialogAction) -> Option<Effect> {
        let mut overlay = self.overlay.take()?;
        self.in_dialogs(move |ctx| overlay.handle(action, ctx).then_some(overlay))
    }

    /// The file work listing the openable files is done: the open opener shows them.
    pub(in crate::tui) fn openable_listed(&mut self, files: Vec<String>) {
        self.opening.files = files;
        if let Some(Overlay::Input(input)) = &mut self.overlay {
            if input.kind == InputKind::Open {
                input.refresh_choices(&self.opening.candidates(&self.templates.catalog));
            }
        }
    }

    /// The new session's workspace is ready.
    pub(in crate::tui) fn new_session_made(&mut self, workspace: Workspace) {
        self.load(workspace);
        self.notify(open::NEW_SESSION);
    }

    /// The tools file was read (or why not).
    pub(in crate::tui) fn tools_read(&mut self, path: &Path, result: Result<Vec<Json>, String>) {
        self.in_dialogs(|ctx| {
            tool_skeleton::tools_read(path, result, ctx);
            None
        });
    }

    /// Does what a dialog asked for, by the part of the app that owns the work.
    fn carry_out_dialog(&mut self, request: DialogRequest) -> Option<Effect> {
        match request {
            DialogRequest::Show(overlay) => self.overlay = Some(overlay),
            DialogRequest::Run { focus, action } => {
                if let Some(pane) = focus {
                    self.update(Action::Focus(pane));
                }
                return self.update(action);
            }
            DialogRequest::Save { then_quit } => return self.save_then(None, then_quit),
            DialogRequest::SaveTo { path, then_quit } => return self.save_as(path, then_quit),
            DialogRequest::Overwrite => return self.overwrite(),
            DialogRequest::OpenSession { path, discard } => {
                return self.open_session(path, discard)
            }
            DialogRequest::DiscardAndQuit => {
                return Some(match self.workspace.discard_recovery() {
                    Some(removal) => Effect::Disk(Job::DiscardAndQuit(removal)),
                    None => Effect::Quit,
                });
            }
            DialogRequest::Effect(effect) => return Some(effect),
            request => return self.carry_out_edit(request),
        }
        None
    }

    /// The requests that search, select or change the session.
    fn carry_out_edit(&mut self, request: DialogRequest) -> Option<Effect> {
        match request {
            DialogRequest::SetRole(role) => self.set_role_recorded(&role),
            DialogRequest::Search(term) => {
                return self.in_prompt(|pane, ctx, _| {
                    pane.start_search(term, ctx);
                    None
                });
            }
            DialogRequest::SearchAsTyped => {
                if let Some(Overlay::Input(mut input)) = self.overlay.take() {
                    self.search_as_typed(&mut input);
                    self.overlay = Some(Overlay::Input(input));
                }
            }
            DialogRequest::CancelSearch(input) => return self.cancel_search(&input),
            DialogRequest::Find(input) => {
                self.find_from_origin(&input);
            }
            DialogRequest::Open(text) => {
                let mut said = Said::default();
                self.opening.open(&text, &mut said);
                self.status = said.status;
            }
            DialogRequest::GoTo(text) => self.go_to(&text),
            DialogRequest::CompareWith(text) => self.compare_source(&text),
            DialogRequest::AddTools { tools, what } => self.add_tools(tools, &what),
            DialogRequest::AppendMessage(message) => self.append_parsed(message),
            _ => {}
        }
        None
    }

    /// Appends `tools` to the session's, as one undo step.
    fn add_tools(&mut self, tools: Vec<Json>, what: &str) {
        let names = tool_skeleton::names(&tools);
        let selected = self.messages.selected;
        self.begin_step();
        let session = &mut self.workspace.session;
        session.tools.get_or_insert_with(Vec::new).extend(tools);
        self.edited();
        self.end_step(selected);
        self.notify(format!("{what} {}", names.join(", ")));
    }

    /// Appends the parsed message, as one undo step, and selects it.
    fn append_parsed(&mut self, message: Json) {
        let Json::Object(fields) = message else {
            return;
        };
        let selected = self.messages.selected;
        self.begin_step();
        let at = self.workspace.session.messages.len();
        self.workspace.session.messages.push(Message(fields));
        self.edited();
        self.end_step(selected);
        self.select_message(at);
        self.notify(format!("added message {} from the pasted output", at + 1));
    }
}
