//! The messages pane: the message list (plus a settings row), the selected row's
//! fields, and the field editor. This module holds the pane's state and its update
//! handlers; `messages_view` draws it.

use chatplate_core::session::Session;

use super::action::{Direction, EditorAction, Effect, MessageAction, Step};
use super::app::App;
use super::conversation;
use super::dialog::Overlay;
use super::editor::FieldEditor;
use super::field_write;
use super::fields::{self, Field, FieldKind, Row};

/// Selection state of the messages pane.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessagesPane {
    /// The selected row; `messages.len()` is the settings row.
    pub selected: usize,
    /// Keys go to the field list instead of the message list.
    pub in_fields: bool,
    /// The selected field in the field list.
    pub field: usize,
}

impl MessagesPane {
    /// The selected row.
    pub fn row(&self, session: &Session) -> Row {
        if self.selected < session.messages.len() {
            Row::Message(self.selected)
        } else {
            Row::Settings
        }
    }

    /// The selected field, if any.
    pub fn current_field(&self, session: &Session) -> Option<Field> {
        fields::fields(session, self.row(session))
            .get(self.field)
            .copied()
    }

    /// Keeps the selection inside the list after it shrank.
    pub fn clamp(&mut self, session: &Session) {
        self.selected = self.selected.min(session.messages.len());
        let count = fields::fields(session, self.row(session)).len();
        self.field = self.field.min(count.saturating_sub(1));
    }

    fn step(current: usize, count: usize, step: Step) -> usize {
        let last = count.saturating_sub(1);
        match step {
            Step::Line(Direction::Up) => current.saturating_sub(1),
            Step::Line(Direction::Down) => (current + 1).min(last),
            Step::Page(Direction::Up) => current.saturating_sub(10),
            Step::Page(Direction::Down) => (current + 10).min(last),
            Step::First => 0,
            Step::Last => last,
        }
    }
}

impl App {
    /// Handles a message-pane action.
    pub(super) fn update_messages(&mut self, action: MessageAction) {
        match action {
            MessageAction::Select(step) => self.select(step),
            MessageAction::Add => self.add_message(self.messages.selected + 1),
            MessageAction::Insert => self.add_message(self.messages.selected),
            MessageAction::Delete => self.with_message(|s, i| {
                s.messages.remove(i);
                None
            }),
            MessageAction::Duplicate => self.with_message(|s, i| {
                s.messages.insert(i + 1, s.messages[i].clone());
                Some(i + 1)
            }),
            MessageAction::Move(direction) => self.with_message(|s, i| {
                conversation::move_message(s, i, direction == Direction::Down).or(Some(i))
            }),
            MessageAction::CycleRole => self.with_message(|s, i| {
                let next = conversation::cycle_role(s.messages[i].role());
                s.messages[i].0.insert("role".into(), next.into());
                Some(i)
            }),
            MessageAction::PromptRole => self.prompt_role(),
            MessageAction::AddToolCall => self.add_tool_call(),
            MessageAction::AddToolResult => self.add_tool_result(),
            MessageAction::EnterFields => self.messages.in_fields = true,
            MessageAction::LeaveFields => self.messages.in_fields = false,
            MessageAction::EditContent => self.edit_content(),
            MessageAction::EditField => self.edit_field(),
            MessageAction::RemoveField => self.remove_field(),
            MessageAction::ToggleArgumentsForm => self.toggle_arguments(),
            other => self.update_workbench(other),
        }
    }

    fn select(&mut self, step: Step) {
        let session = &self.workspace.session;
        if self.messages.in_fields {
            let count = fields::fields(session, self.messages.row(session)).len();
            self.messages.field = MessagesPane::step(self.messages.field, count, step);
        } else {
            let count = session.messages.len() + 1;
            self.messages.selected = MessagesPane::step(self.messages.selected, count, step);
            self.messages.field = 0;
            self.prompt.follow();
        }
    }

    /// Runs a structural edit on the selected message; the closure returns the row to
    /// select afterwards (`None` keeps the index).
    fn with_message(&mut self, edit: impl FnOnce(&mut Session, usize) -> Option<usize>) {
        let index = self.messages.selected;
        if index >= self.workspace.session.messages.len() {
            self.warn("select a message first (this is the settings row)");
            return;
        }
        if let Some(next) = edit(&mut self.workspace.session, index) {
            self.messages.selected = next;
        }
        self.prompt.follow();
        self.edited();
    }

    fn add_message(&mut self, at: usize) {
        let session = &mut self.workspace.session;
        let at = at.min(session.messages.len());
        let message = conversation::blank_message(session, at);
        session.messages.insert(at, message);
        self.messages.selected = at;
        self.prompt.follow();
        self.edited();
        self.edit_content();
    }

    fn prompt_role(&mut self) {
        let session = &self.workspace.session;
        match session.messages.get(self.messages.selected) {
            Some(msg) => self.overlay = Some(Overlay::role(msg.role())),
            None => self.warn("select a message first"),
        }
    }

    /// Sets the selected message's role (from the role dialog).
    pub fn set_role(&mut self, role: &str) {
        let role = role.trim().to_string();
        if role.is_empty() {
            self.warn("a role cannot be empty");
            return;
        }
        self.with_message(|s, i| {
            s.messages[i].0.insert("role".into(), role.into());
            Some(i)
        });
    }

