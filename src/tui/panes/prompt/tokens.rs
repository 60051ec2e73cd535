//! Token mode in the prompt pane: the shown prompt as the session's tokenizer sees it.
//!
//! `t` in the prompt pane toggles it. While on, every render of the current session is
//! followed by a tokenize request ([`chatplate_core::worker::Job::Tokenize`]; coalesced, and
//! cancelled by a newer render), so tokenizing never runs on the UI thread. Tokens show
//! with alternating shades (a `¦` before each token under `NO_COLOR`), specials are the
//! ones the tokenizer says are special, the cursor moves by tokens, and the title gives
//! the total and the token under the cursor. The message list counts tokens per message.

use std::ops::Range;
use std::sync::Arc;

use chatplate_core::tokens::{count_in_ranges, TokenizerError};
use chatplate_core::worker::tokenizing::{TokenizedPrompt, TokenizerChoice};
use chatplate_core::worker::{Job, Output, Reply};
use chatplate_render::{RenderError, RenderErrorKind};

use crate::tui::action::Direction;
use crate::tui::files::workspace::Workspace;
use crate::tui::preview::Preview;
use chatplate_core::worker::JobKind;

use crate::tui::jobs::Background;

use crate::tui::jobs::JobView;

use crate::tui::jobs::Said;

/// The app's token mode state.
#[derive(Debug, Default)]
pub struct TokenMode {
    /// Token mode is on.
    pub enabled: bool,
    /// The latest tokens received (possibly of an older prompt).
    pub tokens: Option<Arc<TokenizedPrompt>>,
    /// The generation `tokens` answers.
    pub generation: u64,
    /// The generation last asked for (0: none).
    pub requested: u64,
    /// Why tokenizing the shown prompt failed (no tokenizer, a bad file), if it did.
    pub error: Option<String>,
}

impl TokenMode {
    /// Turns token mode on or off (asking again for the tokens of what is shown).
    pub fn toggle(&mut self) {
        self.enabled = !self.enabled;
        self.requested = 0;
        self.error = None;
    }

    /// After a render of the current session arrived (not `stale`): the job that asks
    /// for its tokens, with its generation, in token mode. `choice` says where the
    /// session's tokenizer is.
    pub fn request(
        &mut self,
        preview: &Preview,
        stale: bool,
        choice: impl FnOnce() -> TokenizerChoice,
    ) -> Option<(u64, Job)> {
        let generation = preview.generation;
        if !self.enabled || stale || self.requested >= generation {
            return None;
        }
        let prompt = preview.output.as_ref().ok()?;
        let job = Job::Tokenize {
            choice: choice(),
            prompt: Arc::clone(prompt),
            template: preview.template(),
        };
        self.requested = generation;
        self.error = None;
        Some((generation, job))
    }

    /// Takes a tokenize reply in; returns whether anything shown changed (the shown
    /// render is of generation `shown`).
    pub fn receive(&mut self, reply: Reply, shown: u64) -> bool {
        let current = reply.generation == shown;
        match reply.result {
            Ok(Output::Tokens(tokens)) => {
                if reply.generation >= self.generation {
                    self.tokens = Some(tokens);
                    self.generation = reply.generation;
                }
                current
            }
            Ok(_) => false,
            Err(RenderError {
                kind: RenderErrorKind::Cancelled,
                ..
            }) => false,
            Err(err) => {
                if current {
                    self.error = Some(err.message);
                }
                current
            }
        }
    }

    /// Whether tokens of the shown render (of generation `shown`) are still on their way.
    pub fn pending(&self, shown: u64) -> bool {
        self.enabled && self.requested == shown && self.generation < shown && self.error.is_none()
    }

    /// The tokens of the shown prompt, in token mode, once they have arrived.
    pub fn shown(&self, preview: &Preview) -> Option<&TokenizedPrompt> {
        let tokens = self.tokens.as_deref().filter(|_| self.enabled)?;
        let current = self.generation == preview.generation
            && preview.error().is_none()
            && tokens.prompt_len == preview.text().len();
        current.then_some(tokens)
    }

    /// The byte range of the token covering `offset`, in token mode.
    pub fn token_range(&self, preview: &Preview, offset: usize) -> Option<Range<usize>> {
        let tokenized = &self.shown(preview)?.tokenized;
        let token = tokenized.tokens[tokenized.token_at(offset)?];
        Some(token.start..token.end)
    }

