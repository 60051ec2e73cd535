//! The key hints on the bottom line: the focused scope's most important keys first (the
//! keymap table's order), only those that apply to what is selected, and save, quit and
//! `? help` always, so an 80-column footer never hides the way to the rest or out.

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
        // The status line names it when a notice is cut; the help lists it.
        Action::MessageLog => false,
        Action::Template(TemplateAction::EditFile) => {
            (view.template).is_some_and(|t| matches!(t.origin, Origin::File(_)))
        }
        _ => true,
    }
}

/// Whether the hint for `action` is always shown: the way to the rest of the keys, and
/// saving and quitting, which an 80-column footer must not push out.
fn kept(action: &Action) -> bool {
    matches!(action, Action::Help | Action::Save | Action::Quit)
}

/// The footer, at most `width` columns.
pub fn line(view: &FooterView, width: u16) -> Line<'static> {
    let (scope, theme) = (view.scope, view.theme);
    let hints: Vec<(String, &'static str, Action)> = keymap::hints_with_actions(scope)
        .into_iter()
        .filter(|(_, _, action)| applies(view, action))
        .collect();
    let cost = |keys: &str, label: &str| keys.chars().count() + label.chars().count() + 2;
    // Save, quit and `? help` go last but are never pushed out by the others (help
    // last of all, and the one kept when even they do not fit).
    let (mut last, others): (Vec<_>, Vec<_>) = hints.into_iter().partition(|h| kept(&h.2));
    last.sort_by_key(|h| h.2 == Action::Help);
    while last.iter().map(|h| cost(&h.0, h.1)).sum::<usize>() > usize::from(width) && last.len() > 1
    {
        last.remove(0);
    }
    let reserve: usize = last.iter().map(|h| cost(&h.0, h.1)).sum();
    let mut spans = Vec::new();
    let mut used = 0;
    for (keys, label, _) in others {
        let cost = cost(&keys, label);
        if used + cost + reserve > usize::from(width) {
            continue;
        }
        used += cost;
        spans.push(Span::styled(keys, theme.key()));
        spans.push(Span::raw(format!(" {label} ")));
    }
    if used + reserve <= usize::from(width) {
        for (keys, label, _) in last {
            spans.push(Span::styled(keys, theme.key()));
            spans.push(Span::raw(format!(" {label} ")));
        }
    }
    if scope == Scope::Editor && spans.is_empty() {
        spans.push(Span::raw("Esc done"));
    }
    Line::from(spans)
}
