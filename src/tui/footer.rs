//! The key hints on the bottom line: the focused scope's most important keys first (the
//! keymap table's order), only those that apply to what is selected, and `? help`
//! always, so an 80-column footer never hides the way to the rest.

use ratatui::text::{Line, Span};

use chatplate_core::catalog::{Origin, TemplateSource};
use chatplate_core::session::Session;

use crate::tui::action::Action;

use crate::tui::action::MessageAction;

use crate::tui::action::PromptAction;

use crate::tui::action::TemplateAction;
use crate::tui::keymap;
use crate::tui::keymap::Scope;
use crate::tui::panes::messages::fields::Field;
use crate::tui::panes::messages::fields::Row;
use crate::tui::panes::messages::MessagesPane;
use crate::tui::theme::Theme;

/// What decides which hints the footer shows.
#[derive(Debug, Clone, Copy)]
pub struct FooterView<'a> {
    /// Where the keys go.
    pub scope: Scope,
    /// The session.
    pub session: &'a Session,
    /// The message list's selection.
    pub messages: &'a MessagesPane,
    /// A list edit can be undone.
    pub can_undo: bool,
    /// A message-list search can be repeated.
    pub finding: bool,
    /// The prompt pane shows the diff.
    pub diff: bool,
    /// The template under the template list's cursor.
    pub template: Option<&'a TemplateSource>,
    /// The colours.
    pub theme: Theme,
}

/// Whether the hint for `app::action` means anything right now.
fn applies(view: &FooterView, action: &Action) -> bool {
    let session = view.session;
    let field = view.messages.current_field(session);
    let row = view.messages.row(session);
    let selected = crate::tui::panes::messages::fields::message(session, row);
    match action {
        Action::Message(MessageAction::CycleContentKind) => {
            field == Some(Field::Content) || !view.messages.in_fields
        }
        Action::Message(MessageAction::ToggleArgumentsForm) => {
            matches!(field, Some(Field::CallArguments(_)))
        }
        Action::Message(MessageAction::RemoveField) => matches!(
            field,
            Some(
                Field::CallArguments(_) | Field::CallName(_) | Field::CallId(_) | Field::Reasoning
            )
        ),
        Action::Message(MessageAction::AddToolCall) => {
            selected.is_some_and(|m| m.role() != "system")
        }
        Action::Message(MessageAction::AddToolResult) => {
            crate::tui::panes::messages::conversation::tool_result(session, view.messages.selected)
                .is_some()
        }
        Action::Message(
            MessageAction::Delete | MessageAction::CycleRole | MessageAction::EditContent,
        ) => matches!(row, Row::Message(_)),
        Action::Message(MessageAction::Undo) => view.can_undo,
        Action::Message(MessageAction::FindNext(_)) => view.finding,
        Action::Prompt(PromptAction::NextChange(_) | PromptAction::ToggleHunks) => view.diff,
        Action::Template(TemplateAction::EditFile) => {
            (view.template).is_some_and(|t| matches!(t.origin, Origin::File(_)))
        }
        _ => true,
    }
}

/// The footer, at most `width` columns.
pub fn line(view: &FooterView, width: u16) -> Line<'static> {
    let (scope, theme) = (view.scope, view.theme);
    let mut hints: Vec<(String, &'static str)> = keymap::hints_with_actions(scope)
        .into_iter()
        .filter(|(_, _, action)| applies(view, action))
        .map(|(keys, label, _)| (keys, label))
        .collect();
    // `? help` goes last but is never pushed out by the others.
    let help = hints
        .iter()
        .position(|(k, _)| k == "?")
        .map(|i| hints.remove(i));
    let reserve = help
        .as_ref()
        .map_or(0, |(k, l)| k.chars().count() + l.chars().count() + 2);
    let mut spans = Vec::new();
    let mut used = 0;
    for (keys, label) in hints {
        let cost = keys.chars().count() + label.chars().count() + 2;
        if used + cost + reserve > usize::from(width) {
            continue;
        }
        used += cost;
        spans.push(Span::styled(keys, theme.key()));
        spans.push(Span::raw(format!(" {label} ")));
    }
    if let Some((keys, label)) = help {
        if used + reserve <= usize::from(width) {
            spans.push(Span::styled(keys, theme.key()));
            spans.push(Span::raw(format!(" {label} ")));
        }
    }
    if scope == Scope::Editor && spans.is_empty() {
        spans.push(Span::raw("Esc done"));
    }
    Line::from(spans)
}
