//! The one key table. It maps keys to [`Action`]s per [`Scope`], and the same rows
//! produce the footer hints and the `?` help overlay, so they can never disagree.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::tui::action::Action;

use crate::tui::action::CopyTarget;

use crate::tui::action::DialogAction;

use crate::tui::action::Direction;

use crate::tui::action::EditorAction;

use crate::tui::action::MessageAction;

use crate::tui::action::Pane;

use crate::tui::action::PromptAction;

use crate::tui::action::Step;

use crate::tui::action::CompareAction;
use crate::tui::action::TemplateAction;

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every pane, unless an editor or dialog has the keyboard.
    Global,
    /// Every pane and the field editor (not dialogs).
    Everywhere,
    /// The message and prompt panes, where letters are commands.
    Browse,
    /// The template pane.
    Templates,
    /// Typing the template filter (unbound characters go to the filter).
    Filter,
    /// The message list.
    Messages,
    /// The message list in the range mode: a block of messages is selected.
    Range,
    /// The field list of the selected message.
    Fields,
    /// The field editor (unbound keys go to the text).
    Editor,
    /// The prompt pane.
    Prompt,
    /// The help overlay.
    Help,
    /// A yes / no / cancel question.
    Confirm,
    /// The session file changed on disk: overwrite, reload or save as.
    Conflict,
    /// A one-line text input.
    Input,
    /// The session picker.
    Picker,
    /// The message log.
    Log,
}

impl Scope {
    /// The heading in the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Scope::Global => "Any pane",
            Scope::Everywhere => "Any pane and the editor",
            Scope::Browse => "Messages and Prompt panes",
            Scope::Templates => "Templates pane",
            Scope::Filter => "Templates pane: typing the filter",
            Scope::Messages => "Messages pane: list",
            Scope::Range => "Messages pane: a block (range mode, v)",
            Scope::Fields => "Messages pane: fields",
            Scope::Editor => "Field editor",
            Scope::Prompt => "Prompt pane",
            Scope::Help => "Help",
            Scope::Confirm => "Questions",
            Scope::Conflict => "Session changed on disk",
            Scope::Input => "Text input",
            Scope::Picker => "Session picker",
            Scope::Log => "Message log",
        }
    }

    /// Scopes that also see [`Scope::Global`] / [`Scope::Everywhere`] bindings.
    fn inherits(self) -> &'static [Scope] {
        match self {
            Scope::Messages | Scope::Range | Scope::Fields | Scope::Prompt | Scope::Templates => {
                &[Scope::Browse, Scope::Global, Scope::Everywhere]
            }
            Scope::Filter => &[Scope::Everywhere],
            Scope::Editor => &[Scope::Everywhere],
            _ => &[],
        }
    }

    /// The scopes whose bindings also apply here.
    pub fn inherits_scopes(self) -> &'static [Scope] {
        self.inherits()
    }

    /// Every scope, in help order.
    pub const ALL: [Scope; 16] = [
        Scope::Global,
        Scope::Everywhere,
        Scope::Browse,
        Scope::Templates,
        Scope::Filter,
        Scope::Messages,
        Scope::Range,
        Scope::Fields,
        Scope::Editor,
        Scope::Prompt,
        Scope::Confirm,
        Scope::Conflict,
        Scope::Input,
        Scope::Picker,
        Scope::Log,
        Scope::Help,
    ];
}

/// A key with its modifiers (Shift is implied by the character itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    /// The key.
    pub code: KeyCode,
    /// Ctrl / Alt / Shift (Shift only for non-character keys).
    pub mods: KeyModifiers,
}

