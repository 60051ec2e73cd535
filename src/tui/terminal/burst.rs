//! Typed bursts: plain characters that reach the field editor in one batch of input (fast
//! typing over a slow link, a paste in a terminal without bracketed paste) are inserted
//! as one piece. The editor re-wraps its whole text after every edit, so a 200-character
//! burst costs one re-wrap and one session update instead of 200.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::tui::action::Action;

use crate::tui::app::App;
use crate::tui::context::Effect;
use crate::tui::keymap::Scope;

/// Characters collected for the editor, not inserted yet.
#[derive(Debug, Default)]
pub struct Burst {
    text: String,
    /// The last key was a carriage return (Enter) for the editor: a line feed right
    /// after it is the second half of one `\r\n` line break.
    after_return: bool,
}

impl Burst {
    /// Collects `key` when it is text for the editor (true); otherwise the caller
    /// handles it, after [`Burst::flush`]. Enter inside a burst is a newline, and so is
    /// Ctrl+J anywhere: it is the line feed byte, which a terminal without bracketed paste
    /// sends for a pasted line break (the editor makes it a newline too). A line feed
    /// right after Enter completes a pasted `\r\n`, one line break, as a bracketed
    /// paste's `\r\n` is (and as Python and Jinja2 count it).
    pub fn push(&mut self, app: &App, key: &KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        let after_return = std::mem::take(&mut self.after_return);
        if app.scope() != Scope::Editor {
            return false;
        }
        let mods = key.modifiers;
        let plain = !mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let text = match key.code {
            KeyCode::Char(c) if plain => c,
            KeyCode::Enter if plain => {
                self.after_return = true;
                if self.text.is_empty() {
                    // First in the batch, Enter is a key (the editor breaks the line).
                    return false;
                }
                '\n'
            }
            KeyCode::Char('j') if mods == KeyModifiers::CONTROL && after_return => return true,
            KeyCode::Char('j') if mods == KeyModifiers::CONTROL => '\n',
            _ => return false,
        };
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

    /// An app on the example session, not editing.
    fn app() -> App {
        let dir = std::env::temp_dir();
        let template = chatplate_core::catalog::default_template();
        let session =
            crate::tui::panes::messages::conversation::example_session(template.reference(&dir));
        let workspace = crate::tui::files::workspace::Workspace::new(session, None, template, dir);
        App::new(workspace, Vec::new())
    }

    /// An app with the selected message's content in the editor.
    fn editing() -> App {
        let mut app = app();
        app.update(Action::Message(
            crate::tui::action::MessageAction::EditContent,
        ));
        app
    }

    #[test]
    fn only_editor_text_is_collected() {
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        let ctrl_s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
        let mut burst = Burst::default();
        assert!(!burst.push(&app(), &key(KeyCode::Char('a'))), "not editing");
        let mut app = editing();
        assert!(
            !burst.push(&app, &key(KeyCode::Enter)),
            "Enter first is a key"
        );
        assert!(burst.push(&app, &key(KeyCode::Char('a'))));
        assert!(burst.push(&app, &key(KeyCode::Enter)));
        assert!(burst.push(&app, &key(KeyCode::Char('b'))));
        assert!(!burst.push(&app, &ctrl_s));
        burst.flush(&mut app);
        let text = app.editor().unwrap().text();
        assert!(text.ends_with("a\nb"), "{text:?}");
    }

    /// A line feed is Ctrl+J to the key reader: in an unbracketed paste it is a line
    /// break, first in the burst too.
    #[test]
    fn line_feeds_are_newlines() {
        let ctrl_j = KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL);
        let mut app = editing();
        let before = app.editor().unwrap().text();
        let mut burst = Burst::default();
        assert!(burst.push(&app, &ctrl_j), "a line feed first");
        assert!(burst.push(&app, &KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE)));
        assert!(burst.push(&app, &ctrl_j));
        burst.flush(&mut app);
        let text = app.editor().unwrap().text();
        assert_eq!(text, format!("{before}\nx\n"));
    }

    /// An unbracketed paste of `a\r\nb` arrives as `a`, Enter, Ctrl+J, `b`: one line
    /// break, as the bracketed paste of the same text gives; also when the `\r\n` comes
    /// first, where Enter is handled as a key.
    #[test]
    fn a_pasted_crlf_is_one_line_break() {
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        let ctrl_j = KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL);
        let mut app = editing();
        let before = app.editor().unwrap().text();
        let mut burst = Burst::default();
        for event in [
            key(KeyCode::Char('a')),
            key(KeyCode::Enter),
            ctrl_j,
            key(KeyCode::Char('b')),
            key(KeyCode::Enter),
            key(KeyCode::Enter),
        ] {
            assert!(burst.push(&app, &event), "{event:?}");
        }
        burst.flush(&mut app);
        let text = app.editor().unwrap().text();
        assert_eq!(text, format!("{before}a\nb\n\n"));
        let mut first = Burst::default();
        assert!(
            !first.push(&app, &key(KeyCode::Enter)),
            "Enter first is a key"
        );
        assert!(first.push(&app, &ctrl_j), "its line feed is taken");
        assert!(first.is_empty(), "and adds no second line break");
    }
}
