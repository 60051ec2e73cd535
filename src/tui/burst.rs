//! Typed bursts: plain characters that reach the field editor in one batch of input (fast
//! typing over a slow link, a paste in a terminal without bracketed paste) are inserted
//! as one piece. The editor re-wraps its whole text after every edit, so a 200-character
//! burst costs one re-wrap and one session update instead of 200.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::action::{Action, Effect};
use super::app::App;
use super::keymap::Scope;

/// Characters collected for the editor, not inserted yet.
#[derive(Debug, Default)]
pub struct Burst {
    text: String,
}

impl Burst {
    /// Collects `key` when it is text for the editor (true); otherwise the caller
    /// handles it, after [`Burst::flush`]. Enter inside a burst is a newline.
    pub fn push(&mut self, app: &App, key: &KeyEvent) -> bool {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let text = match key.code {
            KeyCode::Char(c) if plain => c,
            KeyCode::Enter if plain && !self.text.is_empty() => '\n',
            _ => return false,
        };
        if key.kind == KeyEventKind::Release || app.scope() != Scope::Editor {
            return false;
        }
        self.text.push(text);
        true
    }

    /// Whether nothing is collected.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Inserts what was collected, as if pasted.
    pub fn flush(&mut self, app: &mut App) -> Option<Effect> {
        if self.text.is_empty() {
            return None;
        }
        app.update(Action::Paste(std::mem::take(&mut self.text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_editor_text_is_collected() {
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        let ctrl_s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
        let dir = std::env::temp_dir();
        let template = chatplate_core::catalog::default_template();
        let session = super::super::conversation::example_session(template.reference(&dir));
        let workspace = super::super::workspace::Workspace::new(session, None, template, dir);
        let mut app = App::new(workspace, Vec::new());
        let mut burst = Burst::default();
        assert!(!burst.push(&app, &key(KeyCode::Char('a'))), "not editing");
        app.update(Action::Message(
            super::super::action::MessageAction::EditContent,
        ));
        assert!(
            !burst.push(&app, &key(KeyCode::Enter)),
            "Enter first is a key"
        );
        assert!(burst.push(&app, &key(KeyCode::Char('a'))));
        assert!(burst.push(&app, &key(KeyCode::Enter)));
        assert!(burst.push(&app, &key(KeyCode::Char('b'))));
        assert!(!burst.push(&app, &ctrl_s));
        burst.flush(&mut app);
        let text = app.editor.as_ref().unwrap().text();
        assert!(text.ends_with("a\nb"), "{text:?}");
    }
}