const fn key(code: KeyCode) -> Chord {
    Chord {
        code,
        mods: KeyModifiers::NONE,
    }
}
const fn ch(c: char) -> Chord {
    key(KeyCode::Char(c))
}
const fn ctrl(c: char) -> Chord {
    Chord {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}
const fn shift(code: KeyCode) -> Chord {
    Chord {
        code,
        mods: KeyModifiers::SHIFT,
    }
}

impl Chord {
    /// Normalises a terminal key event (drops Shift on characters and Shift+Tab).
    pub fn from_event(event: &KeyEvent) -> Self {
        let mut mods =
            event.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        if matches!(event.code, KeyCode::Char(_) | KeyCode::BackTab) {
            mods.remove(KeyModifiers::SHIFT);
        }
        Chord {
            code: event.code,
            mods,
        }
    }

    /// The key as shown in hints: `Ctrl+S`, `↑`, `K`.
    pub fn label(self) -> String {
        let name = match self.code {
            KeyCode::Char(' ') => "Space".into(),
            KeyCode::Char(c) if self.mods.contains(KeyModifiers::CONTROL) => {
                c.to_ascii_uppercase().to_string()
            }
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift+Tab".into(),
            KeyCode::Backspace => "Bksp".into(),
            KeyCode::Delete => "Del".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        let mut label = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            label.push_str("Ctrl+");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            label.push_str("Alt+");
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            label.push_str("Shift+");
        }
        label + &name
    }
}

/// One row of the table.
#[derive(Debug, Clone)]
pub struct Binding {
    /// Where it applies.
    pub scope: Scope,
    /// The keys; the first is the one shown in the footer.
    pub keys: &'static [Chord],
    /// What it does.
    pub action: Action,
    /// Footer label; empty keeps it out of the footer.
    pub hint: &'static str,
    /// Help overlay description.
    pub help: &'static str,
}

const fn bind(
    scope: Scope,
    keys: &'static [Chord],
    action: Action,
    hint: &'static str,
    help: &'static str,
) -> Binding {
    Binding {
        scope,
        keys,
        action,
        hint,
        help,
    }
}

use Direction::{Down, Up};
use KeyCode as K;
use Scope as S;

const fn msg(action: MessageAction) -> Action {
    Action::Message(action)
}
const fn prompt(action: PromptAction) -> Action {
    Action::Prompt(action)
}
const fn dialog(action: DialogAction) -> Action {
    Action::Dialog(action)
}
const fn tpl(action: TemplateAction) -> Action {
    Action::Template(action)
}
const fn compare(action: CompareAction) -> Action {
    Action::Compare(action)
}

/// The default key table. Within a scope, rows come in order of importance: the footer
/// shows the first ones that fit.
#[rustfmt::skip]
pub static BINDINGS: &[Binding] = &[
    bind(S::Global, &[key(K::Tab)], Action::FocusNext, "pane", "Next pane"),
    bind(S::Global, &[key(K::BackTab)], Action::FocusPrev, "", "Previous pane"),
    bind(S::Global, &[ch('z')], Action::Zoom, "zoom", "Show this pane alone on the whole screen, or all panes again"),
    bind(S::Global, &[ch('?')], Action::Help, "help", "Show the keys (this pane's first)"),
    bind(S::Global, &[ch('L')], Action::MessageLog, "log", "Show the message log: every notice, warning and error of this run, with its time"),
    bind(S::Everywhere, &[ctrl('s')], Action::Save, "save", "Save the session (asks for a name the first time)"),
    bind(S::Everywhere, &[ctrl('o')], Action::OpenPicker, "", "Open a saved session"),
    bind(S::Global, &[ctrl('p')], Action::OpenTarget, "", "Open a path, model folder, model id (HF cache / Hub) or .gguf"),
    bind(S::Global, &[ctrl('n')], Action::NewSession, "", "New empty session on the current template"),
    bind(S::Global, &[ctrl('a')], Action::SaveAs, "", "Save the session under a new name"),
    bind(S::Everywhere, &[ctrl('q'), ctrl('c')], Action::Quit, "quit", "Quit (asks when there are unsaved changes)"),
    bind(S::Everywhere, &[key(K::F(1))], Action::Help, "", "Show the keys (this pane's first)"),
    bind(S::Everywhere, &[ctrl('t')], Action::StopWork, "", "Stop the background work the status line names (attribution, probes, tokens, comparisons) until the next change"),
    bind(S::Templates, &[key(K::Enter)], tpl(TemplateAction::Choose), "use", "Use the selected template (and go back to the pane you came from)"),
    bind(S::Templates, &[ch('/')], tpl(TemplateAction::StartFilter), "filter", "Filter the list by name (type, then Enter or Esc)"),
    bind(S::Templates, &[ch('k'), key(K::Up)], tpl(TemplateAction::Select(Step::Line(Up))), "", "Previous template"),
    bind(S::Templates, &[ch('j'), key(K::Down)], tpl(TemplateAction::Select(Step::Line(Down))), "", "Next template"),
    bind(S::Templates, &[key(K::PageUp)], tpl(TemplateAction::Select(Step::Page(Up))), "", "A page of templates up"),
    bind(S::Templates, &[key(K::PageDown)], tpl(TemplateAction::Select(Step::Page(Down))), "", "A page of templates down"),
    bind(S::Templates, &[ch('g'), key(K::Home)], tpl(TemplateAction::Select(Step::First)), "", "First template"),
    bind(S::Templates, &[ch('G'), key(K::End)], tpl(TemplateAction::Select(Step::Last)), "", "Last template"),
    bind(S::Templates, &[ch('e'), ctrl('g')], tpl(TemplateAction::EditFile), "$EDITOR", "Edit the template file in $VISUAL / $EDITOR (reloaded when saved)"),
    bind(S::Templates, &[ch(']')], tpl(TemplateAction::ScrollSource(Down)), "", "Scroll the source down a page (a render error's line is marked)"),
    bind(S::Templates, &[ch('[')], tpl(TemplateAction::ScrollSource(Up)), "", "Scroll the source up a page"),
    bind(S::Templates, &[ch('>')], tpl(TemplateAction::ScrollSourceSideways(Down)), "", "Scroll the source right (unwrapped)"),
    bind(S::Templates, &[ch('<')], tpl(TemplateAction::ScrollSourceSideways(Up)), "", "Scroll the source left"),
    bind(S::Templates, &[ch('w')], tpl(TemplateAction::ToggleWrap), "wrap", "Wrap long source lines, or scroll sideways"),
    bind(S::Templates, &[ch('i')], tpl(TemplateAction::ToggleInfo), "info", "Show what the selected template can render (probed), or its source again"),
    bind(S::Templates, &[ch('c')], compare(CompareAction::WithTemplate), "", "Compare the session's render with the selected template's, in the Prompt pane"),
    bind(S::Templates, &[key(K::Esc)], tpl(TemplateAction::FilterClear), "", "Clear the filter; while previewing, back to the session's template and render"),
    bind(S::Filter, &[key(K::Enter)], tpl(TemplateAction::Choose), "use", "Use the selected template"),
    bind(S::Filter, &[key(K::Esc)], tpl(TemplateAction::FilterClear), "clear", "Clear the filter and stop typing"),
    bind(S::Filter, &[key(K::Up)], tpl(TemplateAction::Select(Step::Line(Up))), "", "Previous template"),
    bind(S::Filter, &[key(K::Down)], tpl(TemplateAction::Select(Step::Line(Down))), "", "Next template"),
    bind(S::Filter, &[key(K::Backspace)], tpl(TemplateAction::FilterPop), "", "Delete a filter character"),
    bind(S::Filter, &[key(K::Tab)], tpl(TemplateAction::EndFilter), "keep", "Stop typing, keep the filter"),
    bind(S::Messages, &[ch('a')], msg(MessageAction::Add), "add", "Add a message after this one"),
    bind(S::Messages, &[ch('e')], msg(MessageAction::EditContent), "edit", "Edit the content (on the settings row: all the settings as one JSON object)"),
    bind(S::Messages, &[ch('r')], msg(MessageAction::CycleRole), "role", "Cycle role: system, user, assistant, tool"),
    bind(S::Messages, &[ch('t')], msg(MessageAction::AddToolCall), "call", "Add a tool call and edit its arguments (on a user or tool message: in a new assistant message after it)"),
    bind(S::Messages, &[ch('T')], msg(MessageAction::AddToolResult), "result", "Add the tool result for the next unanswered call"),
    bind(S::Messages, &[ch('u'), ctrl('z')], msg(MessageAction::Undo), "undo", "Undo the last change to the conversation"),
    bind(S::Messages, &[key(K::Enter), ch('l'), key(K::Right)], msg(MessageAction::EnterFields), "fields", "Show the message's fields"),
    bind(S::Messages, &[ch('d'), key(K::Delete)], msg(MessageAction::Delete), "del", "Delete the message"),
    bind(S::Messages, &[ch('/')], msg(MessageAction::StartFind), "find", "Find a message by text (role, content, tool names)"),
    bind(S::Messages, &[ch(':')], msg(MessageAction::StartGoTo), "go to", "Go to message number N"),
    bind(S::Messages, &[ch('n')], msg(MessageAction::FindNext(Down)), "", "Next message found"),
    bind(S::Messages, &[ch('N')], msg(MessageAction::FindNext(Up)), "", "Previous message found"),
    bind(S::Messages, &[ch('U'), ctrl('y')], msg(MessageAction::Redo), "", "Redo"),
    bind(S::Messages, &[ch('k'), key(K::Up)], msg(MessageAction::Select(Step::Line(Up))), "", "Previous message"),
    bind(S::Messages, &[ch('j'), key(K::Down)], msg(MessageAction::Select(Step::Line(Down))), "", "Next message"),
    bind(S::Messages, &[key(K::PageUp)], msg(MessageAction::Select(Step::Page(Up))), "", "A page up"),
    bind(S::Messages, &[key(K::PageDown)], msg(MessageAction::Select(Step::Page(Down))), "", "A page down"),
    bind(S::Messages, &[ch('g'), key(K::Home)], msg(MessageAction::Select(Step::First)), "", "First message"),
    bind(S::Messages, &[ch('G'), key(K::End)], msg(MessageAction::Select(Step::Last)), "", "Settings row (last)"),
    bind(S::Messages, &[ctrl('g')], Action::ExternalEdit, "", "Edit the content in $VISUAL / $EDITOR"),
    bind(S::Messages, &[ch('i')], msg(MessageAction::Insert), "", "Insert a message before this one"),
    bind(S::Messages, &[ch('c')], msg(MessageAction::Duplicate), "", "Duplicate the message"),
    bind(S::Messages, &[ch('K'), shift(K::Up)], msg(MessageAction::Move(Up)), "", "Move the message up"),
    bind(S::Messages, &[ch('J'), shift(K::Down)], msg(MessageAction::Move(Down)), "", "Move the message down"),
    bind(S::Messages, &[ch('R')], msg(MessageAction::PromptRole), "", "Type a custom role"),
    bind(S::Messages, &[ch('0')], msg(MessageAction::CycleContentKind), "", "Content: text, null, or no content key"),
    bind(S::Messages, &[ch('$')], msg(MessageAction::ToggleTurnCost), "", "Turn cost: what each turn makes a server with a prefix cache process again (column and title sum)"),
    bind(S::Messages, &[ch('p')], Action::PasteOutput, "", "Paste a model's raw output: parsed with the session's response_template into a new assistant message"),
    bind(S::Messages, &[ch('v')], msg(MessageAction::ToggleRange), "range", "Select a block of messages from here (range mode): move to extend it, then delete, move, duplicate, role or copy it"),
    bind(S::Messages, &[ch('y')], msg(MessageAction::CopyJson), "", "Copy the message as JSON (paste JSON messages to insert them after this one)"),
    bind(S::Range, &[key(K::Esc), ch('v')], msg(MessageAction::ToggleRange), "leave", "Leave the range mode"),
    bind(S::Range, &[ch('d'), key(K::Delete)], msg(MessageAction::Delete), "del", "Delete the block"),
    bind(S::Range, &[ch('J'), shift(K::Down)], msg(MessageAction::Move(Down)), "move", "Move the block down"),
    bind(S::Range, &[ch('K'), shift(K::Up)], msg(MessageAction::Move(Up)), "", "Move the block up"),
    bind(S::Range, &[ch('c')], msg(MessageAction::Duplicate), "dup", "Duplicate the block"),
    bind(S::Range, &[ch('r')], msg(MessageAction::CycleRole), "role", "Cycle the block's role"),
    bind(S::Range, &[ch('R')], msg(MessageAction::PromptRole), "", "Type the block's role"),
    bind(S::Range, &[ch('y')], msg(MessageAction::CopyJson), "copy", "Copy the block as JSON"),
    bind(S::Range, &[ch('u'), ctrl('z')], msg(MessageAction::Undo), "", "Undo (a block is one step)"),
    bind(S::Range, &[ch('k'), key(K::Up)], msg(MessageAction::Select(Step::Line(Up))), "", "Extend up"),
    bind(S::Range, &[ch('j'), key(K::Down)], msg(MessageAction::Select(Step::Line(Down))), "", "Extend down"),
    bind(S::Range, &[key(K::PageUp)], msg(MessageAction::Select(Step::Page(Up))), "", "Extend a page up"),
    bind(S::Range, &[key(K::PageDown)], msg(MessageAction::Select(Step::Page(Down))), "", "Extend a page down"),
    bind(S::Range, &[ch('g'), key(K::Home)], msg(MessageAction::Select(Step::First)), "", "Extend to the first"),
    bind(S::Range, &[ch('G'), key(K::End)], msg(MessageAction::Select(Step::Last)), "", "Extend to the last"),
    bind(S::Range, &[ch(':')], msg(MessageAction::StartGoTo), "", "Extend to message N"),
    bind(S::Range, &[ch('/')], msg(MessageAction::StartFind), "", "Extend to a message found"),
    bind(S::Messages, &[ch('+')], Action::AddTool, "", "Add a tool: NAME PARAM description (one string parameter), NAME city:string days:integer description, or a JSON file of tools"),
    bind(S::Fields, &[ch('+')], Action::AddTool, "", "Add a tool: NAME PARAM description (one string parameter), NAME city:string days:integer description, or a JSON file of tools"),
    bind(S::Fields, &[key(K::Enter), ch('e')], msg(MessageAction::EditField), "edit", "Edit (or toggle) the field"),
    bind(S::Fields, &[key(K::Esc), ch('h'), key(K::Left)], msg(MessageAction::LeaveFields), "back", "Back to the message list"),
    bind(S::Fields, &[ch('a')], msg(MessageAction::Add), "", "Add a message after this one (after the last from the settings)"),
    bind(S::Fields, &[ch('t')], msg(MessageAction::AddToolCall), "call", "Add a tool call and edit its arguments"),
    bind(S::Fields, &[ch('T')], msg(MessageAction::AddToolResult), "", "Add the tool result for the next unanswered call"),
    bind(S::Fields, &[ch('0')], msg(MessageAction::CycleContentKind), "null/none", "Content: text, null, or no content key"),
    bind(S::Fields, &[ch('o')], msg(MessageAction::ToggleArgumentsForm), "obj/str", "Arguments as object or string"),
    bind(S::Fields, &[ch('x')], msg(MessageAction::RemoveField), "remove", "Remove a tool call / reasoning"),
    bind(S::Fields, &[ch('u'), ctrl('z')], msg(MessageAction::Undo), "undo", "Undo the last change to the conversation"),
    bind(S::Fields, &[ch('U'), ctrl('y')], msg(MessageAction::Redo), "", "Redo"),
    bind(S::Fields, &[ctrl('g')], Action::ExternalEdit, "$EDITOR", "Edit the field in $VISUAL / $EDITOR"),
    bind(S::Fields, &[ch('k'), key(K::Up)], msg(MessageAction::Select(Step::Line(Up))), "", "Previous field"),
    bind(S::Fields, &[ch('j'), key(K::Down)], msg(MessageAction::Select(Step::Line(Down))), "", "Next field"),
    bind(S::Fields, &[key(K::PageUp)], msg(MessageAction::Select(Step::Page(Up))), "", "A page up"),
    bind(S::Fields, &[key(K::PageDown)], msg(MessageAction::Select(Step::Page(Down))), "", "A page down"),
    bind(S::Fields, &[ch('g'), key(K::Home)], msg(MessageAction::Select(Step::First)), "", "First field"),
    bind(S::Fields, &[ch('G'), key(K::End)], msg(MessageAction::Select(Step::Last)), "", "Last field"),
    bind(S::Editor, &[key(K::Esc)], Action::Editor(EditorAction::Close), "done", "Close the editor (twice to drop invalid text)"),
    bind(S::Editor, &[ctrl('z')], Action::Editor(EditorAction::Undo), "undo", "Undo"),
    bind(S::Editor, &[ctrl('y')], Action::Editor(EditorAction::Redo), "redo", "Redo"),
    bind(S::Editor, &[ctrl('g')], Action::ExternalEdit, "$EDITOR", "Edit in $VISUAL / $EDITOR"),
    bind(S::Prompt, &[ch('w')], prompt(PromptAction::ToggleWhitespace), "ws", "Show / hide whitespace"),
    bind(S::Prompt, &[ch('t')], prompt(PromptAction::ToggleTokens), "", "Token mode: the prompt as the session's tokenizer sees it"),
    bind(S::Prompt, &[ch('/')], prompt(PromptAction::StartSearch), "search", "Search"),
    bind(S::Prompt, &[ch('D')], prompt(PromptAction::ToggleDiff), "diff", "Diff against the expected prompt"),
    bind(S::Prompt, &[ch('C')], compare(CompareAction::CycleSide), "", "Compare with minijinja, hf-jinja, python or the expected prompt (again: the next; then off)"),
    bind(S::Prompt, &[ch('M')], compare(CompareAction::Matrix), "", "Engine matrix: every engine's verdict on the session, live (↑/↓ a row, Enter its diff; M again or Esc: close)"),
    bind(S::Prompt, &[ch('o')], compare(CompareAction::AskSource), "", "Compare with a template source, @REVISION of the session's model, or a llama-server URL"),
    bind(S::Prompt, &[ch(']')], prompt(PromptAction::NextChange(Down)), "change", "Diff / compare: next change"),
    bind(S::Prompt, &[ch('[')], prompt(PromptAction::NextChange(Up)), "", "Diff / compare: previous change"),
    bind(S::Prompt, &[key(K::Esc)], compare(CompareAction::Close), "", "Close the compare view"),
    bind(S::Prompt, &[ch('H')], prompt(PromptAction::ToggleHunks), "hunks", "Diff: changes with context only, or the whole prompt"),
    bind(S::Prompt, &[ch('y')], prompt(PromptAction::Copy(CopyTarget::Prompt)), "copy", "Copy the prompt to the clipboard"),
    bind(S::Prompt, &[ch('#')], prompt(PromptAction::ToggleLineNumbers), "", "Show / hide line numbers"),
    bind(S::Prompt, &[ch('n')], prompt(PromptAction::NextMatch(Down)), "", "Next match"),
    bind(S::Prompt, &[ch('N')], prompt(PromptAction::NextMatch(Up)), "", "Previous match"),
    bind(S::Prompt, &[ch('k'), key(K::Up)], prompt(PromptAction::Scroll(Step::Line(Up))), "", "Cursor up (the view follows)"),
    bind(S::Prompt, &[ch('j'), key(K::Down)], prompt(PromptAction::Scroll(Step::Line(Down))), "", "Cursor down (the view follows)"),
    bind(S::Prompt, &[key(K::PageUp), ch('b')], prompt(PromptAction::Scroll(Step::Page(Up))), "", "Page up"),
    bind(S::Prompt, &[key(K::PageDown), ch(' ')], prompt(PromptAction::Scroll(Step::Page(Down))), "", "Page down"),
    bind(S::Prompt, &[ch('g'), key(K::Home)], prompt(PromptAction::Scroll(Step::First)), "", "Top"),
    bind(S::Prompt, &[ch('G'), key(K::End)], prompt(PromptAction::Scroll(Step::Last)), "", "Bottom"),
    bind(S::Prompt, &[ch('h'), key(K::Left)], prompt(PromptAction::Column(Up)), "", "Cursor left (a token in token mode)"),
    bind(S::Prompt, &[ch('l'), key(K::Right)], prompt(PromptAction::Column(Down)), "", "Cursor right (a token in token mode)"),
    bind(S::Prompt, &[key(K::Enter)], prompt(PromptAction::JumpToSource), "", "Select the message that produced the byte under the cursor"),
    bind(S::Prompt, &[ch('Y')], prompt(PromptAction::Copy(CopyTarget::Message)), "", "Copy the selected message's part of the prompt"),
    bind(S::Prompt, &[ch('m')], prompt(PromptAction::Copy(CopyTarget::Match)), "", "Copy the line of the current search match"),
    bind(S::Browse, &[ch('E')], Action::SaveExpected, "expect", "Save the render as the expected prompt"),
    bind(S::Browse, &[ch('X')], Action::CopyAsCode, "", "Copy as code: the Python apply_chat_template call, the chatplate render command or an OpenAI request body (curl)"),
    bind(S::Browse, &[ch('1')], Action::Focus(Pane::Templates), "", "Templates pane"),
    bind(S::Browse, &[ch('2')], Action::Focus(Pane::Messages), "", "Messages pane"),
    bind(S::Browse, &[ch('3')], Action::Focus(Pane::Prompt), "", "Prompt pane"),
    bind(S::Browse, &[ch('q')], Action::Quit, "", "Quit"),
    bind(S::Confirm, &[ch('y'), ch('s'), key(K::Enter)], dialog(DialogAction::Accept), "yes", "Yes / save"),
    bind(S::Confirm, &[ch('n'), ch('d')], dialog(DialogAction::Discard), "no", "No / discard"),
    bind(S::Confirm, &[key(K::Esc)], dialog(DialogAction::Cancel), "cancel", "Cancel"),
    bind(S::Conflict, &[ch('o')], dialog(DialogAction::Overwrite), "overwrite", "Overwrite the file with this session"),
    bind(S::Conflict, &[ch('r')], dialog(DialogAction::Reload), "reload", "Reload the file (drops the unsaved changes)"),
    bind(S::Conflict, &[ch('a')], dialog(DialogAction::SaveAs), "save as", "Save under another name"),
    bind(S::Conflict, &[key(K::Esc)], dialog(DialogAction::Cancel), "cancel", "Cancel"),
    bind(S::Input, &[key(K::Enter)], dialog(DialogAction::Accept), "ok", "Accept"),
    bind(S::Input, &[key(K::Esc)], dialog(DialogAction::Cancel), "cancel", "Cancel"),
    bind(S::Input, &[key(K::Backspace)], dialog(DialogAction::Backspace), "", "Delete a character"),
    bind(S::Input, &[key(K::Tab)], dialog(DialogAction::Complete), "", "Opener: complete the path"),
    bind(S::Input, &[key(K::Up)], dialog(DialogAction::Select(Step::Line(Up))), "", "Opener: previous match"),
    bind(S::Input, &[key(K::Down)], dialog(DialogAction::Select(Step::Line(Down))), "", "Opener: next match"),
    bind(S::Picker, &[key(K::Enter)], dialog(DialogAction::Accept), "open", "Open the session"),
    bind(S::Picker, &[key(K::Esc)], dialog(DialogAction::Cancel), "cancel", "Close"),
    bind(S::Picker, &[key(K::Backspace)], dialog(DialogAction::Backspace), "", "Delete a character of the filter"),
    bind(S::Picker, &[key(K::Up)], dialog(DialogAction::Select(Step::Line(Up))), "", "Previous session"),
    bind(S::Picker, &[key(K::Down)], dialog(DialogAction::Select(Step::Line(Down))), "", "Next session"),
    bind(S::Picker, &[key(K::PageUp)], dialog(DialogAction::Select(Step::Page(Up))), "", "A page up"),
    bind(S::Picker, &[key(K::PageDown)], dialog(DialogAction::Select(Step::Page(Down))), "", "A page down"),
    bind(S::Picker, &[key(K::Home)], dialog(DialogAction::Select(Step::First)), "", "First session"),
    bind(S::Picker, &[key(K::End)], dialog(DialogAction::Select(Step::Last)), "", "Last session"),
    bind(S::Log, &[key(K::Esc)], dialog(DialogAction::Cancel), "", "Clear the filter, or close the log"),
    bind(S::Log, &[key(K::Enter)], dialog(DialogAction::Accept), "", "Close the log"),
    bind(S::Log, &[key(K::Backspace)], dialog(DialogAction::Backspace), "", "Delete a character of the filter"),
    bind(S::Log, &[key(K::Up)], dialog(DialogAction::Select(Step::Line(Up))), "", "Older entry"),
    bind(S::Log, &[key(K::Down)], dialog(DialogAction::Select(Step::Line(Down))), "", "Newer entry"),
    bind(S::Log, &[key(K::PageUp)], dialog(DialogAction::Select(Step::Page(Up))), "", "A page up"),
    bind(S::Log, &[key(K::PageDown)], dialog(DialogAction::Select(Step::Page(Down))), "", "A page down"),
    bind(S::Log, &[key(K::Home)], dialog(DialogAction::Select(Step::First)), "", "Oldest entry"),
    bind(S::Log, &[key(K::End)], dialog(DialogAction::Select(Step::Last)), "", "Newest entry"),
    bind(S::Help, &[key(K::Esc), key(K::F(1))], dialog(DialogAction::Cancel), "close", "Clear the filter, or close the help"),
    bind(S::Help, &[key(K::Enter)], dialog(DialogAction::Accept), "run", "Run the selected key's command"),
    bind(S::Help, &[key(K::Backspace)], dialog(DialogAction::Backspace), "", "Delete a character of the filter"),
    bind(S::Help, &[key(K::Up)], dialog(DialogAction::Select(Step::Line(Up))), "", "Previous key"),
    bind(S::Help, &[key(K::Down)], dialog(DialogAction::Select(Step::Line(Down))), "", "Next key"),
    bind(S::Help, &[key(K::PageUp)], dialog(DialogAction::Select(Step::Page(Up))), "", "A page up"),
    bind(S::Help, &[key(K::PageDown)], dialog(DialogAction::Select(Step::Page(Down))), "", "A page down"),
    bind(S::Help, &[key(K::Home)], dialog(DialogAction::Select(Step::First)), "", "First key"),
    bind(S::Help, &[key(K::End)], dialog(DialogAction::Select(Step::Last)), "", "Last key"),
];

thread_local! {
    /// The table in use on this thread: [`BINDINGS`] with the config file's overrides
    /// (see [`install`]). Per thread, so tests with their own overrides don't meet.
    static ACTIVE: std::cell::Cell<&'static [Binding]> = const { std::cell::Cell::new(BINDINGS) };
}

/// The key table in use: the default one, or the one [`install`]ed.
pub fn table() -> &'static [Binding] {
    ACTIVE.with(std::cell::Cell::get)
}

