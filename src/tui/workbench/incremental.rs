//! Searches that run as you type: the message find (`/` in the Messages pane) selects
//! the first matching message after the one it started from, and the prompt search
//! (`/` in the Prompt pane) scrolls to the first match, at every keystroke; the input's
//! title counts the matches. Enter keeps the place found (`n` / `N` go on from there);
//! Esc goes back: to the message the find started from, or to no search in the prompt.

use crate::tui::context::PaneContext;
use crate::tui::dialogs::InputDialog;
use crate::tui::panes::messages::MessagesPane;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::workbench::message_matches;
use crate::tui::workbench::select;
use crate::tui::workbench::Workbench;

impl Workbench {
    /// Finds `input`'s text from the message the find started at (not from the match
    /// the previous keystroke selected, so typing more narrows rather than moves on);
    /// the number of matching messages, `None` for no text.
    pub fn find_from_origin(
        &mut self,
        input: &InputDialog,
        ctx: &mut PaneContext,
        list: &mut MessagesPane,
    ) -> Option<usize> {
        let last = ctx.workspace.session.messages.len();
        select(input.origin.min(last), ctx, list);
        if input.text.is_empty() {
            self.find = None;
            return None;
        }
        self.find_message(&input.text, ctx, list);
        let needle = input.text.to_lowercase();
        let messages = &ctx.workspace.session.messages;
        Some(
            messages
                .iter()
                .filter(|m| message_matches(m, &needle))
                .count(),
        )
    }

    /// Esc in the find input after it found something: back to where it started, with
    /// nothing to find.
    pub fn cancel_find(
        &mut self,
        input: &InputDialog,
        ctx: &mut PaneContext,
        list: &mut MessagesPane,
    ) {
        self.find = None;
        let last = ctx.workspace.session.messages.len();
        select(input.origin.min(last), ctx, list);
    }
}

/// Searches the shown prompt for `term` and scrolls to its first match; the number of
/// matches, `None` (and no search) for no text.
pub fn search_prompt(pane: &mut PromptPane, term: &str, ctx: &mut PaneContext) -> Option<usize> {
    if term.is_empty() {
        pane.search = None;
        return None;
    }
    pane.start_search(term.to_string(), ctx);
    pane.search.as_ref().map(|s| s.matches.len())
}
