//! The paste dialog: a model's raw output (from a server log) becomes a new assistant
//! message. The session's `response_template` parses it on the worker; the dialog shows
//! the message and what the parser could not place (or its error) before it is appended.

use std::sync::Arc;

use chatplate_core::session::Message;
use chatplate_core::worker::parsing::{Pasted, SchemaLookup};
use chatplate_core::worker::{Job, Output, Reply};
use serde_json::Value as Json;

use crate::tui::action::DialogAction;
use crate::tui::app::App;
use crate::tui::dialogs::Overlay;

/// Where the paste dialog is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PasteState {
    /// Taking text; Enter parses it.
    Editing,
    /// On the worker, submitted with this generation.
    Parsing(u64),
    /// The parser's answer; Enter appends a parsed message.
    Parsed(Pasted),
}

/// The paste dialog's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasteDialog {
    /// The output pasted (or typed) so far.
    pub text: String,
    /// What the parser made of it.
    pub state: PasteState,
}

impl PasteDialog {
    /// Takes more text: what was parsed no longer holds.
    pub fn add(&mut self, text: &str) {
        self.text.push_str(text);
        self.state = PasteState::Editing;
    }
}

impl App {
    /// Opens the paste dialog.
    pub(in crate::tui) fn ask_paste(&mut self) {
        self.overlay = Some(Overlay::Paste(PasteDialog {
            text: String::new(),
            state: PasteState::Editing,
        }));
    }

    /// A key in the paste dialog.
    pub(in crate::tui) fn paste_action(&mut self, mut dialog: PasteDialog, action: DialogAction) {
        match action {
            DialogAction::Type(c) => dialog.add(&c.to_string()),
            DialogAction::Backspace => {
                dialog.text.pop();
                dialog.state = PasteState::Editing;
            }
            DialogAction::Accept => match &dialog.state {
                PasteState::Parsed(Pasted::Message { message, .. }) => {
                    return self.append_parsed(message.clone());
                }
                PasteState::Parsing(_) => {}
                _ => self.submit_paste(&mut dialog),
            },
            DialogAction::Cancel => return,
            _ => {}
        }
        self.overlay = Some(Overlay::Paste(dialog));
    }

    fn submit_paste(&mut self, dialog: &mut PasteDialog) {
        if dialog.text.trim().is_empty() {
            return self.warn("paste the model's output first");
        }
        let Some(template) = self.preview.template() else {
            return self.warn("the template does not compile: fix it before parsing");
        };
        let dir = self.workspace.session_dir();
        let lookup = SchemaLookup {
            session: self.workspace.session.clone(),
            access: crate::tui::files::startup::template_access(&dir),
            dir,
            template: crate::tui::app::current_template(&self.workspace).cloned(),
        };
        let generation = self.generation();
        let output = Arc::from(dialog.text.as_str());
        let lookup = Box::new(lookup);
        self.submit_job(
            generation,
            Job::Parse {
                template,
                lookup,
                output,
            },
        );
        dialog.state = PasteState::Parsing(generation);
    }

    /// The parser's answer, if the dialog still waits for it.
    pub(in crate::tui) fn receive_pasted(&mut self, reply: Reply) -> bool {
        let Some(Overlay::Paste(dialog)) = &mut self.overlay else {
            return false;
        };
        if dialog.state != PasteState::Parsing(reply.generation) {
            return false;
        }
        dialog.state = PasteState::Parsed(match reply.result {
            Ok(Output::Pasted(pasted)) => pasted,
            Ok(_) => return false,
            Err(err) => Pasted::Failed(format!("the prompt before it: {err}")),
        });
        true
    }

    /// Whether the dialog waits for the parser.
    pub(in crate::tui) fn paste_pending(&self) -> bool {
        matches!(&self.overlay, Some(Overlay::Paste(d)) if matches!(d.state, PasteState::Parsing(_)))
    }

    /// Appends the parsed message, as one undo step, and selects it.
    fn append_parsed(&mut self, message: Json) {
        let Json::Object(fields) = message else {
            return;
        };
        let at = self.as_one_step(|app| {
            let at = app.workspace.session.messages.len();
            app.workspace.session.messages.push(Message(fields));
            app.edited();
            at
        });
        self.messages.select_row(at);
        self.prompt.follow();
        self.notify(format!("added message {} from the pasted output", at + 1));
    }
}