    fn add_tool_call(&mut self) {
        let session = &self.workspace.session;
        let selected = session.messages.get(self.messages.selected);
        if selected.is_some_and(|m| m.role() != "assistant") {
            // On a user or tool message: the model's answer is a new assistant message.
            let at = self.messages.selected + 1;
            self.workspace
                .session
                .messages
                .insert(at, chatplate_core::session::Message::new("assistant", ""));
            self.messages.selected = at;
        }
        let tools = self.workspace.session.tools.clone();
        let mut call = None;
        self.with_message(|s, i| {
            call = Some(conversation::add_tool_call(
                &mut s.messages[i],
                tools.as_deref(),
            ));
            Some(i)
        });
        if let Some(call) = call {
            let session = &self.workspace.session;
            let list = fields::fields(session, self.messages.row(session));
            self.messages.field = list
                .iter()
                .position(|f| *f == Field::CallArguments(call))
                .unwrap_or(0);
            self.messages.in_fields = true;
        }
    }

    fn add_tool_result(&mut self) {
        let session = &self.workspace.session;
        match conversation::tool_result(session, self.messages.selected) {
            Some((at, message)) => {
                self.workspace.session.messages.insert(at, message);
                self.messages.selected = at;
                self.prompt.follow();
                self.edited();
                self.edit_content();
            }
            None => self.warn("no tool call to answer at or above this message"),
        }
    }

    fn edit_content(&mut self) {
        if self.messages.selected < self.workspace.session.messages.len() {
            self.open_editor(Field::Content);
        } else {
            self.messages.in_fields = true;
        }
    }

    fn edit_field(&mut self) {
        let session = &self.workspace.session;
        let row = self.messages.row(session);
        let Some(field) = self.messages.current_field(session) else {
            return;
        };
        match field.kind(session, row) {
            FieldKind::Toggle => {
                let flipped = (fields::read(session, row, field) != "true").to_string();
                let _ = field_write::write(&mut self.workspace.session, row, field, &flipped);
                self.edited();
            }
            FieldKind::Command => self.add_tool_call(),
            FieldKind::Text | FieldKind::Json => self.open_editor(field),
        }
    }

    fn open_editor(&mut self, field: Field) {
        let session = &self.workspace.session;
        self.editor = Some(FieldEditor::open(
            session,
            self.messages.row(session),
            field,
        ));
        self.screen.focus = super::action::Pane::Messages;
    }

    fn remove_field(&mut self) {
        let session = &self.workspace.session;
        let row = self.messages.row(session);
        let Some(field) = self.messages.current_field(session) else {
            return;
        };
        let Row::Message(index) = row else { return };
        let msg = &mut self.workspace.session.messages[index];
        match field {
            Field::CallName(call) | Field::CallId(call) | Field::CallArguments(call) => {
                if let Some(calls) = msg.0.get_mut("tool_calls").and_then(|c| c.as_array_mut()) {
                    calls.remove(call.min(calls.len().saturating_sub(1)));
                    if calls.is_empty() {
                        msg.0.remove("tool_calls");
                    }
                }
            }
            Field::Reasoning => {
                msg.0.remove("reasoning_content");
            }
            _ => return self.warn("only tool calls and reasoning can be removed"),
        }
        self.edited();
    }

    fn toggle_arguments(&mut self) {
        let session = &self.workspace.session;
        let (row, field) = (
            self.messages.row(session),
            self.messages.current_field(session),
        );
        let (Row::Message(index), Some(Field::CallArguments(call))) = (row, field) else {
            return self.warn("select a tool call's arguments first");
        };
        match field_write::toggle_arguments_form(&mut self.workspace.session.messages[index], call)
        {
            Ok(()) => self.edited(),
            Err(err) => self.warn(format!("arguments unchanged: {err}")),
        }
    }

    /// Handles a field-editor action.
    pub(super) fn update_editor(&mut self, action: EditorAction) {
        let Some(editor) = &mut self.editor else {
            return;
        };
        let changed = match action {
            EditorAction::Input(input) => editor.textarea.input(input),
            EditorAction::Undo => editor.textarea.undo(),
            EditorAction::Redo => editor.textarea.redo(),
            EditorAction::Close => {
                if editor.may_close() {
                    self.editor = None;
                }
                false
            }
        };
        if changed {
            self.apply_editor();
        }
    }

    /// Writes the editor's text into the session when it validates.
    pub(super) fn apply_editor(&mut self) {
        let Some(editor) = &mut self.editor else {
            return;
        };
        if editor.apply(&mut self.workspace.session) {
            match editor.row {
                // A message field changes only that message: the worker gets just it.
                Row::Message(index) => {
                    self.workspace.touch();
                    self.invalidate_message(index);
                }
                Row::Settings => self.edited(),
            }
        }
    }

    /// Starts editing the current field in `$VISUAL` / `$EDITOR`.
    pub(super) fn external_edit(&mut self) -> Option<Effect> {
        let session = &self.workspace.session;
        let row = self.messages.row(session);
        let (text, field) = match &self.editor {
            Some(editor) => (editor.text(), editor.field),
            None => {
                let field = match (self.messages.in_fields, row) {
                    (false, Row::Message(_)) => Some(Field::Content),
                    _ => self.messages.current_field(session),
                }?;
                (fields::read(session, row, field), field)
            }
        };
        let suffix = match field.kind(session, row) {
            FieldKind::Json => ".json",
            _ => ".txt",
        };
        if self.editor.is_none() {
            self.open_editor(field);
        }
        Some(Effect::EditExternally { text, suffix })
    }

    /// The external editor returned: the text goes into the field editor and is
    /// validated like typed text.
    pub(super) fn external_edited(&mut self, text: &str) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        if let Some(editor) = &mut self.editor {
            if editor.text() == text {
                // Nothing changed: the session stays as it was (and not dirty).
                return self.notify("no changes from the external editor");
            }
            editor.replace_text(text);
        }
        self.apply_editor();
    }
}
