//! Working in long sessions: undo / redo for edits made from the lists (delete, move,
//! duplicate, role, tool calls, a whole field-editor visit), going to message N, finding
//! messages by text, and the three states of `content` (text, `null`, absent), which
//! templates tell apart with `is defined` / `is none`.
//!
//! [`Workbench`] owns the history and the find text. The app lends it a [`PaneContext`]
//! and the message list it works on; what only the app can do (render again, follow the
//! selection in the prompt, open the go-to or find input) it asks for there.

pub mod history;
pub mod incremental;

use serde_json::Value as Json;

use chatplate_core::session::Message;

use chatplate_core::session::Session;

use crate::tui::action::Direction;

use crate::tui::action::MessageAction;
use crate::tui::context::PaneContext;
use crate::tui::dialogs::InputDialog;
use crate::tui::dialogs::InputKind;
use crate::tui::dialogs::Overlay;
use crate::tui::panes::messages::fields;
use crate::tui::panes::messages::fields::Field;
use crate::tui::panes::messages::fields::Row;
use crate::tui::panes::messages::MessagesPane;
use crate::tui::workbench::history::History;

/// Undo history, the last find text, and the row selected when an editor visit began.
#[derive(Debug, Clone, Default)]
pub struct Workbench {
    history: History,
    /// The row selected when the field editor opened; the visit is recorded as one step
    /// when it closes.
    editor_visit: Option<usize>,
    /// The text `/` last looked for in the message list.
    pub find: Option<String>,
}

impl Workbench {
    /// Whether there is anything to undo.
    pub fn can_undo(&self) -> bool {
        self.history.can_undo()
    }

    /// Forgets the undo history (another session was opened).
    pub fn forget_history(&mut self) {
        self.history.clear();
        self.editor_visit = None;
    }
}

/// What a message's `content` is, as a template sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentState {
    /// A non-empty string or a list of parts.
    Text,
    /// `""`: defined, not none, empty.
    Empty,
    /// `null`: defined and none.
    Null,
    /// No `content` key: undefined.
    Missing,
}

impl ContentState {
    /// The state of `msg`'s content.
    pub fn of(msg: &Message) -> Self {
        match msg.0.get("content") {
            None => ContentState::Missing,
            Some(Json::Null) => ContentState::Null,
            Some(Json::String(text)) if text.is_empty() => ContentState::Empty,
            Some(_) => ContentState::Text,
        }
    }

    /// How the list and the field list show a content that is not text.
    pub fn mark(self) -> Option<&'static str> {
        match self {
            ContentState::Text => None,
            ContentState::Empty => Some("\"\""),
            ContentState::Null => Some("null"),
            ContentState::Missing => Some("(no content)"),
        }
    }
}

/// Whether `app::action` can change the conversation (and so is recorded for undo).
fn changes_conversation(action: MessageAction) -> bool {
    matches!(
        action,
        MessageAction::Add
            | MessageAction::Insert
            | MessageAction::Delete
            | MessageAction::Duplicate
            | MessageAction::Move(_)
            | MessageAction::CycleRole
            | MessageAction::AddToolCall
            | MessageAction::AddToolResult
            | MessageAction::EditField
            | MessageAction::RemoveField
            | MessageAction::ToggleArgumentsForm
    )
}

/// Whether `msg` matches `needle` (lower case): role, content text, tool names.
pub(in crate::tui) fn message_matches(msg: &Message, needle: &str) -> bool {
    let has = |text: &str| text.to_lowercase().contains(needle);
    let content = match msg.0.get("content") {
        Some(Json::String(text)) => has(text),
        Some(parts @ Json::Array(_)) => has(&parts.to_string()),
        _ => false,
    };
    let calls = fields::tool_calls(msg).iter().any(|call| {
        call.pointer("/function/name")
            .and_then(Json::as_str)
            .is_some_and(has)
    });
    let name = msg.0.get("name").and_then(Json::as_str).is_some_and(has);
    has(msg.role()) || content || calls || name
}

