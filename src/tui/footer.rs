//! The key hints on the bottom line: the focused scope's most important keys first (the
//! keymap table's order), only those that apply to what is selected, and `? help`
//! always, so an 80-column footer never hides the way to the rest.

use ratatui::text::{Line, Span};

use chatplate_core::catalog::Origin;

use super::action::{Action, MessageAction, PromptAction, TemplateAction};
use super::app::App;
use super::fields::{Field, Row};
use super::keymap::{self, Scope};

/// Whether the hint for `action` means anything right now.
fn applies(app: &App, action: &Action) -> bool {
    let session = &app.workspace.session;
    let field = app.messages.current_field(session);
    let row = app.messages.row(session);
    let selected = super::fields::message(session, row);
    match action {
        Action::Message(MessageAction::CycleContentKind) => {
            field == Some(Field::Content) || !app.messages.in_fields
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
            super::conversation::tool_result(session, app.messages.selected).is_some()
        }
        Action::Message(
            MessageAction::Delete | MessageAction::CycleRole | MessageAction::EditContent,
        ) => matches!(row, Row::Message(_)),
        Action::Message(MessageAction::Undo) => app.workbench.can_undo(),
        Action::Message(MessageAction::FindNext(_)) => app.workbench.find.is_some(),
        Action::Prompt(PromptAction::NextChange(_) | PromptAction::ToggleHunks) => app.prompt.diff,
        Action::Template(TemplateAction::EditFile) => app
            .templates
            .selected()
            .is_some_and(|t| matches!(t.origin, Origin::File(_))),
        _ => true,
    }
}

/// The footer for `app`, at most `width` columns.
pub fn line(app: &App, width: u16) -> Line<'static> {
    let scope = app.scope();
    let mut hints: Vec<(String, &'static str)> = keymap::hints_with_actions(scope)
        .into_iter()
        .filter(|(_, _, action)| applies(app, action))
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
        spans.push(Span::styled(keys, app.theme.key()));
        spans.push(Span::raw(format!(" {label} ")));
    }
    if let Some((keys, label)) = help {
        if used + reserve <= usize::from(width) {
            spans.push(Span::styled(keys, app.theme.key()));
            spans.push(Span::raw(format!(" {label} ")));
        }
    }
    if scope == Scope::Editor && spans.is_empty() {
        spans.push(Span::raw("Esc done"));
    }
    Line::from(spans)
}
