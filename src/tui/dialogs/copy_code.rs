//! Copy as code (`X`): a small chooser between the three ways to get the shown prompt
//! elsewhere (see `dialogs::code`), with the start of the selected one shown under it.
//! `p`, `c` or `o` copies at once; `↑`/`↓` and `Enter` too.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::tui::action::{DialogAction, Direction, Step};
use crate::tui::context::Effect;
use crate::tui::dialogs::code;
use crate::tui::dialogs::context::DialogContext;
use crate::tui::dialogs::view::dialog_box;
use crate::tui::dialogs::Dialog;
use crate::tui::files::workspace::Workspace;
use crate::tui::keymap::Scope;
use crate::tui::panes::messages::view::truncate;
use crate::tui::theme::Theme;

/// One way to write the session as code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The key that copies it.
    pub key: char,
    /// What it is, in the list.
    pub label: &'static str,
    /// What the status line calls it once copied.
    pub what: &'static str,
    /// The code.
    pub text: String,
}

/// The chooser: the three texts, made when it opened, and the selected one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyCode {
    /// Python, the render command, the request body.
    pub choices: Vec<Choice>,
    /// The selected choice.
    pub cursor: usize,
}

impl CopyCode {
    /// The three texts for the session `workspace` holds, as it is now.
    pub fn new(workspace: &Workspace) -> Self {
        let (session, template) = (&workspace.session, &workspace.template);
        let saved = workspace.path.is_some() && !workspace.dirty;
        let dir = workspace.session_dir();
        let choices = vec![
            Choice {
                key: 'p',
                label: "Python: tokenizer.apply_chat_template(...)",
                what: "the apply_chat_template call",
                text: code::python(session, template),
            },
            Choice {
                key: 'c',
                label: "chatplate render (command line)",
                what: "the chatplate render command",
                text: code::render_command(session, workspace.path.as_deref(), saved, &dir),
            },
            Choice {
                key: 'o',
                label: "OpenAI request body (curl)",
                what: "the curl request",
                text: code::curl(session, template),
            },
        ];
        CopyCode { choices, cursor: 0 }
    }

    /// Copies choice `index` and closes.
    fn copy(&self, index: usize, ctx: &mut DialogContext) -> bool {
        if let Some(choice) = self.choices.get(index) {
            ctx.effect(Effect::Copy {
                text: choice.text.clone(),
                what: choice.what,
            });
        }
        false
    }
}

impl Dialog for CopyCode {
    fn scope(&self) -> Scope {
        Scope::Picker
    }

    fn handle(&mut self, action: DialogAction, ctx: &mut DialogContext) -> bool {
        let last = self.choices.len().saturating_sub(1);
        match action {
            DialogAction::Select(Step::Line(Direction::Up)) => {
                self.cursor = self.cursor.saturating_sub(1);
            }
            DialogAction::Select(Step::Line(Direction::Down)) => {
                self.cursor = (self.cursor + 1).min(last);
            }
            DialogAction::Select(Step::First) => self.cursor = 0,
            DialogAction::Select(Step::Last) => self.cursor = last,
            DialogAction::Type(c) => {
                if let Some(index) = self.choices.iter().position(|choice| choice.key == c) {
                    return self.copy(index, ctx);
                }
            }
            DialogAction::Accept => return self.copy(self.cursor, ctx),
            DialogAction::Cancel => return false,
            _ => {}
        }
        true
    }

    fn draw(&self, frame: &mut Frame, area: Rect, _name: &str, theme: Theme) {
        let title = "Copy as code · p c o or Enter copies · Esc cancel";
        let inner = dialog_box(frame, area, 100, area.height.min(24), title, theme);
        let width = usize::from(inner.width);
        let mut lines: Vec<Line> = (self.choices.iter().enumerate())
            .map(|(index, choice)| {
                let line = Line::from(vec![
                    Span::styled(format!(" {} ", choice.key), theme.key()),
                    Span::raw(truncate(choice.label, width.saturating_sub(3))),
                ]);
                match index == self.cursor {
                    true => line.patch_style(theme.cursor()),
                    false => line,
                }
            })
            .collect();
        lines.push(Line::styled("─".repeat(width), theme.dim()));
        if let Some(choice) = self.choices.get(self.cursor) {
            let room = usize::from(inner.height).saturating_sub(lines.len());
            let start = choice.text.lines().take(room);
            lines.extend(start.map(|line| Line::styled(truncate(line, width), theme.dim())));
        }
        frame.render_widget(Paragraph::new(lines), inner);
    }
}