/// Uses `bindings` (the default table with the user's overrides) on this thread from now
/// on: for keys, footer and help alike. Leaked: it lives as long as the app.
pub fn install(bindings: Vec<Binding>) {
    let table: &'static [Binding] = Box::leak(bindings.into_boxed_slice());
    ACTIVE.with(|active| active.set(table));
}

/// The action for `event` in `scope`, or `None` when the key means nothing there.
pub fn resolve(scope: Scope, event: &KeyEvent) -> Option<Action> {
    if event.kind == KeyEventKind::Release {
        return None;
    }
    let chord = Chord::from_event(event);
    let lookup = |scope: Scope| {
        table()
            .iter()
            .find(|b| b.scope == scope && b.keys.contains(&chord))
            .map(|b| b.action.clone())
    };
    lookup(scope)
        .or_else(|| scope.inherits().iter().find_map(|&s| lookup(s)))
        .or_else(|| fallback(scope, chord, event))
}

/// For an Alt+key event that is really `Esc` followed by the key (both arrived in one
/// read): the key alone, when it is a command in `scope` (a table row, not text input)
/// and nothing binds the Alt form.
pub fn split_escape(scope: Scope, event: &KeyEvent) -> Option<KeyEvent> {
    if !event.modifiers.contains(KeyModifiers::ALT) || event.kind == KeyEventKind::Release {
        return None;
    }
    let mut key = *event;
    key.modifiers.remove(KeyModifiers::ALT);
    let bound = |event: &KeyEvent| {
        let chord = Chord::from_event(event);
        std::iter::once(scope)
            .chain(scope.inherits().iter().copied())
            .any(|s| {
                table()
                    .iter()
                    .any(|b| b.scope == s && b.keys.contains(&chord))
            })
    };
    (!bound(event) && bound(&key)).then_some(key)
}

