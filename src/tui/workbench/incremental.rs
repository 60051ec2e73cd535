//! Searches that run as you type: the message find (`/` in the Messages pane) selects
//! the first matching message after the one it started from, and the prompt search
//! (`/` in the Prompt pane) scrolls to the first match, at every keystroke; the input's
//! title counts the matches. Enter keeps the place found (`n` / `N` go on from there);
//! Esc goes back: to the message the find started from, or to no search in the prompt.

use crate::tui::app::action::Effect;
use crate::tui::app::App;
use crate::tui::dialogs::{InputDialog, InputKind};
use crate::tui::workbench::message_matches;

impl App {
    /// After each change to an input's text: searches again when the input is a find or
    /// a search, and counts the matches for its title.
    pub(in crate::tui) fn search_as_typed(&mut self, input: &mut InputDialog) {
        input.matches = match input.kind {
            InputKind::FindMessage => self.find_from_origin(input),
            InputKind::Search => self.search_prompt(&input.text),
            _ => return,
        };
    }

    /// Finds `input`'s text from the message the find started at (not from the match
    /// the previous keystroke selected, so typing more narrows rather than moves on);
    /// the number of matching messages, `None` for no text.
    pub(in crate::tui) fn find_from_origin(&mut self, input: &InputDialog) -> Option<usize> {
        let last = self.workspace.session.messages.len();
        self.select_message(input.origin.min(last));
        if input.text.is_empty() {
            self.workbench.find = None;
            return None;
        }
        self.find_message(&input.text);
        let needle = input.text.to_lowercase();
        let messages = &self.workspace.session.messages;
        Some(
            messages
                .iter()
                .filter(|m| message_matches(m, &needle))
                .count(),
        )
    }

    /// Searches the shown prompt for `term` and scrolls to its first match; the number
    /// of matches, `None` (and no search) for no text.
    fn search_prompt(&mut self, term: &str) -> Option<usize> {
        let term = term.to_string();
        let mut count = None;
        self.in_prompt(|pane, ctx, _| {
            if term.is_empty() {
                pane.search = None;
            } else {
                pane.start_search(term, ctx);
                count = pane.search.as_ref().map(|s| s.matches.len());
            }
            None
        });
        count
    }

    /// Esc in an input: a find goes back to where it started, a prompt search is
    /// cleared; other inputs just close.
    pub(in crate::tui) fn cancel_search(&mut self, input: &InputDialog) -> Option<Effect> {
        match input.kind {
            InputKind::FindMessage if input.matches.is_some() => {
                self.workbench.find = None;
                let last = self.workspace.session.messages.len();
                self.select_message(input.origin.min(last));
            }
            InputKind::Search => {
                self.search_prompt("");
            }
            _ => {}
        }
        None
    }
}
