//! The paste dialog: a model's raw output (from a server log) becomes a new assistant
//! message. The session's `response_template` parses it on the worker; the dialog shows
//! the message and what the parser could not place (or its error) before it is appended.

use std::sync::Arc;

use chatplate_core::parse::MAX_INPUT_BYTES;
use chatplate_core::worker::parsing::{Pasted, SchemaLookup};
use chatplate_core::worker::{Job, JobKind, Output, Reply};
use ratatui::layout::Rect;
use ratatui::Frame;

use crate::tui::action::DialogAction;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::context::DialogRequest;
use crate::tui::dialogs::paste_view;
use crate::tui::dialogs::Dialog;
use crate::tui::jobs::Background;
use crate::tui::jobs::JobView;
use crate::tui::jobs::Said;
use crate::tui::keymap::Scope;
use crate::tui::theme::Theme;

/// Where the paste dialog is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PasteState {
    /// Taking text; Enter parses it.
    #[default]
    Editing,
    /// Enter was pressed: the parse job goes to the worker with the next batch.
    Wanted,
    /// On the worker, submitted with this generation.
    Parsing(u64),
    /// The parser's answer; Enter appends a parsed message.
    Parsed(Pasted),
}

/// The paste dialog's state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PasteDialog {
    /// The output pasted (or typed) so far.
    pub text: String,
    /// What the parser made of it.
    pub state: PasteState,
}

impl PasteDialog {
    /// Takes more text: what was parsed no longer holds. Past what a parse takes
    /// ([`MAX_INPUT_BYTES`]) the text is refused as it arrives, not after it is held.
    pub fn add(&mut self, text: &str) {
        let total = self.text.len().saturating_add(text.len());
        if total > MAX_INPUT_BYTES {
            self.state = PasteState::Parsed(Pasted::Failed(format!(
                "the output would be {total} bytes, more than the {MAX_INPUT_BYTES} bytes a \
                 parse takes: paste less"
            )));
            return;
        }
        self.text.push_str(text);
        self.state = PasteState::Editing;
    }

    /// Enter: appends the parsed message (closing), or asks for the text to be parsed.
    fn accept(&mut self, ctx: &mut DialogContext) -> bool {
        if let PasteState::Parsed(Pasted::Message { message, .. }) = &self.state {
            ctx.ask(DialogRequest::AppendMessage(message.clone()));
            return false;
        }
        if matches!(self.state, PasteState::Wanted | PasteState::Parsing(_)) {
            return true;
        }
        if self.text.trim().is_empty() {
            ctx.warn("paste the model's output first");
        } else if ctx.preview.template().is_none() {
            ctx.warn("the template does not compile: fix it before parsing");
        } else {
            self.state = PasteState::Wanted;
        }
        true
    }
}

impl Dialog for PasteDialog {
    fn scope(&self) -> Scope {
        Scope::Input
    }

    fn handle(&mut self, action: DialogAction, ctx: &mut DialogContext) -> bool {
        match action {
            DialogAction::Type(c) => self.add(&c.to_string()),
            DialogAction::Backspace => {
                self.text.pop();
                self.state = PasteState::Editing;
            }
            DialogAction::Accept => return self.accept(ctx),
            DialogAction::Cancel => return false,
            _ => {}
        }
        true
    }

    fn paste(&mut self, text: &str) {
        self.add(text);
    }

    fn draw(&self, frame: &mut Frame, area: Rect, _name: &str, theme: Theme) {
        paste_view::draw(frame, area, self, theme);
    }

    fn background(&mut self) -> Option<&mut dyn Background> {
        Some(self)
    }

    fn background_ref(&self) -> Option<&dyn Background> {
        Some(self)
    }
}

/// The parser runs on the worker, with the session's `response_template`.
impl Background for PasteDialog {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::Parse && self.state == PasteState::Parsing(reply.generation)
    }

    fn request(&mut self, view: &JobView, said: &mut Said) -> Option<(u64, Job)> {
        if self.state != PasteState::Wanted {
            return None;
        }
        let Some(template) = view.preview.template() else {
            self.state = PasteState::Editing;
            said.warn("the template does not compile: fix it before parsing");
            return None;
        };
        let workspace = view.workspace;
        let dir = workspace.session_dir();
        let lookup = SchemaLookup {
            session: workspace.session.clone(),
            access: crate::tui::files::startup::template_access(&dir),
            dir,
            template: workspace.current_template().cloned(),
        };
        self.state = PasteState::Parsing(view.generation);
        let output = Arc::from(self.text.as_str());
        let lookup = Box::new(lookup);
        let job = Job::Parse {
            template,
            lookup,
            output,
        };
        Some((view.generation, job))
    }

    fn receive(&mut self, reply: Reply, _view: &JobView, _said: &mut Said) -> bool {
        self.state = PasteState::Parsed(match reply.result {
            Ok(Output::Pasted(pasted)) => pasted,
            Ok(_) => return false,
            Err(err) => Pasted::Failed(format!("the prompt before it: {err}")),
        });
        true
    }

    fn pending(&self, _view: &JobView) -> bool {
        matches!(self.state, PasteState::Wanted | PasteState::Parsing(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_beyond_what_a_parse_takes_is_refused_as_it_arrives() {
        let mut dialog = PasteDialog {
            text: "x".repeat(MAX_INPUT_BYTES - 2),
            state: PasteState::Editing,
        };
        dialog.add("ab");
        assert_eq!(dialog.text.len(), MAX_INPUT_BYTES);
        dialog.add("c");
        assert_eq!(
            dialog.text.len(),
            MAX_INPUT_BYTES,
            "the extra byte is not held"
        );
        let PasteState::Parsed(Pasted::Failed(why)) = &dialog.state else {
            panic!("expected a refusal: {:?}", dialog.state);
        };
        assert!(why.contains("more than the 67108864 bytes"), "{why}");
    }
}