    /// The start of the next (or previous) token from `offset`, in token mode.
    pub fn token_boundary(
        &self,
        preview: &Preview,
        offset: usize,
        direction: Direction,
    ) -> Option<usize> {
        let tokens = &self.shown(preview)?.tokenized.tokens;
        let next = match direction {
            Direction::Down => tokens.iter().map(|t| t.start).find(|&s| s > offset),
            Direction::Up => tokens.iter().rev().map(|t| t.start).find(|&s| s < offset),
        };
        Some(next.unwrap_or(offset))
    }

    /// Tokens inside `ranges` of the shown prompt (a message's bytes), in token mode.
    pub fn count_in(&self, preview: &Preview, ranges: &[Range<usize>]) -> Option<usize> {
        let tokenized = &self.shown(preview)?.tokenized;
        let counts = count_in_ranges(tokenized, ranges);
        Some(counts.iter().map(|c| c.inside).sum())
    }

    /// The prompt title's token note: the total and the token under the prompt cursor
    /// (at `cursor`), or what the mode is waiting for.
    pub fn note(&self, preview: &Preview, cursor: Option<usize>) -> String {
        if !self.enabled {
            return String::new();
        }
        if let Some(error) = &self.error {
            // The pane's title is narrow: no tokenizer at all is said in two words (the
            // status line has where one is looked for).
            let unspecified = TokenizerError::Unspecified.to_string();
            let said = match *error == unspecified {
                true => "no tokenizer",
                false => first_line(error),
            };
            return format!(" · tokens: {said}");
        }
        let Some(shown) = self.shown(preview) else {
            return " · tokenizing…".into();
        };
        // The warning first: a narrow title cuts the end.
        let injected = (shown.injections.iter())
            .filter(|i| i.special && i.active)
            .count();
        let mut note = match injected {
            0 => String::new(),
            n => format!(" · ⚠ {n} injected"),
        };
        let mask = shown.mask.as_ref();
        // The all-zero mask is a standing fact (inspect and `chatplate tokens` say it
        // too): first with the other warning, where 80 columns do not cut it.
        if mask.is_some_and(|m| m.silently_empty()) {
            note.push_str(" · ⚠ 0 trained");
        }
        note.push_str(&format!(" · {} tokens", shown.tokenized.len()));
        if let Some(mask) = mask.filter(|m| m.trained_tokens > 0) {
            note.push_str(&format!(" · {} trained", mask.trained_tokens));
        }
        if let Some(under) = cursor.and_then(|offset| cursor_token(shown, offset)) {
            note.push_str(&format!(" · {under}"));
        }
        note
    }
}

/// Where the session's tokenizer is: its `tokenizer` field, else beside the template.
pub fn tokenizer_choice(workspace: &Workspace) -> TokenizerChoice {
    // A session may come from anywhere: the tokenizer it names follows the rule for its
    // template path (inside its folder or an allowed root), as in `chatplate check`.
    TokenizerChoice {
        explicit: (workspace.session.tokenizer.as_ref())
            .map(|path| workspace.session_dir().join(path)),
        written: workspace.session.tokenizer.clone(),
        access: Some(crate::tui::files::startup::template_access(
            &workspace.session_dir(),
        )),
        template_file: workspace.template.watched_path().map(Into::into),
    }
}

/// `#id "string"` of the token at `offset`.
fn cursor_token(shown: &TokenizedPrompt, offset: usize) -> Option<String> {
    let index = shown.tokenized.token_at(offset)?;
    let id = shown.tokenized.tokens[index].id;
    let string = shown.tokenizer.token_string(id).unwrap_or_default();
    Some(format!("#{id} {string:?}"))
}

/// The first line of an error, for a title.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

impl Background for TokenMode {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::Tokenize
    }

    /// In token mode, once a render of the current session arrived: its tokens.
    fn request(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        let choice = || tokenizer_choice(view.workspace);
        TokenMode::request(self, view.preview, view.stale(), choice)
    }

    /// A new reason why there are no tokens (no tokenizer, a bad file) also goes to the
    /// status line, which has the width the prompt pane's title lacks.
    fn receive(&mut self, reply: Reply, view: &JobView, said: &mut Said) -> bool {
        let before = self.error.clone();
        let changed = TokenMode::receive(self, reply, view.preview.generation);
        match &self.error {
            Some(error) if before.as_ref() != Some(error) => said.warn(error.clone()),
            _ => {}
        }
        changed
    }

    fn pending(&self, view: &JobView) -> bool {
        TokenMode::pending(self, view.preview.generation)
    }
}
