//! The help overlay's keys: typing filters the rows (every word must occur in a row's
//! keys or description; the shared matcher ranks them, see `help::shown_rows`), the arrows select a row, Enter runs the selected key's command
//! as if its key had been pressed where the help was opened (in another pane's rows,
//! that pane is focused first), Esc clears the filter and then closes. `?` on an empty
//! filter closes too, as it opened the help.

use crate::tui::action::Action;

use crate::tui::action::DialogAction;

use crate::tui::action::Effect;

use crate::tui::action::Pane;
use crate::tui::app::App;
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

impl App {
    /// Handles a key in the help overlay (taken out of `self.overlay`; put back unless
    /// it closes).
    pub(in crate::tui) fn help_action(
        &mut self,
        scroll: u16,
        from: Scope,
        mut filter: String,
        mut cursor: usize,
        action: DialogAction,
    ) -> Option<Effect> {
        let rows = help::shown_rows(from, &filter);
        match action {
            DialogAction::Select(step) => {
                let count = help::selectable(&rows).len();
                let page = help::page(self.screen.height);
                cursor = help::step(cursor, count, page, step);
            }
            DialogAction::Type('?') if filter.is_empty() => return None,
            DialogAction::Type(c) => {
                filter.push(c);
                cursor = 0;
            }
            DialogAction::Backspace => {
                filter.pop();
                cursor = 0;
            }
            DialogAction::Cancel if filter.is_empty() => return None,
            DialogAction::Cancel => {
                filter.clear();
                cursor = 0;
            }
            DialogAction::Accept => return self.run_help_row(&rows, cursor, from),
            _ => {}
        }
        let rows = help::shown_rows(from, &filter);
        let size = (self.screen.width, self.screen.height);
        let scroll = help::follow(scroll, &rows, cursor, size);
        self.overlay = Some(Overlay::Help {
            scroll,
            from,
            filter,
            cursor,
        });
        None
    }

    /// Enter on a row: closes the help and runs the row's action, when it can run from
    /// where the help was opened.
    fn run_help_row(&mut self, rows: &[HelpRow], cursor: usize, from: Scope) -> Option<Effect> {
        let row = help::selectable(rows)
            .get(cursor)
            .and_then(|&i| rows.get(i));
        let Some(HelpRow::Binding(keys, _, scope, action, _)) = row else {
            self.warn("nothing to run on this row (it explains, it is not a key)");
            return None;
        };
        let (scope, action) = (*scope, action.clone());
        if !runs_from(scope, from) {
            self.warn(format!("{keys} works in {} only", scope.title()));
            return None;
        }
        if let Some(pane) = pane_of(scope).filter(|_| scope != from) {
            self.update(Action::Focus(pane));
        }
        self.update(action)
    }
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
