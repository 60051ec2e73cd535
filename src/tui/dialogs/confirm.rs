//! Yes / no / cancel questions: unsaved changes on quit or before opening, a recovery
//! file to restore, a session file another program changed, a template saving would
//! name from outside the allowed folders, saving after `E`.

use std::path::PathBuf;

use ratatui::layout::Rect;
use ratatui::Frame;

use crate::tui::action::DialogAction;

use crate::tui::context::Effect;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::context::DialogRequest;
use crate::tui::dialogs::view;
use crate::tui::dialogs::Dialog;
use crate::tui::dialogs::Overlay;
use crate::tui::files::disk::Job;
use crate::tui::files::disk::Open;
use crate::tui::files::disk::Outside;
use crate::tui::files::disk::Outsider;
use crate::tui::files::disk::Save;
use crate::tui::files::recovery::Found;
use crate::tui::files::workspace::Workspace;
use crate::tui::keymap::Scope;
use crate::tui::theme::Theme;

/// A yes / no / cancel question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    /// Unsaved changes on quit: save, discard or stay.
    Quit,
    /// A recovery file from an earlier run exists: restore it, discard it, or decide
    /// later (it is kept, and this run's changes go to a file of their own).
    Restore(Found),
    /// Unsaved changes before opening another session: save and open, discard and open,
    /// or stay.
    OpenDiscard(PathBuf),
    /// Unsaved changes before a new session (`Ctrl+N`): save, discard or stay.
    NewDiscard,
    /// Another program changed the session file since it was read or saved.
    Changed,
    /// Saving held back: the session may not name its template's file from where it
    /// goes. Allow the folder as a template root, or write the template's text instead.
    TemplateOutside(Outsider),
    /// `E` took the render as the expected outcome: save the session now?
    SaveExpected,
}

impl Dialog for Confirm {
    fn scope(&self) -> Scope {
        match self {
            Confirm::Changed => Scope::Conflict,
            _ => Scope::Confirm,
        }
    }

    fn handle(&mut self, action: DialogAction, ctx: &mut DialogContext) -> bool {
        match action {
            DialogAction::Cancel => {
                if let Confirm::Restore(found) = self {
                    let path = found.path.display();
                    ctx.notify(format!("kept {path}; it is offered again next time"));
                }
                false
            }
            _ => {
                let Some(answered) = answer(self, &action, ctx.workspace) else {
                    // Not an answer to this question: it stays.
                    return true;
                };
                if let Some(request) = answered {
                    ctx.ask(request);
                }
                false
            }
        }
    }

    fn draw(&self, frame: &mut Frame, area: Rect, name: &str, theme: Theme) {
        view::draw_confirm(frame, area, self, name, theme);
    }
}

/// What `action` (not Cancel) asks for in answer to `question`: `None` when it is no
/// answer to it, `Some(None)` when the answer needs nothing done.
fn answer(
    question: &Confirm,
    action: &DialogAction,
    ws: &Workspace,
) -> Option<Option<DialogRequest>> {
    use DialogAction::{Accept, Discard, Overwrite, Reload, SaveAs};
    Some(Some(match (question, action) {
        (Confirm::Quit, Accept) => DialogRequest::Save { then_quit: true },
        (Confirm::Quit, Discard) => DialogRequest::DiscardAndQuit,
        (Confirm::Restore(found), Accept) => disk(Job::Restore {
            recovery: found.path.clone(),
            place: ws.place(),
        }),
        (Confirm::Restore(found), Discard) => disk(Job::DiscardFound {
            removal: ws.removal(found.path.clone()),
            lookup: ws.recovery_lookup(),
        }),
        (Confirm::OpenDiscard(path), Accept) => {
            DialogRequest::SaveThen(Box::new(Effect::Disk(Job::Open(Open {
                path: path.clone(),
                sessions_dir: ws.sessions_dir.clone(),
                discard: None,
            }))))
        }
        (Confirm::OpenDiscard(path), Discard) => DialogRequest::OpenSession {
            path: path.clone(),
            discard: true,
        },
        (Confirm::NewDiscard, Accept) => {
            DialogRequest::SaveThen(Box::new(crate::tui::dialogs::open::start_new(ws)))
        }
        (Confirm::NewDiscard, Discard) => {
            DialogRequest::Effect(crate::tui::dialogs::open::start_new(ws))
        }
        (Confirm::SaveExpected, Accept) => DialogRequest::Save { then_quit: false },
        (Confirm::SaveExpected, Discard) => return Some(None),
        (Confirm::Changed, Overwrite) => DialogRequest::Overwrite,
        (Confirm::Changed, Reload) => {
            let path = ws.path.clone();
            return Some(path.map(|path| DialogRequest::OpenSession {
                path,
                discard: true,
            }));
        }
        (Confirm::Changed, SaveAs) => {
            DialogRequest::Show(Overlay::save_as(&ws.sessions_dir, false))
        }
        (Confirm::TemplateOutside(outsider), Accept) => disk(Job::AllowRoot {
            folder: outsider.folder.clone(),
            save: Box::new(outsider_save(ws, outsider, Outside::Keep)),
        }),
        (Confirm::TemplateOutside(outsider), Discard) => {
            disk(Job::Save(outsider_save(ws, outsider, Outside::Inline)))
        }
        _ => return None,
    }))
}

fn disk(job: Job) -> DialogRequest {
    DialogRequest::Effect(Effect::Disk(job))
}

/// The save the template question held back, going ahead as `outside` says.
fn outsider_save(ws: &Workspace, outsider: &Outsider, outside: Outside) -> Save {
    let target = Some(outsider.target.clone());
    ws.save_job(target, outsider.guard, outsider.then_quit, outside)
}
