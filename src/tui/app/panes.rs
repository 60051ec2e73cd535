//! Lending the panes and the other components what they may touch ([`PaneContext`])
//! and doing what they ask for ([`Requests`]) once their handler returns.

use super::{preview_for, App};
use crate::tui::action::Action;
use crate::tui::action::Effect;
use crate::tui::action::MessageAction;
use crate::tui::action::Pane;
use crate::tui::action::PromptAction;
use crate::tui::action::TemplateAction;
use crate::tui::context::PaneContext;
use crate::tui::context::Requests;
use crate::tui::dialogs::InputDialog;
use crate::tui::dialogs::InputKind;
use crate::tui::files::disk::Done;
use crate::tui::files::FileRequest;
use crate::tui::files::FileWork;

use crate::tui::compare::CompareContext;

use crate::tui::compare::Sides;
use crate::tui::panes::messages::Editor;
use crate::tui::panes::messages::MessagesPane;
use crate::tui::panes::prompt::PromptFacts;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::panes::templates::TemplatesPane;
use crate::tui::terminal::mouse;
use crate::tui::terminal::mouse::Hit;
use crate::tui::terminal::mouse::MouseInput;
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
            done => return self.in_files(|files, ctx, open| files.take_in(done, ctx, open)),
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
            false => self.in_messages(|pane, ctx, editor| {
                pane.handle(action, ctx, editor);
                None
            }),
        };
        let editing = self.editor.is_some();
        (self.workbench).after(recorded, selected, editing, &mut self.workspace.session);
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
            InputKind::Open => return self.refresh_choices(input),
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
                (0..lines).find_map(|_| self.update(action.clone()))
            }
            MouseRequest::Click { pane, hit } => {
                self.update(Action::Focus(pane));
                self.hit(hit?)
            }
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
                self.update(Action::Template(TemplateAction::Select(step)))
            }
            Hit::PromptByte { offset, top } => {
                self.prompt.cursor.offset = Some(offset);
                let effect = self.update(Action::Prompt(PromptAction::JumpToSource));
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
        let mut ctx = CompareContext::new(
            &self.workspace,
            &self.preview,
            self.screen,
            self.templates.selected(),
            &mut self.status,
        );
        let out = handle(&mut self.jobs.sides, &mut ctx);
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
