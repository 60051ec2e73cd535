//! Typed intents: everything the user can ask the app to do.
//!
//! Keys become actions in [`crate::tui::keymap`]; [`crate::tui::app::App::update`] is the
//! only place that carries them out. Work that needs the terminal itself (the clipboard,
//! an external editor) or the disk comes back out of `update` as an [`Effect`]; what came
//! of file work goes back in as a [`Message`].

use ratatui_textarea::Input;

/// The three panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    /// The template picker and source view.
    Templates,
    /// The conversation editor.
    Messages,
    /// The rendered prompt.
    Prompt,
}

impl Pane {
    /// Every pane, in tab order.
    pub const ALL: [Pane; 3] = [Pane::Templates, Pane::Messages, Pane::Prompt];

    /// The tab label.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Templates => "Templates",
            Pane::Messages => "Messages",
            Pane::Prompt => "Prompt",
        }
    }
}

/// Up or down, for selections, moves and search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Towards the start.
    Up,
    /// Towards the end.
    Down,
}

/// How far a cursor or a view moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// One line or item.
    Line(Direction),
    /// One screenful.
    Page(Direction),
    /// The first item.
    First,
    /// The last item.
    Last,
}

/// Intents for the message list and the field list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageAction {
    /// Move the selection.
    Select(Step),
    /// Add a message after the selected one.
    Add,
    /// Insert a message before the selected one.
    Insert,
    /// Delete the selected message.
    Delete,
    /// Duplicate the selected message.
    Duplicate,
    /// Move the selected message up or down.
    Move(Direction),
    /// Cycle the role through system, user, assistant, tool.
    CycleRole,
    /// Ask for a custom role string.
    PromptRole,
    /// Add a tool call to the selected assistant message.
    AddToolCall,
    /// Insert a tool result answering the next unanswered call.
    AddToolResult,
    /// Focus the selected message's fields.
    EnterFields,
    /// Back from the fields to the list.
    LeaveFields,
    /// Edit the content of the selected message.
    EditContent,
    /// Edit (or toggle) the selected field.
    EditField,
    /// Remove the selected optional field (tool call, reasoning).
    RemoveField,
    /// Switch tool-call arguments between a JSON object and a JSON string.
    ToggleArgumentsForm,
    /// Ask for a message number and select it.
    StartGoTo,
    /// Ask for text and select the next message that contains it.
    StartFind,
    /// Select the next / previous message matching the find text.
    FindNext(Direction),
    /// Undo the last change to the conversation made from the lists.
    Undo,
    /// Redo the last undone list change.
    Redo,
    /// Cycle the content between text, `null` and no `content` key at all.
    CycleContentKind,
    /// Start a block of messages at the selected one (range mode), or leave the mode.
    ToggleRange,
    /// Copy the block (or the selected message) as a JSON list of messages.
    CopyJson,
    /// Show or hide the turn-cost column (what each turn makes a prefix cache process
    /// again).
    ToggleTurnCost,
}

/// Intents for the open field editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorAction {
    /// A key for the text area itself.
    Input(Input),
    /// Close the editor (refused once while the text is invalid).
    Close,
    /// Undo the last edit.
    Undo,
    /// Redo the last undone edit.
    Redo,
}

/// Intents for the prompt pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptAction {
    /// Scroll the prompt.
    Scroll(Step),
    /// Show or hide whitespace marks.
    ToggleWhitespace,
    /// Token mode on or off (the session's tokenizer).
    ToggleTokens,
    /// Show the line diff against the expected prompt.
    ToggleDiff,
    /// Ask for a search term.
    StartSearch,
    /// Jump to the next or previous search match.
    NextMatch(Direction),
    /// Copy to the clipboard.
    Copy(CopyTarget),
    /// Move the cursor one character (token, in token mode) left (`Up`) or right.
    Column(Direction),
    /// Select the message that produced the bytes under the cursor.
    JumpToSource,
    /// Show or hide line numbers.
    ToggleLineNumbers,
    /// In the diff: jump to the next / previous change.
    NextChange(Direction),
    /// In the diff: changes with context only, or the whole prompt.
    ToggleHunks,
}

/// What `y` and its siblings copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyTarget {
    /// The whole prompt.
    Prompt,
    /// The selected message's part of the prompt.
    Message,
    /// The prompt line(s) holding the current search match.
    Match,
}

