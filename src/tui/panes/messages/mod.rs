//! The messages pane: the message list (plus a settings row), the selected row's
//! fields, and the field editor. This module holds the pane's state and its action
//! handlers; `panes::messages::view` draws it, and `workbench` records its edits for undo.

pub mod block;
pub mod conversation;
pub mod editor;
pub mod field_write;
pub mod fields;
pub mod knobs;
pub mod needs;
mod range;
pub mod range_view;
pub mod settings_json;
pub mod view;

use chatplate_core::session::{Message, Session};

use crate::tui::action::Direction;

use crate::tui::action::EditorAction;

use crate::tui::context::Effect;

use crate::tui::action::MessageAction;

use crate::tui::action::Step;
use crate::tui::context::PaneContext;
use crate::tui::dialogs::Overlay;
use crate::tui::panes::messages::editor::FieldEditor;
use crate::tui::panes::messages::fields::Field;
use crate::tui::panes::messages::fields::FieldKind;
use crate::tui::panes::messages::fields::Row;

/// The open field editor, if any. It belongs to the pane; the app keeps it (the
/// keystroke benchmark reads it there) and lends it to the handlers.
pub type Editor = Option<FieldEditor>;

/// Selection state of the messages pane.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessagesPane {
    /// The selected row; `messages.len()` is the settings row.
    pub selected: usize,
    /// Keys go to the field list instead of the message list.
    pub in_fields: bool,
    /// The selected field in the field list.
    pub field: usize,
    /// Tool-call argument strings switched to objects with `o`, as written (see
    /// [`field_write::ArgumentTexts`]).
    pub argument_texts: field_write::ArgumentTexts,
    /// Where the range mode's block starts (`v`); the block runs to `selected`.
    pub anchor: Option<usize>,
    /// The template's knobs, the settings' Knobs section (from the worker).
    pub knobs: Vec<crate::tui::jobs::knobs::KnobRow>,
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
        self.row_fields(session).get(self.field).copied()
    }

    /// The fields of the selected row: the settings' Knobs section comes before their
    /// raw JSON (which is all of them, and last), so a small screen shows the knobs.
    pub fn row_fields(&self, session: &Session) -> Vec<Field> {
        let row = self.row(session);
        let mut list = fields::fields(session, row);
        if row == Row::Settings {
            let at = list
                .iter()
                .position(|f| *f == Field::Raw)
                .unwrap_or(list.len());
            list.splice(at..at, (0..self.knobs.len()).map(Field::Knob));
        }
        list
    }

    /// Selects row `index` of the message list, out of the field list, on its first
    /// field.
    pub fn select_row(&mut self, index: usize) {
        self.selected = index;
        self.in_fields = false;
        self.field = 0;
    }

    /// Keeps the selection inside the list after it shrank.
    pub fn clamp(&mut self, session: &Session) {
        self.selected = self.selected.min(session.messages.len());
        let count = self.row_fields(session).len();
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

impl MessagesPane {
    /// Handles a message-pane action (undo, go-to, find and the content's kind are the
    /// workbench's, around this). In the range mode, delete, move, duplicate, role and
    /// copy act on the block.
    pub fn handle(
        &mut self,
        action: MessageAction,
        ctx: &mut PaneContext,
        editor: &mut Editor,
    ) -> Option<Effect> {
        if Self::acts_on_block(action) {
            let session = &ctx.workspace.session;
            let single = (self.selected < session.messages.len()).then_some(self.selected);
            let block = self.block(session);
            match (block, single, action) {
                (Some(block), ..) => return self.handle_block(action, block, ctx),
                (None, Some(index), MessageAction::CopyJson) => {
                    return self.handle_block(action, index..=index, ctx);
                }
                (None, None, MessageAction::CopyJson) => {
                    ctx.warn("select a message first (this is the settings row)");
                    return None;
                }
                _ => {}
            }
        }
        match action {
            MessageAction::ToggleRange => self.toggle_range(ctx),
            MessageAction::Select(step) => self.select(ctx, step),
            MessageAction::Add => self.add_message(ctx, editor, self.selected + 1),
            MessageAction::Insert => self.add_message(ctx, editor, self.selected),
            MessageAction::Delete => self.with_message(ctx, |s, i| {
                s.messages.remove(i);
                None
            }),
            MessageAction::Duplicate => self.with_message(ctx, |s, i| {
                s.messages.insert(i + 1, s.messages[i].clone());
                Some(i + 1)
            }),
            MessageAction::Move(direction) => self.with_message(ctx, |s, i| {
                conversation::move_message(s, i, direction == Direction::Down).or(Some(i))
            }),
            MessageAction::CycleRole => self.with_message(ctx, |s, i| {
                let next = conversation::cycle_role(s.messages[i].role());
                s.messages[i].0.insert("role".into(), next.into());
                Some(i)
            }),
            MessageAction::PromptRole => self.prompt_role(ctx),
            MessageAction::AddToolCall => self.add_tool_call(ctx, editor),
            MessageAction::AddToolResult => self.add_tool_result(ctx, editor),
            MessageAction::EnterFields => self.in_fields = true,
            MessageAction::LeaveFields => self.in_fields = false,
            MessageAction::EditContent => self.edit_content(ctx, editor),
            MessageAction::EditField => self.edit_field(ctx, editor),
            MessageAction::RemoveField => self.remove_field(ctx),
            MessageAction::ToggleArgumentsForm => self.toggle_arguments(ctx),
            _ => {}
        }
        None
    }

    fn select(&mut self, ctx: &mut PaneContext, step: Step) {
        let session = &ctx.workspace.session;
        if self.in_fields {
            let count = self.row_fields(session).len();
            self.field = MessagesPane::step(self.field, count, step);
        } else {
            // A block is of messages: the settings row is not a place to extend it to.
            let count = session.messages.len() + usize::from(self.anchor.is_none());
            self.selected = MessagesPane::step(self.selected, count, step);
            self.field = 0;
            ctx.follow_selection();
        }
    }

    /// Runs a structural edit on the selected message; the closure returns the row to
    /// select afterwards (`None` keeps the index).
    fn with_message(
        &mut self,
        ctx: &mut PaneContext,
        edit: impl FnOnce(&mut Session, usize) -> Option<usize>,
    ) {
        let index = self.selected;
        if index >= ctx.workspace.session.messages.len() {
            ctx.warn("select a message first (this is the settings row)");
            return;
        }
        if let Some(next) = edit(&mut ctx.workspace.session, index) {
            self.selected = next;
        }
        ctx.follow_selection();
        ctx.edited();
    }

    fn add_message(&mut self, ctx: &mut PaneContext, editor: &mut Editor, at: usize) {
        let session = &mut ctx.workspace.session;
        let at = at.min(session.messages.len());
        let message = conversation::blank_message(session, at);
        self.insert_and_edit(ctx, editor, at, message);
    }

    /// Inserts `message` at `at` and edits its content. From the fields (`a` or `T`
    /// there), the new message is a row of the list, which the editor closes back to.
    fn insert_and_edit(
        &mut self,
        ctx: &mut PaneContext,
        editor: &mut Editor,
        at: usize,
        message: Message,
    ) {
        ctx.workspace.session.messages.insert(at, message);
        self.select_row(at);
        ctx.follow_selection();
        ctx.edited();
        self.edit_content(ctx, editor);
    }

    fn prompt_role(&mut self, ctx: &mut PaneContext) {
        match ctx.workspace.session.messages.get(self.selected) {
            Some(msg) => ctx.open(Overlay::role(msg.role())),
            None => ctx.warn("select a message first"),
        }
    }

    /// Sets the selected message's role (from the role dialog).
    pub fn set_role(&mut self, ctx: &mut PaneContext, role: &str) {
        let role = role.trim().to_string();
        if role.is_empty() {
            ctx.warn("a role cannot be empty");
            return;
        }
        if let Some(block) = self.block(&ctx.workspace.session) {
            return self.set_block_role(&block, &role, ctx);
        }
        self.with_message(ctx, |s, i| {
            s.messages[i].0.insert("role".into(), role.into());
            Some(i)
        });
    }

    /// Adds a call and opens its arguments editor (the name follows the session's tools);
    /// closing the editor leaves the call's fields selected, where `o` switches form.
    fn add_tool_call(&mut self, ctx: &mut PaneContext, editor: &mut Editor) {
        let session = &mut ctx.workspace.session;
        let selected = session.messages.get(self.selected);
        if selected.is_some_and(|m| m.role() != "assistant") {
            // On a user or tool message: the model's answer is a new assistant message.
            let at = self.selected + 1;
            session.messages.insert(at, Message::new("assistant", ""));
            self.selected = at;
        }
        let tools = session.tools.clone();
        let mut call = None;
        self.with_message(ctx, |s, i| {
            call = Some(conversation::add_tool_call(
                &mut s.messages[i],
                tools.as_deref(),
            ));
            Some(i)
        });
        if let Some(call) = call {
            let session = &ctx.workspace.session;
            let list = fields::fields(session, self.row(session));
            self.field = list
                .iter()
                .position(|f| *f == Field::CallArguments(call))
                .unwrap_or(0);
            self.in_fields = true;
            self.open_editor(ctx, editor, Field::CallArguments(call));
        }
    }

    fn add_tool_result(&mut self, ctx: &mut PaneContext, editor: &mut Editor) {
        let session = &mut ctx.workspace.session;
        match conversation::tool_result(session, self.selected) {
            Some((at, message)) => self.insert_and_edit(ctx, editor, at, message),
            None => ctx.warn("no tool call to answer at or above this message"),
        }
    }

    /// `e`: a message's content; on the settings row, the settings as one JSON object
    /// (tools, variables and the rest in one edit), from its field.
    fn edit_content(&mut self, ctx: &mut PaneContext, editor: &mut Editor) {
        if self.selected < ctx.workspace.session.messages.len() {
            return self.open_editor(ctx, editor, Field::Content);
        }
        let session = &ctx.workspace.session;
        let list = fields::fields(session, self.row(session));
        self.field = list.iter().position(|f| *f == Field::Raw).unwrap_or(0);
        self.in_fields = true;
        self.open_editor(ctx, editor, Field::Raw);
    }

    fn edit_field(&mut self, ctx: &mut PaneContext, editor: &mut Editor) {
        let session = &mut ctx.workspace.session;
        let row = self.row(session);
        let Some(field) = self.current_field(session) else {
            return;
        };
        if let Field::Knob(index) = field {
            return knobs::flip(&self.knobs, index, ctx);
        }
        match field.kind(session, row) {
            FieldKind::Toggle => {
                let flipped = (fields::read(session, row, field) != "true").to_string();
                let _ = field_write::write(session, row, field, &flipped);
                ctx.edited();
            }
            FieldKind::Command => self.add_tool_call(ctx, editor),
            FieldKind::Text | FieldKind::Json => self.open_editor(ctx, editor, field),
        }
    }

    fn open_editor(&mut self, ctx: &mut PaneContext, editor: &mut Editor, field: Field) {
        let session = &ctx.workspace.session;
        *editor = Some(FieldEditor::open(session, self.row(session), field));
        ctx.focus_editor();
    }

    fn remove_field(&mut self, ctx: &mut PaneContext) {
        let session = &mut ctx.workspace.session;
        let row = self.row(session);
        let Some(field) = self.current_field(session) else {
            return;
        };
        let Row::Message(index) = row else { return };
        let msg = &mut session.messages[index];
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
            _ => return ctx.warn("only tool calls and reasoning can be removed"),
        }
        ctx.edited();
    }

    fn toggle_arguments(&mut self, ctx: &mut PaneContext) {
        let session = &mut ctx.workspace.session;
        let (row, field) = (self.row(session), self.current_field(session));
        let (Row::Message(index), Some(Field::CallArguments(call))) = (row, field) else {
            return ctx.warn("select a tool call's arguments first");
        };
        let texts = &mut self.argument_texts;
        match field_write::toggle_arguments_form(&mut session.messages[index], call, texts) {
            Ok(()) => ctx.edited(),
            Err(err) => ctx.warn(format!("arguments unchanged: {err}")),
        }
    }

    /// Handles a field-editor action.
    pub fn handle_editor(
        &mut self,
        action: EditorAction,
        ctx: &mut PaneContext,
        editor: &mut Editor,
    ) {
        let Some(open) = editor else {
            return;
        };
        let changed = match action {
            EditorAction::Input(input) => open.input(input),
            EditorAction::Undo => open.textarea.undo(),
            EditorAction::Redo => open.textarea.redo(),
            EditorAction::Close => {
                if open.may_close() {
                    self.remember_arguments(ctx, open);
                    *editor = None;
                }
                false
            }
        };
        if changed {
            Self::apply_editor(ctx, editor);
        }
    }

    /// Pasted text goes into the field editor, validated like typed text.
    pub fn paste(text: &str, ctx: &mut PaneContext, editor: &mut Editor) {
        if let Some(open) = editor {
            open.textarea.insert_str(text);
        }
        Self::apply_editor(ctx, editor);
    }

    /// Writes the editor's text into the session when it validates.
    /// Remembers arguments typed as an object, so `o` makes them the string the user
    /// typed (spacing and all), not its compact JSON.
    fn remember_arguments(&mut self, ctx: &PaneContext, open: &FieldEditor) {
        if let (Row::Message(index), Field::CallArguments(call)) = (open.row, open.field) {
            if let Some(msg) = ctx.workspace.session.messages.get(index) {
                field_write::remember_arguments(msg, call, open.text(), &mut self.argument_texts);
            }
        }
    }

    fn apply_editor(ctx: &mut PaneContext, editor: &mut Editor) {
        let Some(open) = editor else {
            return;
        };
        if open.apply(&mut ctx.workspace.session) {
            match open.row {
                // A message field changes only that message: the worker gets just it.
                Row::Message(index) => ctx.message_edited(index),
                Row::Settings => ctx.edited(),
            }
        }
    }

    /// Starts editing the current field in `$VISUAL` / `$EDITOR`.
    pub fn external_edit(&mut self, ctx: &mut PaneContext, editor: &mut Editor) -> Option<Effect> {
        let session = &ctx.workspace.session;
        let row = self.row(session);
        let (text, field) = match editor {
            Some(open) => (open.text(), open.field),
            None => {
                let field = match (self.in_fields, row) {
                    (false, Row::Message(_)) => Some(Field::Content),
                    _ => self.current_field(session),
                }?;
                (fields::read(session, row, field), field)
            }
        };
        let suffix = match field.kind(session, row) {
            FieldKind::Json => ".json",
            _ => ".txt",
        };
        if editor.is_none() {
            self.open_editor(ctx, editor, field);
        }
        Some(Effect::EditExternally { text, suffix })
    }

    /// The external editor returned: the text goes into the field editor and is
    /// validated like typed text.
    pub fn external_edited(text: &str, ctx: &mut PaneContext, editor: &mut Editor) {
        let text = text.strip_suffix('\n').unwrap_or(text);
        if let Some(open) = editor {
            if open.text() == text {
                // Nothing changed: the session stays as it was (and not dirty).
                return ctx.notify("no changes from the external editor");
            }
            open.replace_text(text);
        }
        Self::apply_editor(ctx, editor);
    }
}

