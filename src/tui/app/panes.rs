//! Lending the panes, the dialogs and the other components what they may touch
//! ([`PaneContext`], [`DialogContext`]) and doing what they ask for ([`Requests`],
//! [`DialogRequest`]) once their handler returns.

use super::preview_for;
use crate::tui::action::Action;
use crate::tui::action::MessageAction;
use crate::tui::action::Pane;
use crate::tui::action::PromptAction;
use crate::tui::action::TemplateAction;
use crate::tui::context::Effect;
use crate::tui::context::PaneContext;
use crate::tui::context::Requests;
use crate::tui::dialogs::InputDialog;
use crate::tui::dialogs::InputKind;
use crate::tui::files::disk::Done;
use crate::tui::files::FileRequest;
use crate::tui::files::FileWork;

use crate::tui::compare::CompareContext;

use crate::tui::compare::Sides;
use crate::tui::jobs::matrix::EngineMatrix;
use crate::tui::panes::messages::Editor;
use crate::tui::panes::messages::MessagesPane;
use crate::tui::panes::prompt::PromptFacts;
use crate::tui::panes::prompt::PromptPane;
use std::path::Path;

use chatplate_core::session::Message;
use serde_json::Value as Json;

use super::App;
use crate::tui::action::DialogAction;
use crate::tui::action::MouseInput;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::context::DialogParts;
use crate::tui::dialogs::context::DialogRequest;
use crate::tui::dialogs::open;
use crate::tui::dialogs::opener_paths;
use crate::tui::dialogs::tool_skeleton;
use crate::tui::dialogs::Overlay;
use crate::tui::files::disk::Job;
use crate::tui::files::workspace::Workspace;
use crate::tui::jobs::Said;
use crate::tui::panes::templates::TemplatesPane;
use crate::tui::screen::Status;
use crate::tui::terminal::mouse;
use crate::tui::terminal::mouse::Hit;
use crate::tui::terminal::mouse::MouseRequest;
use crate::tui::terminal::mouse::PointerView;
use crate::tui::workbench::incremental;
use crate::tui::workbench::Workbench;

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

    /// Runs `handle` on the workbench with its context and the message list it works
    /// on, then what it asked for.
    pub(in crate::tui) fn in_workbench<R>(
        &mut self,
        handle: impl FnOnce(&mut Workbench, &mut PaneContext, &mut MessagesPane) -> R,
    ) -> R {
        let mut ctx = PaneContext::new(
            &mut self.workspace,
            &self.preview,
            self.screen,
            &mut self.status,
        );
        let result = handle(&mut self.workbench, &mut ctx, &mut self.messages);
        let asked = ctx.into_requests();
        // The workbench never waits for the render, so carrying out has no effect.
        let _ = self.carry_out(None, asked);
        result
    }

    /// Runs `handle` on the file work with its context and whether a dialog is open,
    /// then what it asked for.
    fn in_files(
        &mut self,
        handle: impl FnOnce(&mut FileWork, &mut PaneContext, bool) -> Option<Effect>,
    ) -> Option<Effect> {
        let dialog_open = self.overlay.is_some();
        let mut ctx = PaneContext::new(
            &mut self.workspace,
            &self.preview,
            self.screen,
            &mut self.status,
        );
        let effect = handle(&mut self.file_work, &mut ctx, dialog_open);
        let asked = ctx.into_requests();
        self.carry_out(effect, asked)
    }

    /// Does what the user asked of the session's file.
    pub(in crate::tui) fn file(&mut self, request: FileRequest) -> Option<Effect> {
        self.in_files(|files, ctx, _| files.handle(request, ctx))
    }

    /// Takes in what came of file work: the dialogs' answers go to them, the rest to
    /// the file work.
    pub(in crate::tui) fn take_in(&mut self, done: Done) -> Option<Effect> {
        match done {
            Done::NewSession(workspace) => self.new_session_made(*workspace),
            Done::ToolsRead { path, result } => self.tools_read(&path, result),
            Done::Openable(files) => self.openable_listed(files),
            Done::Folder { typed, entries } => self.folder_listed(typed, entries),
            done => {
                let saved = matches!(done, Done::Saved { .. });
                if matches!(done, Done::SaveFailed(_)) {
                    self.after_save = None;
                }
                let effect = self.in_files(|files, ctx, open| files.take_in(done, ctx, open));
                // What the save was for (open another session, start a new one).
                return effect.or_else(|| saved.then(|| self.after_save.take()).flatten());
            }
        }
        None
    }

    /// A message-list action, through the workbench when it is one of its own; the
    /// ones that change the conversation are recorded as one undo step (with the field
    /// editor visit they open, if any).
    pub(in crate::tui) fn in_messages_recorded(&mut self, action: MessageAction) -> Option<Effect> {
        let selected = self.messages.selected;
        let recorded = self.workbench.before(action, &mut self.workspace.session);
        let effect = match Workbench::owns(action) {
            true => {
                self.in_workbench(|bench, ctx, list| bench.handle(action, ctx, list));
                None
            }
            false => self.in_messages(|pane, ctx, editor| pane.handle(action, ctx, editor)),
        };
        let editing = self.editor.is_some();
        (self.workbench).after(recorded, selected, editing, &mut self.workspace.session);
        if matches!(action, MessageAction::Undo | MessageAction::Redo) {
            self.workspace.clean_again();
        }
        effect
    }

    /// Runs `edit` as one undo step that selects the row selected now.
    pub(in crate::tui) fn as_one_step<R>(&mut self, edit: impl FnOnce(&mut Self) -> R) -> R {
        let selected = self.messages.selected;
        self.workbench.begin_step(&mut self.workspace.session);
        let result = edit(self);
        self.workbench
            .end_step(&mut self.workspace.session, selected);
        result
    }

    /// After each change to an input's text: searches again when the input is a find or
    /// a search, and counts the matches for its title.
    pub(in crate::tui) fn search_as_typed(&mut self, input: &mut InputDialog) {
        input.matches = match input.kind {
            InputKind::FindMessage => {
                self.in_workbench(|bench, ctx, list| bench.find_from_origin(input, ctx, list))
            }
            InputKind::Search => self.search_prompt(&input.text),
            _ => return,
        };
    }

    fn search_prompt(&mut self, term: &str) -> Option<usize> {
        let mut count = None;
        self.in_prompt(|pane, ctx, _| {
            count = incremental::search_prompt(pane, term, ctx);
            None
        });
        count
    }

    /// Esc in an input: a find goes back to where it started, a prompt search is
    /// cleared; other inputs just close.
    pub(in crate::tui) fn cancel_search(&mut self, input: &InputDialog) -> Option<Effect> {
        match input.kind {
            InputKind::FindMessage if input.matches.is_some() => {
                self.in_workbench(|bench, ctx, list| bench.cancel_find(input, ctx, list));
            }
            InputKind::Search => {
                self.search_prompt("");
            }
            _ => {}
        }
        None
    }

    /// A click or a wheel turn; ignored while a dialog or the field editor is open
    /// (they have the keyboard).
    pub(in crate::tui) fn mouse(&mut self, input: MouseInput) -> Option<Effect> {
        if self.overlay.is_some() || self.editor.is_some() {
            return None;
        }
        let view = PointerView {
            screen: self.screen,
            session: &self.workspace.session,
            messages: &self.messages,
            templates: &self.templates,
            prompt: &self.prompt,
            preview: &self.preview,
            anchor: self.prompt_anchor(),
        };
        match mouse::request(input, &view)? {
            MouseRequest::Wheel { action, lines } => {
                (0..lines).find_map(|_| self.dispatch(action.clone().into()))
            }
            MouseRequest::Click { pane, hit } => {
                self.dispatch(Action::Focus(pane).into());
                self.hit(hit?)
            }
            MouseRequest::Drag(Hit::MessageRow(index)) => {
                let list = &mut self.messages;
                let on_message = list.selected < self.workspace.session.messages.len();
                if list.anchor.is_none() && index != list.selected && on_message {
                    list.anchor = Some(list.selected);
                }
                self.hit(Hit::MessageRow(index))
            }
            MouseRequest::Drag(_) => None,
        }
    }

    fn hit(&mut self, hit: Hit) -> Option<Effect> {
        match hit {
            Hit::MessageRow(index) => {
                self.messages.select_row(index);
                self.prompt.follow();
                None
            }
            Hit::TemplateRow { cursor, step } => {
                if let Some(cursor) = cursor {
                    self.templates.cursor = cursor;
                }
                self.dispatch(Action::Template(TemplateAction::Select(step)).into())
            }
            Hit::PromptByte { offset, top } => {
                self.prompt.cursor.offset = Some(offset);
                let effect = self.dispatch(Action::Prompt(PromptAction::JumpToSource).into());
                self.prompt.top = Some(top);
                effect
            }
        }
    }

    /// Runs `handle` on the compare side with its context, then what it asked for.
    pub(in crate::tui) fn in_compare<T>(
        &mut self,
        handle: impl FnOnce(&mut Sides, &mut CompareContext) -> T,
    ) -> T {
        self.in_matrix(|_, sides, ctx| handle(sides, ctx))
    }

    /// Runs `handle` on the engine matrix and the compare side it opens diffs in, with
    /// the compare side's context, then what it asked for.
    pub(in crate::tui) fn in_matrix<T>(
        &mut self,
        handle: impl FnOnce(&mut EngineMatrix, &mut Sides, &mut CompareContext) -> T,
    ) -> T {
        let mut ctx = CompareContext::new(
            &self.workspace,
            &self.preview,
            self.screen,
            self.templates.selected(),
            &mut self.status,
        );
        let out = handle(&mut self.jobs.matrix, &mut self.jobs.sides, &mut ctx);
        let asked = ctx.into_requests();
        if asked.cursor_home {
            self.templates.remember(&self.workspace.template);
        }
        if let Some(pane) = asked.focus {
            self.focus(pane);
        }
        if let Some(overlay) = asked.overlay {
            self.overlay = Some(overlay);
        }
        if asked.ask {
            self.ask_jobs(false);
        }
        out
    }

    /// A pane's handler returned `effect` and asked for `asked`: does it, and returns
    /// the effect (or the one an action waiting for the render has at once).
    fn carry_out(&mut self, effect: Option<Effect>, asked: Requests) -> Option<Effect> {
        if let Some(workspace) = asked.load {
            self.load(*workspace);
        }
        if asked.forget_template_set {
            self.opening.set = None;
        }
        if let Some(template) = asked.reloaded {
            self.preview = preview_for(&self.workspace);
            self.templates.remember(&template);
            self.invalidate();
        }
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
        if let Some((label, text)) = asked.compare_before {
            self.in_compare(|sides, _| sides.compare_before(label, text));
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
        if let Some(report) = asked.report {
            self.status = Some(report);
        }
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
        self.refresh_open_opener();
    }

    /// The entries of the folder typed arrived (dropped when another was typed since).
    pub(in crate::tui) fn folder_listed(&mut self, typed: String, entries: Vec<String>) {
        if typed == self.opening.folder.typed {
            self.opening.folder.entries = entries;
            self.refresh_open_opener();
        }
    }

    fn refresh_open_opener(&mut self) {
        if let Some(Overlay::Input(input)) = &mut self.overlay {
            if input.kind == InputKind::Open {
                input.set_choices(self.opening.choices(&self.templates.catalog, &input.text));
            }
        }
    }

    /// The folder the opener's `text` names, listed as file work unless it is the one
    /// listed (or being listed) already.
    fn list_typed_folder(&mut self, text: &str) -> Option<Effect> {
        let (folder, _) = opener_paths::typed_folder(text)?;
        if folder == self.opening.folder.typed {
            return None;
        }
        self.opening.folder = opener_paths::Folder {
            typed: folder.to_string(),
            entries: Vec::new(),
        };
        Some(Effect::Disk(Job::ListFolder(folder.to_string())))
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
                    self.dispatch(Action::Focus(pane).into());
                }
                return self.dispatch(action.into());
            }
            DialogRequest::Save { then_quit } => {
                return self.file(FileRequest::Save {
                    path: None,
                    then_quit,
                })
            }
            DialogRequest::SaveTo { path, then_quit } => {
                return self.file(FileRequest::SaveAs { path, then_quit })
            }
            DialogRequest::Overwrite => return self.file(FileRequest::Overwrite),
            DialogRequest::OpenSession { path, discard } => {
                return self.file(FileRequest::Open { path, discard })
            }
            DialogRequest::DiscardAndQuit => {
                return Some(match self.workspace.discard_recovery() {
                    Some(removal) => Effect::Disk(Job::DiscardAndQuit(removal)),
                    None => Effect::Quit,
                });
            }
            DialogRequest::Effect(effect) => return Some(effect),
            DialogRequest::SaveThen(then) => {
                self.after_save = Some(*then);
                return self.file(FileRequest::Save {
                    path: None,
                    then_quit: false,
                });
            }
            request => return self.carry_out_edit(request),
        }
        None
    }

    /// The requests that search, select or change the session.
    fn carry_out_edit(&mut self, request: DialogRequest) -> Option<Effect> {
        match request {
            DialogRequest::SetRole(role) => self.as_one_step(|app| {
                app.in_messages(|pane, ctx, _| {
                    pane.set_role(ctx, &role);
                    None
                });
            }),
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
                // What a keystroke found is progress: Enter's find is what the log keeps.
                self.status = self.status.take().map(Status::transient);
            }
            DialogRequest::CancelSearch(input) => return self.cancel_search(&input),
            DialogRequest::Find(input) => {
                self.in_workbench(|bench, ctx, list| bench.find_from_origin(&input, ctx, list));
            }
            DialogRequest::Open(text) => {
                let mut said = Said::default();
                self.opening.open(&text, &mut said);
                self.status = said.status;
            }
            DialogRequest::ListFolder(text) => return self.list_typed_folder(&text),
            DialogRequest::ForgetFolder => self.opening.folder = Default::default(),
            DialogRequest::GoTo(text) => {
                self.in_workbench(|bench, ctx, list| bench.go_to(&text, ctx, list))
            }
            DialogRequest::CompareWith(text) => {
                self.in_compare(|sides, ctx| sides.compare_source(&text, ctx))
            }
            DialogRequest::AddTools { tools, what } => self.add_tools(tools, &what),
            DialogRequest::AppendMessage(message) => self.append_parsed(message),
            _ => {}
        }
        None
    }

    /// Appends `tools` to the session's, as one undo step.
    fn add_tools(&mut self, tools: Vec<Json>, what: &str) {
        let names = tool_skeleton::names(&tools);
        self.as_one_step(|app| {
            let session = &mut app.workspace.session;
            session.tools.get_or_insert_with(Vec::new).extend(tools);
            app.edited();
        });
        self.notify(format!("{what} {}", names.join(", ")));
    }

    /// Appends the parsed message, as one undo step, and selects it.
    fn append_parsed(&mut self, message: Json) {
        let Json::Object(fields) = message else {
            return;
        };
        let at = self.workspace.session.messages.len();
        self.as_one_step(|app| {
            app.workspace.session.messages.push(Message(fields));
            app.edited();
        });
        self.messages.select_row(at);
        self.prompt.follow();
        self.notify(format!("added message {} from the pasted output", at + 1));
    }
}