impl Workbench {
    /// Whether `action` is one of the workbench's own (the rest are the list's).
    pub fn owns(action: MessageAction) -> bool {
        matches!(
            action,
            MessageAction::Undo
                | MessageAction::Redo
                | MessageAction::StartGoTo
                | MessageAction::StartFind
                | MessageAction::FindNext(_)
                | MessageAction::CycleContentKind
        )
    }

    /// Marks the current state as where the next undo step starts.
    pub fn begin_step(&mut self, session: &mut Session) {
        self.history.sync(session);
    }

    /// Records what changed since [`Workbench::begin_step`] as one undo step that
    /// selects `selected` again.
    pub fn end_step(&mut self, session: &mut Session, selected: usize) {
        self.history.record(session, selected);
    }

    /// Before a message action: starts an undo step when `action` can change the
    /// conversation outside an editor visit; whether it did.
    pub fn before(&mut self, action: MessageAction, session: &mut Session) -> bool {
        let recorded = changes_conversation(action) && self.editor_visit.is_none();
        if recorded {
            self.begin_step(session);
        }
        recorded
    }

    /// After a message action that began at row `selected` ([`Workbench::before`] said
    /// `recorded`): records the step, or, when the action opened the field editor,
    /// waits for it to close.
    pub fn after(&mut self, recorded: bool, selected: usize, editing: bool, session: &mut Session) {
        if editing && self.editor_visit.is_none() {
            // An editor opened (edit, add, tool result): the action and the visit are one
            // undo step, recorded when the editor closes.
            if !recorded {
                self.begin_step(session);
            }
            self.editor_visit = Some(selected);
        } else if recorded {
            self.end_step(session, selected);
        }
    }

    /// After an editor action: the visit becomes one undo step, if it changed anything,
    /// once the editor is closed.
    pub fn editor_closed(&mut self, editing: bool, session: &mut Session) {
        if editing {
            return;
        }
        if let Some(selected) = self.editor_visit.take() {
            self.end_step(session, selected);
        }
    }

    /// The actions [`Workbench::owns`].
    pub fn handle(
        &mut self,
        action: MessageAction,
        ctx: &mut PaneContext,
        list: &mut MessagesPane,
    ) {
        match action {
            MessageAction::Undo => self.travel(true, ctx, list),
            MessageAction::Redo => self.travel(false, ctx, list),
            MessageAction::StartGoTo => ask(InputKind::GoTo, ctx, list),
            MessageAction::StartFind => ask(InputKind::FindMessage, ctx, list),
            MessageAction::FindNext(direction) => self.find_next(direction, ctx, list),
            MessageAction::CycleContentKind => self.cycle_content_kind(ctx, list),
            _ => {}
        }
    }

    /// Undo (`back`) or redo one list step.
    fn travel(&mut self, back: bool, ctx: &mut PaneContext, list: &mut MessagesPane) {
        let session = &mut ctx.workspace.session;
        self.begin_step(session);
        let row = match back {
            true => self.history.undo(session, list.selected),
            false => self.history.redo(session, list.selected),
        };
        let Some(row) = row else {
            return ctx.warn(if back {
                "nothing to undo"
            } else {
                "nothing to redo"
            });
        };
        list.selected = row;
        // The block the range mode had may not exist any more: undo ends the mode.
        list.anchor = None;
        list.clamp(&ctx.workspace.session);
        ctx.follow_selection();
        ctx.edited();
        ctx.report(if back {
            "undone (U or Ctrl+Y redoes)"
        } else {
            "redone"
        });
    }

    /// Selects message `text` (1-based), from the go-to dialog.
    pub fn go_to(&mut self, text: &str, ctx: &mut PaneContext, list: &mut MessagesPane) {
        let count = ctx.workspace.session.messages.len();
        match text.trim().parse::<usize>() {
            Ok(n) if (1..=count).contains(&n) => {
                select(n - 1, ctx, list);
                ctx.notify(format!("message {n} of {count}"));
            }
            _ => ctx.warn(format!("no message {:?} (1 to {count})", text.trim())),
        }
    }