#[cfg(test)]
mod tests {
    use chatplate_core::catalog;

    use super::*;
    use crate::tui::action::Pane;
    use crate::tui::files::workspace::Workspace;
    use crate::tui::panes::messages::conversation::example_session;
    use crate::tui::preview::Preview;
    use crate::tui::screen::Screen;

    /// An edit changes the session and asks the app for the rest.
    #[test]
    fn adding_a_message_opens_its_editor_and_asks_for_a_render() {
        let dir = std::env::temp_dir();
        let template = catalog::default_template();
        let session = example_session(template.reference(&dir));
        let mut workspace = Workspace::new(session, None, template.clone(), dir);
        let preview = Preview::new(&template.source);
        let screen = Screen {
            focus: Pane::Prompt,
            left: Pane::Templates,
            width: 80,
            height: 24,
            zoom: false,
        };
        let (mut pane, mut editor, mut status) = (MessagesPane::default(), None, None);
        let mut ctx = PaneContext::new(&mut workspace, &preview, screen, &mut status);
        pane.handle(MessageAction::Add, &mut ctx, &mut editor);
        let asked = ctx.into_requests();
        assert!(asked.edited && asked.follow && asked.focus_editor);
        assert_eq!(asked.focus, None, "the pane beside the prompt stays");
        assert_eq!((pane.selected, workspace.session.messages.len()), (1, 5));
        assert!(editor.is_some_and(|e| e.field == Field::Content));
    }
}
