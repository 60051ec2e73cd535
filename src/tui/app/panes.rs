//! Lending the panes what they may touch ([`PaneContext`]) and doing what they ask for
//! ([`Requests`]) once their handler returns.

use super::App;
use crate::tui::app::action::{Effect, Pane};
use crate::tui::app::pane::{PaneContext, Requests};
use crate::tui::compare::{CompareContext, Sides};
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
