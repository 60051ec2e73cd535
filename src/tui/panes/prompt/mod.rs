//! The prompt pane's state and action handler: scrolling (following the selected message
//! until the user scrolls), the cursor ([`crate::tui::panes::prompt::cursor`]), whitespace, line
//! numbers and diff toggles (`panes::prompt::diff`), search and copy. `panes::prompt::view` draws
//! it.

pub mod click;
pub mod cursor;
pub mod diff;
pub mod highlight;
pub mod injection;
pub mod tokens;
pub mod view;
pub mod wrap;

use std::ops::Range;

use crate::tui::action::CopyTarget;

use crate::tui::action::Direction;

use crate::tui::context::Effect;

use crate::tui::action::Pane;

use crate::tui::action::PromptAction;
use crate::tui::context::Deferred;
use crate::tui::context::PaneContext;
use crate::tui::dialogs::Overlay;
use crate::tui::jobs::attribution::describe;
use crate::tui::jobs::attribution::AttributionState;
use crate::tui::jobs::attribution::Explanation;
use crate::tui::panes::prompt::cursor::PromptCursor;
use crate::tui::panes::prompt::cursor::Viewport;
use crate::tui::panes::prompt::tokens::TokenMode;
use crate::tui::preview::Preview;

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
    /// The cursor.
    pub cursor: PromptCursor,
    /// Show line numbers.
    pub numbers: bool,
    /// The diff shows changes with context only.
    pub hunks: bool,
}

/// What the prompt pane reads from the rest of the app.
#[derive(Debug, Clone, Copy)]
pub struct PromptFacts<'a> {
    /// Where the view follows: the selected message's first byte, or the nearest
    /// earlier message's.
    pub anchor: Option<usize>,
    /// Token mode (the cursor moves by tokens).
    pub tokens: &'a TokenMode,
    /// Attribution (`Enter` selects the message that produced the byte under the cursor).
    pub explanation: &'a Explanation,
}

impl PromptPane {
    /// Go back to following the selected message.
    pub fn follow(&mut self) {
        self.top = None;
    }

