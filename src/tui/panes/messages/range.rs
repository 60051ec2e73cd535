//! The range mode of the message list (`v`, as lazygit's): the selection is a block from
//! the anchor to the cursor, which movement, go-to, find and the mouse extend; delete,
//! move, duplicate, role and copy act on the whole block (see `panes::messages::block`),
//! and the workbench records each as one undo step.

use std::ops::RangeInclusive;

use chatplate_core::session::Session;

use crate::tui::action::{Direction, MessageAction};
use crate::tui::context::{Effect, PaneContext};
use crate::tui::panes::messages::block;
use crate::tui::panes::messages::MessagesPane;

/// How the status line names `count` messages.
fn messages(count: usize) -> String {
    match count {
        1 => "1 message".into(),
        n => format!("{n} messages"),
    }
}

impl MessagesPane {
    /// The block the range mode selects; `None` when it is off.
    pub fn block(&self, session: &Session) -> Option<RangeInclusive<usize>> {
        block::span(self.anchor?, self.selected, session.messages.len())
    }

    /// `v`: a block starts at the selected message; again (or Esc), the mode ends.
    pub(super) fn toggle_range(&mut self, ctx: &mut PaneContext) {
        if self.anchor.take().is_some() {
            return;
        }
        if self.selected >= ctx.workspace.session.messages.len() {
            return ctx.warn("select a message first (this is the settings row)");
        }
        self.anchor = Some(self.selected);
        self.in_fields = false;
        ctx.notify("range: j/k, :N, / or a click extend it; Esc leaves");
    }

    /// Makes `block` the selection, keeping which end the cursor is at.
    fn reselect(&mut self, block: &RangeInclusive<usize>, cursor_last: bool) {
        let (start, end) = (*block.start(), *block.end());
        (self.anchor, self.selected) = match cursor_last {
            true => (Some(start), end),
            false => (Some(end), start),
        };
    }

    /// Whether `action` acts on the block in the range mode.
    pub(super) fn acts_on_block(action: MessageAction) -> bool {
        matches!(
            action,
            MessageAction::Delete
                | MessageAction::Duplicate
                | MessageAction::Move(_)
                | MessageAction::CycleRole
                | MessageAction::CopyJson
        )
    }

    /// Runs a block action on `block`.
    pub(super) fn handle_block(
        &mut self,
        action: MessageAction,
        block: RangeInclusive<usize>,
        ctx: &mut PaneContext,
    ) -> Option<Effect> {
        let session = &mut ctx.workspace.session;
        let count = block.clone().count();
        let cursor_last = self.anchor.is_none_or(|anchor| anchor <= self.selected);
        match action {
            MessageAction::CopyJson => {
                return Some(Effect::Copy {
                    text: block::to_json(session, &block),
                    what: "the messages as JSON",
                });
            }
            MessageAction::Delete => {
                self.selected = block::delete(session, &block);
                self.anchor = None;
                ctx.report(format!("deleted {}; u undoes", messages(count)));
            }
            MessageAction::Duplicate => {
                let copy = block::duplicate(session, &block);
                self.reselect(&copy, cursor_last);
                ctx.report(format!(
                    "duplicated {}: the copy is selected",
                    messages(count)
                ));
            }
            MessageAction::Move(direction) => {
                let down = direction == Direction::Down;
                let Some(moved) = block::shift(session, &block, down) else {
                    ctx.warn("the block is already at that end");
                    return None;
                };
                self.reselect(&moved, cursor_last);
            }
            MessageAction::CycleRole => {
                let role = block::cycle_role(session, &block);
                ctx.report(format!("{} now {role}", messages(count)));
            }
            _ => return None,
        }
        ctx.follow_selection();
        ctx.edited();
        None
    }

    /// Sets the role of every message of the block (the role dialog in the range mode).
    pub(super) fn set_block_role(
        &mut self,
        block: &RangeInclusive<usize>,
        role: &str,
        ctx: &mut PaneContext,
    ) {
        block::set_role(&mut ctx.workspace.session, block, role);
        ctx.report(format!("{} now {role}", messages(block.clone().count())));
        ctx.follow_selection();
        ctx.edited();
    }

    /// Pasted JSON messages go in after the block (or the selected message; at the end
    /// from the settings row) and become the block, so they can be moved at once. Bad
    /// JSON changes nothing and says where it is wrong.
    pub fn paste_messages(&mut self, text: &str, ctx: &mut PaneContext) {
        let parsed = match block::parse(text) {
            Ok(parsed) => parsed,
            Err(err) => return ctx.warn(format!("nothing pasted: {err}")),
        };
        let session = &mut ctx.workspace.session;
        let after = self.block(session).map_or(self.selected, |b| *b.end());
        let at = (after + 1).min(session.messages.len());
        let count = parsed.len();
        let pasted = block::insert(session, at, parsed);
        self.reselect(&pasted, true);
        self.in_fields = false;
        ctx.report(format!(
            "pasted {} as messages {}–{}; Esc leaves the range",
            messages(count),
            pasted.start() + 1,
            pasted.end() + 1
        ));
        ctx.follow_selection();
        ctx.edited();
    }
}
