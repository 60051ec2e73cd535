//! The prompt pane's state and update handlers: scrolling (following the selected
//! message until the user scrolls), whitespace and diff toggles, search and copy.
//! `prompt_view` draws it.

use std::ops::Range;

use super::action::{CopyTarget, Direction, Effect, PromptAction};
use super::app::App;
use super::dialog::Overlay;
use super::preview::Preview;
use super::rendering::Deferred;

/// A search term and where it occurs in the prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    /// The term.
    pub term: String,
    /// Byte ranges of every match.
    pub matches: Vec<Range<usize>>,
    /// The current match.
    pub current: usize,
}

impl Search {
    fn find(term: String, text: &str) -> Self {
        let matches = if term.is_empty() {
            Vec::new()
        } else {
            text.match_indices(term.as_str())
                .map(|(i, m)| i..i + m.len())
                .collect()
        };
        Search {
            term,
            matches,
            current: 0,
        }
    }
}

/// Prompt pane state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptPane {
    /// First line shown; `None` follows the selected message.
    pub top: Option<usize>,
    /// Show whitespace marks.
    pub whitespace: bool,
    /// Show the diff against the expected prompt.
    pub diff: bool,
    /// The active search.
    pub search: Option<Search>,
}

impl PromptPane {
    /// Go back to following the selected message.
    pub fn follow(&mut self) {
        self.top = None;
    }

    /// Keeps search results in step with a new render.
    pub fn after_render(&mut self, preview: &Preview) {
        if let Some(search) = &mut self.search {
            let current = search.current;
            *search = Search::find(std::mem::take(&mut search.term), preview.text());
            search.current = current.min(search.matches.len().saturating_sub(1));
        }
    }

    /// The first line to show in a view `height` lines tall.
    pub fn top_line(&self, preview: &Preview, anchor: Option<usize>, height: usize) -> usize {
        let last = preview.line_count().saturating_sub(1);
        match self.top {
            Some(top) => top.min(last),
            None => anchor
                .map(|offset| preview.line_of(offset).saturating_sub(height / 3))
                .unwrap_or(0)
                .min(last),
        }
    }
}

impl App {
    /// The byte offset the prompt view follows: the selected message's span, or the
    /// nearest earlier message that was found in the prompt.
    pub fn prompt_anchor(&self) -> Option<usize> {
        if let Some(first) = self.selected_ranges().first() {
            return Some(first.start);
        }
        (0..=self.messages.selected)
            .rev()
            .take(self.preview.spans.len() + 1)
            .find_map(|index| self.preview.span(index).map(|r| r.start))
    }

    fn prompt_height(&self) -> usize {
        super::ui::pane_height(&self.screen, super::action::Pane::Prompt)
    }

    /// Handles a prompt-pane action.
    pub(super) fn update_prompt(&mut self, action: PromptAction) -> Option<Effect> {
        match action {
            PromptAction::Scroll(step) if self.prompt.diff => self.scroll_diff(step),
            PromptAction::Scroll(step) => self.move_prompt_cursor(step),
            PromptAction::Column(direction) => self.move_prompt_column(direction),
            PromptAction::JumpToSource => self.jump_to_source(),
            PromptAction::ToggleLineNumbers => {
                self.workbench.numbers = !self.workbench.numbers;
            }
            PromptAction::NextChange(direction) => self.next_change(direction),
            PromptAction::ToggleHunks => self.toggle_hunks(),
            PromptAction::ToggleWhitespace => self.prompt.whitespace = !self.prompt.whitespace,
            PromptAction::ToggleTokens => self.toggle_tokens(),
            PromptAction::ToggleDiff => self.toggle_diff(),
            PromptAction::StartSearch => self.overlay = Some(Overlay::search()),
            PromptAction::NextMatch(direction) => self.next_match(direction),
            PromptAction::Copy(target) => return self.when_current(Deferred::Copy(target)),
        }
        None
    }

    fn toggle_diff(&mut self) {
        if !self.prompt.diff && self.workspace.session.expected.is_none() {
            return self.warn("no expected prompt yet: press E to take it from the current render");
        }
        self.prompt.diff = !self.prompt.diff;
        self.prompt.top = Some(0);
        if self.prompt.diff {
            self.when_current(Deferred::FirstDifference);
        }
    }

    /// The diff row to open diff mode at: two lines above the first change, so the user
    /// lands on what differs instead of a long identical preamble.
    pub(super) fn first_difference(&self) -> usize {
        self.first_change_row()
    }

    /// Starts a search for `term` and jumps to the first match.
    pub fn start_search(&mut self, term: String) {
        self.prompt.search = Some(Search::find(term, self.preview.text()));
        self.prompt.diff = false;
        self.show_match();
    }

    fn next_match(&mut self, direction: Direction) {
        let Some(search) = &mut self.prompt.search else {
            return self.warn("no search: press / first");
        };
        let count = search.matches.len();
        if count == 0 {
            let text = format!("no match for {:?}", search.term);
            return self.warn(text);
        }
        search.current = match direction {
            Direction::Down => (search.current + 1) % count,
            Direction::Up => (search.current + count - 1) % count,
        };
        self.show_match();
    }

    fn show_match(&mut self) {
        let Some(search) = &self.prompt.search else {
            return;
        };
        match search.matches.get(search.current) {
            Some(found) => {
                let line = self.preview.line_of(found.start);
                self.prompt.top = Some(line.saturating_sub(self.prompt_height() / 3));
                let text = format!(
                    "match {}/{} for {:?}",
                    search.current + 1,
                    search.matches.len(),
                    search.term
                );
                self.notify(text);
            }
            None => {
                let text = format!("no match for {:?}", search.term);
                self.warn(text);
            }
        }
    }

    /// Copies part of the shown prompt (the terminal reports how it was sent).
    pub(super) fn copy(&mut self, target: CopyTarget) -> Option<Effect> {
        if self.preview.error().is_some() {
            self.warn("nothing to copy: the render failed");
            return None;
        }
        let text = self.preview.text();
        let (range, what) = match target {
            CopyTarget::Prompt => (Some(0..text.len()), "the prompt"),
            CopyTarget::Message => (self.selected_extent(), "the selected message"),
            CopyTarget::Match => (self.match_lines(), "the current match's line"),
        };
        let Some(text) = range.and_then(|r| text.get(r)) else {
            self.warn(match target {
                CopyTarget::Message => {
                    "nothing to copy: the selected message is not found in the prompt"
                }
                _ => "nothing to copy: no search match (press / to search)",
            });
            return None;
        };
        Some(Effect::Copy {
            text: text.to_string(),
            what,
        })
    }

    /// The whole line(s) holding the current search match.
    fn match_lines(&self) -> Option<std::ops::Range<usize>> {
        let search = self.prompt.search.as_ref()?;
        let found = search.matches.get(search.current)?;
        let first = self.preview.line_of(found.start);
        let last = self
            .preview
            .line_of(found.end.saturating_sub(1).max(found.start));
        let start = self.preview.line_starts[first];
        let line = self.preview.line(last);
        Some(start..self.preview.line_starts[last] + line.len())
    }
}