/// Intents for the template pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateAction {
    /// Move the selection in the filtered list.
    Select(Step),
    /// Use the selected template for the session.
    Choose,
    /// Add a character to the filter.
    FilterPush(char),
    /// Remove the last filter character.
    FilterPop,
    /// Clear the filter.
    FilterClear,
    /// Scroll the source view.
    ScrollSource(Direction),
    /// Start typing a filter.
    StartFilter,
    /// Stop typing into the filter (it stays applied).
    EndFilter,
    /// Scroll the source sideways (when not wrapped).
    ScrollSourceSideways(Direction),
    /// Wrap long source lines, or scroll sideways.
    ToggleWrap,
    /// Open the template file in `$VISUAL` / `$EDITOR`.
    EditFile,
    /// Show the selected template's capabilities instead of its source, or back.
    ToggleInfo,
}

/// Intents for whatever dialog is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogAction {
    /// Yes / submit / open.
    Accept,
    /// The "discard" choice of the unsaved-changes dialog.
    Discard,
    /// No / cancel / close.
    Cancel,
    /// Move the selection (picker) or scroll (help).
    Select(Step),
    /// Type into a text input.
    Type(char),
    /// Delete the last input character.
    Backspace,
    /// Complete the typed path (`Tab` in the opener).
    Complete,
    /// Save over a file another program changed.
    Overwrite,
    /// Read the changed file again, dropping the unsaved changes.
    Reload,
    /// Save under another name instead.
    SaveAs,
}

/// Everything the app can be asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Focus the next pane.
    FocusNext,
    /// Focus the previous pane.
    FocusPrev,
    /// Focus one pane.
    Focus(Pane),
    /// Show the key help.
    Help,
    /// Show the message log (see `dialogs::log`).
    MessageLog,
    /// Quit, asking first when there are unsaved changes.
    Quit,
    /// Save the session (asks for a file name the first time).
    Save,
    /// Stop the background work (attribution, probes, tokens, comparisons) until the
    /// next change.
    StopWork,
    /// Open the session picker.
    OpenPicker,
    /// Compare the session's render with another side, or preview a template.
    Compare(CompareAction),
    /// Start a new, empty session on the current template.
    NewSession,
    /// Ask for a path, model folder, model id or `.gguf` to open.
    OpenTarget,
    /// Add a tool definition from a skeleton or a JSON file (see `dialogs::tool_skeleton`).
    AddTool,
    /// Paste a model's raw output to parse into a new message (see `dialogs::paste`).
    PasteOutput,
    /// Copy the session as code: the Python `apply_chat_template` call, the `chatplate
    /// render` command or an OpenAI request body (a chooser).
    CopyAsCode,
    /// A mouse click or wheel turn at a screen cell (see `terminal::mouse`).
    Mouse(crate::tui::action::MouseInput),
    /// Save the session under a new name.
    SaveAs,
    /// Store the current render (or error) as the session's expected outcome.
    SaveExpected,
    /// Edit the current field in `$VISUAL` / `$EDITOR`.
    ExternalEdit,
    /// The external editor finished with this text.
    ExternalEdited(String),
    /// Text pasted from the terminal (bracketed paste).
    Paste(String),
    /// The terminal changed size.
    Resize(u16, u16),
    /// Show the focused pane alone on the whole screen, or go back.
    Zoom,
    /// A message-pane intent.
    Message(MessageAction),
    /// A field-editor intent.
    Editor(EditorAction),
    /// A prompt-pane intent.
    Prompt(PromptAction),
    /// A template-pane intent.
    Template(TemplateAction),
    /// A dialog intent.
    Dialog(DialogAction),
}

/// Intents for the compare view and the template preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareAction {
    /// Compare with the next engine or the expected prompt (then off again).
    CycleSide,
    /// Compare with the template under the Templates pane's cursor.
    WithTemplate,
    /// Ask for a side to compare with: any template source, `@REV`, or a llama-server.
    AskSource,
    /// Close the compare view.
    Close,
    /// Open or close the engine matrix (every engine's verdict, see `jobs::matrix`).
    Matrix,
}

/// What the mouse did, where (a screen cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseInput {
    /// A left click, or the wheel turned up or down.
    pub kind: MouseKind,
    /// The column.
    pub column: u16,
    /// The row.
    pub row: u16,
}

/// The mouse events the app uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    /// The left button went down.
    Click,
    /// The wheel turned.
    Wheel(Direction),
    /// The pointer moved with the left button down (extends a block of messages).
    Drag,
}
