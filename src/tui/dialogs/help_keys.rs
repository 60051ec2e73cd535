//! The help overlay's keys: typing filters the rows (every word must occur in a row's
//! keys or description; the shared matcher ranks them, see `help::shown_rows`), the arrows select a row, Enter runs the selected key's command
//! as if its key had been pressed where the help was opened (in another pane's rows,
//! that pane is focused first), Esc clears the filter and then closes. `?` on an empty
//! filter closes too, as it opened the help.

use crate::tui::action::DialogAction;

use crate::tui::action::Pane;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::context::DialogRequest;
use crate::tui::dialogs::help;
use crate::tui::dialogs::help::HelpRow;
use crate::tui::dialogs::Overlay;
use crate::tui::keymap::Scope;

impl Overlay {
    /// The help opened from `from`, unfiltered, at the top.
    pub fn help(from: Scope) -> Self {
        Overlay::Help {
            scroll: 0,
            from,
            filter: String::new(),
            cursor: 0,
        }
    }
}

/// The help's state, lent from [`Overlay::Help`]'s fields.
#[derive(Debug)]
pub struct HelpState<'a> {
    /// Lines scrolled.
    pub scroll: &'a mut u16,
    /// The scope it was opened from.
    pub from: Scope,
    /// The text typed to filter the rows.
    pub filter: &'a mut String,
    /// The selected row among those that can be selected.
    pub cursor: &'a mut usize,
}

/// Handles a key in the help overlay; returns whether it stays open.
pub fn handle(state: HelpState, action: DialogAction, ctx: &mut DialogContext) -> bool {
    let HelpState {
        scroll,
        from,
        filter,
        cursor,
    } = state;
    let rows = help::shown_rows(from, filter);
    match action {
        DialogAction::Select(step) => {
            let count = help::selectable(&rows).len();
            let page = help::page(ctx.screen.height);
            *cursor = help::step(*cursor, count, page, step);
        }
        DialogAction::Type('?') if filter.is_empty() => return false,
        DialogAction::Type(c) => {
            filter.push(c);
            *cursor = 0;
        }
        DialogAction::Backspace => {
            filter.pop();
            *cursor = 0;
        }
        DialogAction::Cancel if filter.is_empty() => return false,
        DialogAction::Cancel => {
            filter.clear();
            *cursor = 0;
        }
        DialogAction::Accept => {
            run_row(&rows, *cursor, from, ctx);
            return false;
        }
        _ => {}
    }
    let rows = help::shown_rows(from, filter);
    let size = (ctx.screen.width, ctx.screen.height);
    *scroll = help::follow(*scroll, &rows, *cursor, size);
    true
}

/// Enter on a row: asks to run the row's action (the help closes), when it can run from
/// where the help was opened.
fn run_row(rows: &[HelpRow], cursor: usize, from: Scope, ctx: &mut DialogContext) {
    let row = help::selectable(rows)
        .get(cursor)
        .and_then(|&i| rows.get(i));
    let Some(HelpRow::Binding(keys, _, scope, action, _)) = row else {
        return ctx.warn("nothing to run on this row (it explains, it is not a key)");
    };
    if !runs_from(*scope, from) {
        return ctx.warn(format!("{keys} works in {} only", scope.title()));
    }
    let focus = pane_of(*scope).filter(|_| *scope != from);
    let action = action.clone();
    ctx.ask(DialogRequest::Run { focus, action });
}

/// Whether a binding of `scope` can run with the help opened from `from`: the scope's
/// own, what it inherits, and the panes' keys (the pane is focused first); not the keys
/// of dialogs, the editor or the filter, which only mean something while they are open.
fn runs_from(scope: Scope, from: Scope) -> bool {
    scope == from
        || from.inherits_scopes().contains(&scope)
        || matches!(
            scope,
            Scope::Global | Scope::Browse | Scope::Templates | Scope::Messages | Scope::Prompt
        ) && !matches!(from, Scope::Editor | Scope::Filter)
}

/// The pane a pane scope's keys work in.
fn pane_of(scope: Scope) -> Option<Pane> {
    match scope {
        Scope::Templates => Some(Pane::Templates),
        Scope::Messages => Some(Pane::Messages),
        Scope::Prompt => Some(Pane::Prompt),
        _ => None,
    }
}