/// Keys no row claims: text for the filter, the editor and text inputs.
fn fallback(scope: Scope, chord: Chord, event: &KeyEvent) -> Option<Action> {
    let plain = |c| {
        (!chord
            .mods
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT))
        .then_some(c)
    };
    match (scope, chord.code) {
        (Scope::Editor, _) => Some(Action::Editor(EditorAction::Input((*event).into()))),
        (Scope::Filter, KeyCode::Char(c)) => plain(c).map(|c| tpl(TemplateAction::FilterPush(c))),
        (Scope::Input | Scope::Picker | Scope::Help | Scope::Log, KeyCode::Char(c)) => {
            plain(c).map(|c| dialog(DialogAction::Type(c)))
        }
        _ => None,
    }
}

/// The first key bound to `action` in any scope (as the table in use has it), to name
/// in a hint: `None` when the user's config unbound it.
pub fn key_for(action: &Action) -> Option<String> {
    table()
        .iter()
        .find(|b| b.action == *action && !b.keys.is_empty())
        .map(|b| b.keys[0].label())
}

/// The footer hints for `scope`: `(keys, label)` pairs, the scope's own first.
pub fn hints(scope: Scope) -> Vec<(String, &'static str)> {
    let mut scopes = vec![scope];
    scopes.extend_from_slice(scope.inherits());
    scopes
        .iter()
        .flat_map(|&s| table().iter().filter(move |b| b.scope == s))
        .filter(|b| !b.hint.is_empty() && !b.keys.is_empty())
        .map(|b| (b.keys[0].label(), b.hint))
        .collect()
}

/// Like [`hints`], with each hint's action (to leave out those that do not apply).
pub fn hints_with_actions(scope: Scope) -> Vec<(String, &'static str, Action)> {
    let mut scopes = vec![scope];
    scopes.extend_from_slice(scope.inherits());
    scopes
        .iter()
        .flat_map(|&s| table().iter().filter(move |b| b.scope == s))
        .filter(|b| !b.hint.is_empty() && !b.keys.is_empty())
        .map(|b| (b.keys[0].label(), b.hint, b.action.clone()))
        .collect()
}

/// The help overlay content: per scope, `(all keys, description)`.
pub fn help_sections() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    Scope::ALL
        .iter()
        .map(|&scope| {
            let rows = table()
                .iter()
                .filter(|b| b.scope == scope)
                .map(|b| {
                    (
                        b.keys
                            .iter()
                            .map(|k| k.label())
                            .collect::<Vec<_>>()
                            .join(" "),
                        b.help,
                    )
                })
                .collect();
            (scope.title(), rows)
        })
        .collect()
}
