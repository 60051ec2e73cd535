//! Working in long sessions: undo / redo for edits made from the lists (delete, move,
//! duplicate, role, tool calls, a whole field-editor visit), going to message N, finding
//! messages by text, and the three states of `content` (text, `null`, absent), which
//! templates tell apart with `is defined` / `is none`.

pub mod history;
pub mod incremental;

use serde_json::Value as Json;

use chatplate_core::session::Message;

use crate::tui::app::action::{Direction, Effect, MessageAction};
use crate::tui::app::App;
use crate::tui::dialogs::{InputDialog, InputKind, Overlay};
use crate::tui::panes::messages::fields::{self, Field, Row};
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

impl App {
    /// Marks the current state as where the next undo step starts.
    pub(in crate::tui) fn begin_step(&mut self) {
        self.workbench.history.sync(&mut self.workspace.session);
    }

    /// Records what changed since [`App::begin_step`] as one undo step that selects
    /// `selected` again.
    pub(in crate::tui) fn end_step(&mut self, selected: usize) {
        let history = &mut self.workbench.history;
        history.record(&mut self.workspace.session, selected);
    }

    /// Message-pane actions, recording the ones that change the conversation.
    pub(in crate::tui) fn update_messages_recorded(
        &mut self,
        action: MessageAction,
    ) -> Option<Effect> {
        let selected = self.messages.selected;
        let recorded = changes_conversation(action) && self.workbench.editor_visit.is_none();
        if recorded {
            self.begin_step();
        }
        let effect = match action {
            MessageAction::Undo
            | MessageAction::Redo
            | MessageAction::StartGoTo
            | MessageAction::StartFind
            | MessageAction::FindNext(_)
            | MessageAction::CycleContentKind => {
                self.update_workbench(action);
                None
            }
            _ => self.in_messages(|pane, ctx, editor| {
                pane.handle(action, ctx, editor);
                None
            }),
        };
        if self.editor.is_some() && self.workbench.editor_visit.is_none() {
            // An editor opened (edit, add, tool result): the action and the visit are one
            // undo step, recorded when the editor closes.
            if !recorded {
                self.begin_step();
            }
            self.workbench.editor_visit = Some(selected);
        } else if recorded {
            self.end_step(selected);
        }
        effect
    }

    /// Sets the selected message's role from the role dialog, as one undo step.
    pub(in crate::tui) fn set_role_recorded(&mut self, role: &str) {
        let selected = self.messages.selected;
        self.begin_step();
        self.in_messages(|pane, ctx, _| {
            pane.set_role(ctx, role);
            None
        });
        self.end_step(selected);
    }

    /// After the field editor closed: the visit becomes one undo step if it changed
    /// anything.
    pub(in crate::tui) fn editor_closed(&mut self) {
        if self.editor.is_some() {
            return;
        }
        if let Some(selected) = self.workbench.editor_visit.take() {
            self.end_step(selected);
        }
    }

    /// The actions this module owns.
    fn update_workbench(&mut self, action: MessageAction) {
        match action {
            MessageAction::Undo => self.undo_list(),
            MessageAction::Redo => self.redo_list(),
            MessageAction::StartGoTo => self.ask(InputKind::GoTo),
            MessageAction::StartFind => self.ask(InputKind::FindMessage),
            MessageAction::FindNext(direction) => self.find_next(direction),
            MessageAction::CycleContentKind => self.cycle_content_kind(),
            _ => {}
        }
    }

    fn ask(&mut self, kind: InputKind) {
        let mut input = InputDialog::new(kind, "");
        input.origin = self.messages.selected;
        self.overlay = Some(Overlay::Input(input));
    }

    fn undo_list(&mut self) {
        self.travel_list(true);
    }

    fn redo_list(&mut self) {
        self.travel_list(false);
    }

    /// Undo (`back`) or redo one list step.
    fn travel_list(&mut self, back: bool) {
        self.begin_step();
        let (session, selected) = (&mut self.workspace.session, self.messages.selected);
        let history = &mut self.workbench.history;
        let row = if back {
            history.undo(session, selected)
        } else {
            history.redo(session, selected)
        };
        match (row, back) {
            (Some(row), true) => self.restored(row, "undone (U or Ctrl+Y redoes)"),
            (Some(row), false) => self.restored(row, "redone"),
            (None, true) => self.warn("nothing to undo"),
            (None, false) => self.warn("nothing to redo"),
        }
    }

    fn restored(&mut self, row: usize, note: &str) {
        self.messages.selected = row;
        self.messages.clamp(&self.workspace.session);
        self.prompt.follow();
        self.edited();
        self.notify(note);
    }

    /// Selects message `text` (1-based), from the go-to dialog.
    pub fn go_to(&mut self, text: &str) {
        let count = self.workspace.session.messages.len();
        match text.trim().parse::<usize>() {
            Ok(n) if (1..=count).contains(&n) => {
                self.select_message(n - 1);
                self.notify(format!("message {n} of {count}"));
            }
            _ => self.warn(format!("no message {:?} (1 to {count})", text.trim())),
        }
    }

    pub(in crate::tui) fn select_message(&mut self, index: usize) {
        self.messages.selected = index;
        self.messages.in_fields = false;
        self.messages.field = 0;
        self.prompt.follow();
    }

    /// Finds the next message containing `text`, from the find dialog.
    pub fn find_message(&mut self, text: &str) {
        self.workbench.find = Some(text.to_string()).filter(|t| !t.is_empty());
        self.find_next(Direction::Down);
    }

    fn find_next(&mut self, direction: Direction) {
        let Some(needle) = self.workbench.find.as_ref().map(|t| t.to_lowercase()) else {
            return self.warn("nothing to find: press / first");
        };
        let messages = &self.workspace.session.messages;
        let count = messages.len();
        let start = self.messages.selected.min(count);
        let order: Vec<usize> = match direction {
            Direction::Down => (1..=count).map(|k| (start + k) % (count + 1)).collect(),
            Direction::Up => (1..=count)
                .map(|k| (start + count + 1 - k) % (count + 1))
                .collect(),
        };
        let found = order
            .into_iter()
            .filter(|&i| i < count)
            .find(|&i| message_matches(&messages[i], &needle));
        match found {
            Some(index) => {
                let total = messages
                    .iter()
                    .filter(|m| message_matches(m, &needle))
                    .count();
                self.select_message(index);
                self.notify(format!(
                    "message {} matches {needle:?} ({total} in all; n / N for more)",
                    index + 1
                ));
            }
            None => self.warn(format!("no message contains {needle:?}")),
        }
    }

    /// Content: text or `""` → `null` → no `content` key → `""` (undo brings text back).
    fn cycle_content_kind(&mut self) {
        let Row::Message(index) = self.messages.row(&self.workspace.session) else {
            return self.warn("select a message first (this is the settings row)");
        };
        self.begin_step();
        let msg = &mut self.workspace.session.messages[index];
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
        self.end_step(self.messages.selected);
        self.edited();
        self.notify(format!("{label}; u undoes"));
        if self.messages.in_fields {
            let list = fields::fields(&self.workspace.session, Row::Message(index));
            self.messages.field = list.iter().position(|f| *f == Field::Content).unwrap_or(0);
        }
    }
}
