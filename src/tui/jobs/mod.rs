//! Work the render worker does in the background for what the screen shows:
//! attribution, tokens, values the template ignores, round trips, generation spans, the
//! Templates pane's answers, the other side of a comparison. Each is a state that
//! implements [`Background`]; the app core asks every one of them what it wants after a
//! render and after each batch of input, and hands each worker reply to the one that
//! takes it (`Message::Worker`, applied by `App::update`).
//!
//! A new background job is a file with its state and its `Background` impl, plus one
//! line in [`jobs!`] below. A job tells the app what it cannot do itself through
//! [`Said`]: the status line, file work, and [`JobRequest`]s. Besides these jobs, the
//! Templates pane, the opener ([`crate::tui::dialogs::open::Opening`]) and the open
//! dialog (the paste dialog's parser) are asked the same way.

pub mod attribution;
pub mod attribution_view;
pub mod generation_marks;
pub mod ignored;
pub mod knobs;
pub mod matrix;
pub mod matrix_view;
pub mod per_render;
pub mod round_trips;
pub mod turn_cost;

use chatplate_core::catalog::TemplateSource;
use chatplate_core::worker::{Job, Reply};

use crate::tui::context::Effect;
use crate::tui::files::workspace::Workspace;
use crate::tui::jobs::attribution::InView;
use crate::tui::panes::messages::fields::Row;
use crate::tui::panes::prompt::PromptPane;
use crate::tui::preview::Preview;
use crate::tui::screen::Screen;
use crate::tui::screen::Status;

/// A view fed by the render worker: what it asks for and how it takes the answer in.
pub trait Background {
    /// Whether `reply` is an answer to one of its jobs.
    fn takes(&self, reply: &Reply, view: &JobView) -> bool;

    /// A new render of the session arrived: the job to ask for it, with its id.
    fn after_render(&mut self, _view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        None
    }

    /// Asked after every batch of input and every reply: a job it still wants.
    fn request(&mut self, _view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        None
    }

    /// What the app asks: [`Background::request`]'s job, or several for a job that
    /// keeps more than one in flight (the engine matrix: one per engine).
    fn request_all(&mut self, view: &JobView, said: &mut Said) -> Vec<(u64, Job)> {
        self.request(view, said).into_iter().collect()
    }

    /// Takes an answer in; returns whether anything shown changed.
    fn receive(&mut self, reply: Reply, view: &JobView, said: &mut Said) -> bool;

    /// Whether an answer for what is shown is still on its way (tests wait for it).
    fn pending(&self, view: &JobView) -> bool;
}

/// What a background job reads of the app.
#[derive(Debug, Clone, Copy)]
pub struct JobView<'a> {
    /// The shown render.
    pub preview: &'a Preview,
    /// The session and its files.
    pub workspace: &'a Workspace,
    /// The generation of the current session (newer than the shown render's while a
    /// render is on its way).
    pub generation: u64,
    /// Focus and terminal size.
    pub screen: Screen,
    /// The selected row of the message list.
    pub row: Row,
    /// The selected message's index in the list (the list's cursor).
    pub selected: usize,
    /// The prompt pane (where its cursor and scroll are).
    pub prompt: &'a PromptPane,
}

impl JobView<'_> {
    /// Whether the shown prompt is older than the session.
    pub fn stale(&self) -> bool {
        self.preview.generation < self.generation
    }

    /// What the user is looking at: the message under the prompt cursor, else at the
    /// top of a prompt view scrolled away from the selection, else the selected one.
    pub fn in_view(&self) -> InView {
        InView::new(self.message_in_view(), self.screen.height)
    }

    fn message_in_view(&self) -> usize {
        let preview = self.preview;
        let offset = self.prompt.cursor_offset(preview).or_else(|| {
            let line = self.prompt.top?;
            preview.line_starts.get(line).copied()
        });
        let count = self.workspace.session.messages.len();
        let selected = self.selected.min(count.saturating_sub(1));
        let Some(offset) = offset else {
            return selected;
        };
        (0..count)
            .rev()
            .find(|&i| preview.span(i).is_some_and(|span| span.start <= offset))
            .unwrap_or(selected)
    }
}

/// What a job says besides changing its own state: a status line message, file work,
/// changes only the app core can make.
#[derive(Debug, Default)]
pub struct Said {
    /// The status line's new message.
    pub status: Option<Status>,
    /// File work for the event loop (opening what an answer named).
    pub effect: Option<Effect>,
    /// What the app core is to do with the answer, in order.
    pub requests: Vec<JobRequest>,
}

/// A change a job's answer asks of the app core (the Templates pane and the session
/// are not the job's to change).
#[derive(Debug)]
pub enum JobRequest {
    /// Add these templates to the Templates pane's list where they are not yet, keeping
    /// its selection.
    AddTemplates(Vec<TemplateSource>),
    /// Add this template to the list (or refresh it there) and select it.
    Remember(TemplateSource),
    /// Use this template for the session: an unsaved change.
    UseTemplate(TemplateSource),
    /// The template's knobs changed: the settings' Knobs section shows these.
    Knobs(Vec<knobs::KnobRow>),
    /// Send the render the session needs now: a change that came from the worker, not
    /// from a key, would otherwise wait for the event loop's next wake-up.
    Render,
    /// Ask the user this (the session to open has unsaved changes to save or discard).
    Ask(Box<crate::tui::dialogs::Overlay>),
}

impl Said {
    /// Shows `text` in the status line.
    pub fn notify(&mut self, text: impl Into<String>) {
        self.status = Some(Status::info(text));
    }

    /// Shows `text` in the status line as an error.
    pub fn warn(&mut self, text: impl Into<String>) {
        self.status = Some(Status::error(text));
    }

    /// Asks the app core for `request`.
    pub fn ask(&mut self, request: JobRequest) {
        self.requests.push(request);
    }
}

/// Declares [`Jobs`], the one struct of the background jobs' states, in the order the
/// worker is asked.
macro_rules! jobs {
    ($($(#[$doc:meta])* $field:ident: $state:ty,)*) => {
        /// The background jobs' states.
        #[derive(Debug, Default)]
        pub struct Jobs {
            $($(#[$doc])* pub $field: $state,)*
        }

        impl Jobs {
            /// Every job, in the order they ask the worker.
            pub fn each(&mut self) -> Vec<&mut dyn Background> {
                vec![$(&mut self.$field),*]
            }

            /// Every job, read only.
            pub fn each_ref(&self) -> Vec<&dyn Background> {
                vec![$(&self.$field),*]
            }
        }
    };
}

jobs! {
    /// The other side of a comparison and the template preview; first, since it is
    /// what the user looks at.
    sides: crate::tui::compare::Sides,
    /// Which message produced which prompt bytes.
    explanation: attribution::Explanation,
    /// Token mode's tokens.
    token_mode: crate::tui::panes::prompt::tokens::TokenMode,
    /// The assistant messages' round trips.
    round_trips: round_trips::RoundTripBadges,
    /// Where the `{% generation %}` blocks land in the prompt.
    generation_marks: generation_marks::GenerationMarksState,
    /// Values the template ignores.
    ignored: ignored::IgnoredValues,
    /// Every configured engine's verdict on the session (the engine matrix).
    matrix: matrix::EngineMatrix,
    /// The template's knobs on this session (the settings' Knobs section).
    knobs: knobs::KnobsState,
    /// What each turn makes a prefix cache process again (the `$` column).
    turn_cost: turn_cost::TurnCostState,
}