    /// Another session: following its selection, no whitespace marks, diff or search
    /// (the cursor, line numbers and the hunk view stay).
    pub fn new_session(&mut self) {
        *self = PromptPane {
            cursor: self.cursor,
            numbers: self.numbers,
            hunks: self.hunks,
            ..PromptPane::default()
        };
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

    /// Handles a prompt-pane action (token mode, which the worker serves, is the app's).
    pub fn handle(
        &mut self,
        action: PromptAction,
        ctx: &mut PaneContext,
        facts: PromptFacts,
    ) -> Option<Effect> {
        let view = Viewport::new(ctx.preview, &ctx.screen, facts.anchor, facts.tokens);
        match action {
            PromptAction::Scroll(step) if self.diff => self.scroll_diff(ctx, step),
            PromptAction::Scroll(step) => self.move_cursor(&view, step),
            PromptAction::Column(direction) => self.move_column(&view, direction),
            PromptAction::JumpToSource => self.jump_to_source(ctx, &view, facts.explanation),
            PromptAction::ToggleLineNumbers => self.numbers = !self.numbers,
            PromptAction::NextChange(direction) => self.next_change(ctx, direction),
            PromptAction::ToggleHunks => self.toggle_hunks(ctx),
            PromptAction::ToggleWhitespace => self.whitespace = !self.whitespace,
            // The app's own: the worker tokenizes.
            PromptAction::ToggleTokens => {}
            PromptAction::ToggleDiff => self.toggle_diff(ctx),
            PromptAction::StartSearch => ctx.open(Overlay::search()),
            PromptAction::NextMatch(direction) => self.next_match(ctx, direction),
            PromptAction::Copy(target) => ctx.when_current(Deferred::Copy(target)),
        }
        None
    }

    fn toggle_diff(&mut self, ctx: &mut PaneContext) {
        if !self.diff && ctx.workspace.session.expected.is_none() {
            return ctx.warn("no expected prompt yet: press E to take it from the current render");
        }
        self.diff = !self.diff;
        self.top = Some(0);
        if self.diff {
            ctx.when_current(Deferred::FirstDifference);
        }
    }

    /// Selects the message that produced the byte under the cursor (or, without a
    /// cursor, the first line in view) and shows it in the Messages pane.
    fn jump_to_source(
        &mut self,
        ctx: &mut PaneContext,
        view: &Viewport,
        explanation: &Explanation,
    ) {
        let preview = ctx.preview;
        if preview.error().is_some() {
            return ctx.warn("nothing to jump to: the render failed");
        }
        let offset = self.cursor_offset(preview).unwrap_or_else(|| {
            let top = self.view_top(view);
            preview.line_starts.get(top).copied().unwrap_or(0)
        });
        let Some(source) = explanation.source_at(preview, offset) else {
            return ctx.warn(match explanation.state(preview) {
                AttributionState::Failed | AttributionState::OnScreenOnly => {
                    "attribution failed here: see the prompt pane's title"
                }
                AttributionState::Stopped => {
                    "attribution stopped: it runs again after the next change"
                }
                _ => "attribution is still being computed: try again in a moment",
            });
        };
        if let Some(index) = source.message() {
            ctx.select_message(index);
            self.follow();
            ctx.focus(Pane::Messages);
        }
        ctx.notify(format!("produced by {}", describe(source)));
    }

    /// Starts a search for `term` and jumps to the first match.
    pub fn start_search(&mut self, term: String, ctx: &mut PaneContext) {
        self.search = Some(Search::find(term, ctx.preview.text()));
        self.diff = false;
        self.show_match(ctx);
    }

    fn next_match(&mut self, ctx: &mut PaneContext, direction: Direction) {
        let Some(search) = &mut self.search else {
            return ctx.warn("no search: press / first");
        };
        let count = search.matches.len();
        if count == 0 {
            let text = format!("no match for {:?}", search.term);
            return ctx.warn(text);
        }
        search.current = match direction {
            Direction::Down => (search.current + 1) % count,
            Direction::Up => (search.current + count - 1) % count,
        };
        self.show_match(ctx);
    }

    fn show_match(&mut self, ctx: &mut PaneContext) {
        let Some(search) = &self.search else {
            return;
        };
        let Some(found) = search.matches.get(search.current) else {
            let text = format!("no match for {:?}", search.term);
            return ctx.warn(text);
        };
        let text = format!(
            "match {}/{} for {:?}",
            search.current + 1,
            search.matches.len(),
            search.term
        );
        let line = ctx.preview.line_of(found.start);
        let height = crate::tui::layout::pane_height(&ctx.screen, Pane::Prompt);
        self.top = Some(line.saturating_sub(height / 3));
        ctx.notify(text);
    }

    /// Part of the shown prompt for the clipboard: the whole prompt, the selected
    /// message's `extent`, or the current match's lines. `Err`: why there is nothing.
    pub fn copy(
        &self,
        target: CopyTarget,
        preview: &Preview,
        extent: Option<Range<usize>>,
    ) -> Result<Effect, &'static str> {
        if preview.error().is_some() {
            return Err("nothing to copy: the render failed");
        }
        let text = preview.text();
        let (range, what) = match target {
            CopyTarget::Prompt => (Some(0..text.len()), "the prompt"),
            CopyTarget::Message => (extent, "the selected message"),
            CopyTarget::Match => (self.match_lines(preview), "the current match's line"),
        };
        let Some(text) = range.and_then(|r| text.get(r)) else {
            return Err(match target {
                CopyTarget::Message => {
                    "nothing to copy: the selected message is not found in the prompt"
                }
                _ => "nothing to copy: no search match (press / to search)",
            });
        };
        Ok(Effect::Copy {
            text: text.to_string(),
            what,
        })
    }

    /// The whole line(s) holding the current search match.
    fn match_lines(&self, preview: &Preview) -> Option<Range<usize>> {
        let search = self.search.as_ref()?;
        let found = search.matches.get(search.current)?;
        let first = preview.line_of(found.start);
        let last = preview.line_of(found.end.saturating_sub(1).max(found.start));
        let start = preview.line_starts[first];
        let line = preview.line(last);
        Some(start..preview.line_starts[last] + line.len())
    }
}