    /// Finds the next message containing `text`, from the find dialog.
    pub fn find_message(&mut self, text: &str, ctx: &mut PaneContext, list: &mut MessagesPane) {
        self.find = Some(text.to_string()).filter(|t| !t.is_empty());
        self.find_next(Direction::Down, ctx, list);
    }

    fn find_next(&mut self, direction: Direction, ctx: &mut PaneContext, list: &mut MessagesPane) {
        let Some(needle) = self.find.as_ref().map(|t| t.to_lowercase()) else {
            return ctx.warn("nothing to find: press / first");
        };
        let messages = &ctx.workspace.session.messages;
        let Some(index) = next_match(messages, list.selected, direction, &needle) else {
            return ctx.warn(format!("no message contains {needle:?}"));
        };
        let total = messages
            .iter()
            .filter(|m| message_matches(m, &needle))
            .count();
        select(index, ctx, list);
        ctx.notify(format!(
            "message {} matches {needle:?} ({total} in all; n / N for more)",
            index + 1
        ));
    }

    /// Content: text or `""` → `null` → no `content` key → `""` (undo brings text back).
    fn cycle_content_kind(&mut self, ctx: &mut PaneContext, list: &mut MessagesPane) {
        let Row::Message(index) = list.row(&ctx.workspace.session) else {
            return ctx.warn("select a message first (this is the settings row)");
        };
        self.begin_step(&mut ctx.workspace.session);
        let label = cycle_content(&mut ctx.workspace.session.messages[index]);
        self.end_step(&mut ctx.workspace.session, list.selected);
        ctx.edited();
        ctx.report(format!("{label}; u undoes"));
        if list.in_fields {
            let fields = fields::fields(&ctx.workspace.session, Row::Message(index));
            list.field = fields
                .iter()
                .position(|f| *f == Field::Content)
                .unwrap_or(0);
        }
    }
}

/// Opens the go-to or find input, remembering the row it starts from.
fn ask(kind: InputKind, ctx: &mut PaneContext, list: &MessagesPane) {
    let mut input = InputDialog::new(kind, "");
    input.origin = list.selected;
    ctx.open(Overlay::Input(input));
}

/// Selects message `index` in the list and has the prompt follow it.
pub(in crate::tui) fn select(index: usize, ctx: &mut PaneContext, list: &mut MessagesPane) {
    list.select_row(index);
    ctx.follow_selection();
}

/// The first message after `start` (before it, going up) that matches `needle`, going
/// round the list's end.
fn next_match(
    messages: &[Message],
    start: usize,
    direction: Direction,
    needle: &str,
) -> Option<usize> {
    let count = messages.len();
    let start = start.min(count);
    let order: Vec<usize> = match direction {
        Direction::Down => (1..=count).map(|k| (start + k) % (count + 1)).collect(),
        Direction::Up => (1..=count)
            .map(|k| (start + count + 1 - k) % (count + 1))
            .collect(),
    };
    order
        .into_iter()
        .filter(|&i| i < count)
        .find(|&i| message_matches(&messages[i], needle))
}

/// Moves `msg`'s content to its next state; what it is now, in words.
fn cycle_content(msg: &mut Message) -> &'static str {
    let next = match ContentState::of(msg) {
        ContentState::Text | ContentState::Empty => Some(Json::Null),
        ContentState::Null => None,
        ContentState::Missing => Some(Json::from("")),
    };
    let label = match &next {
        Some(Json::Null) => "content is null (defined, none)",
        Some(_) => "content is \"\" (defined, empty)",
        None => "no content key (undefined)",
    };
    match next {
        Some(value) => msg.0.insert("content".into(), value),
        None => msg.0.shift_remove("content"),
    };
    label
}
