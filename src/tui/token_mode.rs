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

use chatplate_core::tokens::{count_in_ranges, Tokenized};
use chatplate_core::worker::tokenizing::{TokenizedPrompt, TokenizerChoice};
use chatplate_core::worker::{Job, Output, Reply};
use chatplate_render::{RenderError, RenderErrorKind};

use super::action::Direction;
use super::app::App;

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

impl App {
    /// Turns token mode on or off; on, asks for the tokens of the shown prompt.
    pub(super) fn toggle_tokens(&mut self) {
        self.token_mode.enabled = !self.token_mode.enabled;
        self.token_mode.requested = 0;
        self.token_mode.error = None;
        if self.token_mode.enabled {
            self.request_tokens();
        }
    }

    /// Where the session's tokenizer is: its `tokenizer` field, else beside the template.
    fn tokenizer_choice(&self) -> TokenizerChoice {
        let workspace = &self.workspace;
        TokenizerChoice {
            explicit: (workspace.session.tokenizer.as_ref())
                .map(|path| workspace.session_dir().join(path)),
            template_file: workspace.template.watched_path().map(Into::into),
        }
    }

    /// After a render of the current session arrived: asks for its tokens (token mode).
    pub(super) fn request_tokens(&mut self) {
        let generation = self.preview.generation;
        let mode = &self.token_mode;
        if !mode.enabled || self.is_stale() || mode.requested >= generation {
            return;
        }
        let Ok(prompt) = &self.preview.output else {
            return;
        };
        let job = Job::Tokenize {
            choice: self.tokenizer_choice(),
            prompt: Arc::clone(prompt),
        };
        self.token_mode.requested = generation;
        self.token_mode.error = None;
        self.submit_job(generation, job);
    }

    /// Takes a tokenize reply in; returns whether anything shown changed.
    pub(super) fn receive_tokens(&mut self, reply: Reply) -> bool {
        let current = reply.generation == self.preview.generation;
        match reply.result {
            Ok(Output::Tokens(tokens)) => {
                if reply.generation >= self.token_mode.generation {
                    self.token_mode.tokens = Some(tokens);
                    self.token_mode.generation = reply.generation;
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
                    self.token_mode.error = Some(err.message);
                }
                current
            }
        }
    }

    /// Whether tokens of the shown render are still on their way.
    pub fn tokens_pending(&self) -> bool {
        let mode = &self.token_mode;
        mode.enabled
            && mode.requested == self.preview.generation
            && mode.generation < self.preview.generation
            && mode.error.is_none()
    }

    /// The tokens of the shown prompt, in token mode, once they have arrived.
    pub fn shown_tokens(&self) -> Option<&TokenizedPrompt> {
        let mode = &self.token_mode;
        let tokens = mode.tokens.as_deref().filter(|_| mode.enabled)?;
        let current = mode.generation == self.preview.generation
            && self.preview.error().is_none()
            && tokens.prompt_len == self.preview.text().len();
        current.then_some(tokens)
    }

    /// The byte range of the token covering `offset`, in token mode.
    pub(super) fn token_range(&self, offset: usize) -> Option<Range<usize>> {
        let tokenized = &self.shown_tokens()?.tokenized;
        let token = tokenized.tokens[tokenized.token_at(offset)?];
        Some(token.start..token.end)
    }

    /// The start of the next (or previous) token from `offset`, in token mode.
    pub(super) fn token_boundary(&self, offset: usize, direction: Direction) -> Option<usize> {
        let tokens = &self.shown_tokens()?.tokenized.tokens;
        let next = match direction {
            Direction::Down => tokens.iter().map(|t| t.start).find(|&s| s > offset),
            Direction::Up => tokens.iter().rev().map(|t| t.start).find(|&s| s < offset),
        };
        Some(next.unwrap_or(offset))
    }

    /// Tokens per message (wholly inside its bytes), for the message list: exact with
    /// attribution, else from the quick content search. Only rows on screen ask.
    pub fn message_tokens(&self, index: usize) -> Option<usize> {
        let tokenized = &self.shown_tokens()?.tokenized;
        let ranges = match self.attribution() {
            Some(a) => a.attribution.ranges_of(index),
            None => self.preview.span(index).cloned().into_iter().collect(),
        };
        let counts = count_in_ranges(tokenized, &ranges);
        Some(counts.iter().map(|c| c.inside).sum())
    }

    /// The prompt title's token note: the total and the token under the cursor, or
    /// what the mode is waiting for.
    pub fn token_note(&self) -> String {
        if !self.token_mode.enabled {
            return String::new();
        }
        if let Some(error) = &self.token_mode.error {
            return format!(" · tokens: {}", first_line(error));
        }
        let Some(shown) = self.shown_tokens() else {
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
        note.push_str(&format!(" · {} tokens", shown.tokenized.len()));
        if let Some(under) = self.cursor_token(shown) {
            note.push_str(&format!(" · {under}"));
        }
        note
    }

    /// `#id "string"` of the token under the prompt cursor.
    fn cursor_token(&self, shown: &TokenizedPrompt) -> Option<String> {
        let index = shown.tokenized.token_at(self.cursor_offset()?)?;
        let id = shown.tokenized.tokens[index].id;
        let string = shown.tokenizer.token_string(id).unwrap_or_default();
        Some(format!("#{id} {string:?}"))
    }
}

/// The first line of an error, for a title.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// The tokens on screen for styling, when token mode has them.
pub fn tokenized(app: &App) -> Option<&Tokenized> {
    app.shown_tokens().map(|t| &t.tokenized)
}
