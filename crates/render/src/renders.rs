//! The ways to render a [`CompiledTemplate`]: on the calling thread, cancellable, under a
//! deadline on a render thread of its own, tracking `{% generation %}` blocks, and the
//! inspector's renders of prepared message values.

use std::sync::Arc;

use minijinja::value::Value;

use crate::context::{build_context, MessageSource};
use crate::{
    continuation, generation, watchdog, CancelToken, CompiledTemplate, Conversation,
    ConversationInput, RenderControl, RenderError, TrackedRender,
};

impl CompiledTemplate {
    /// Renders `conversation` exactly as `apply_chat_template(..., tokenize=False)` would,
    /// on the calling thread. Bounded by the step, output and byte budgets; for
    /// untrusted templates prefer [`CompiledTemplate::render_controlled`], which also
    /// keeps a deadline and can always be abandoned.
    pub fn render(&self, conversation: &Conversation) -> Result<String, RenderError> {
        let input = self.input(conversation)?;
        let result = self.run(
            input.context,
            conversation.items(),
            input.clock,
            &CancelToken::new(),
            &Arc::default(),
        );
        finish(result, input.continued)
    }

    /// Like [`CompiledTemplate::render_controlled`] with no deadline: gives up with
    /// [`RenderErrorKind::Cancelled`](crate::RenderErrorKind::Cancelled) once `cancel` is
    /// cancelled.
    pub fn render_cancellable<'a>(
        &self,
        conversation: impl Into<ConversationInput<'a>>,
        cancel: &CancelToken,
    ) -> Result<String, RenderError> {
        let control = RenderControl::new(cancel.clone()).without_deadline();
        self.render_controlled(conversation, &control)
    }

    /// Renders on a thread of its own, and returns as soon as the render finishes, is
    /// cancelled, runs past its deadline (the template's
    /// [`Limits::deadline`](crate::Limits::deadline) unless the control names another,
    /// grown for the conversation: [`Limits::deadline_for`](crate::Limits::deadline_for))
    /// or goes over its byte budget. A stopped render stops at its next checkpoint (every
    /// loop item, every `{{ }}`, every filter or method call) and frees its memory; see
    /// [`watchdog`].
    ///
    /// Takes the conversation borrowed, owned or in an `Arc` (see [`ConversationInput`]:
    /// given owned or shared, the render thread builds its template values itself).
    pub fn render_controlled<'a>(
        &self,
        conversation: impl Into<ConversationInput<'a>>,
        control: &RenderControl,
    ) -> Result<String, RenderError> {
        if control.cancel.is_cancelled() {
            return Err(RenderError::cancelled());
        }
        let (input, items) = self.thread_input(conversation.into())?;
        watchdog::run_on_own_thread(self, input, items, control)
    }

    /// What a render thread renders for `conversation`, and its input items.
    fn thread_input(
        &self,
        conversation: ConversationInput<'_>,
    ) -> Result<(watchdog::RenderInput, usize), RenderError> {
        let items = conversation.items();
        let input = match conversation {
            ConversationInput::Borrowed(conversation) => self.input(conversation)?,
            ConversationInput::Parts { settings, messages } => {
                self.input_from(settings, MessageSource::Objects(&messages))?
            }
            ConversationInput::Shared(conversation) => {
                return Ok((watchdog::RenderInput::Conversation(conversation), items));
            }
        };
        let input = watchdog::RenderInput::Values {
            context: input.context,
            clock: input.clock,
            continued: input.continued,
        };
        Ok((input, items))
    }

    /// Renders like [`CompiledTemplate::render_controlled`] and also returns where the
    /// template's `{% generation %}` blocks landed, as transformers records them for
    /// `return_assistant_tokens_mask=True` (see [`GenerationSpan`](crate::GenerationSpan)).
    /// A template whose source never says `generation` renders as usual, with no spans and
    /// no recording cost. transformers records blocks whatever its tag test
    /// ([`has_generation_tag`](crate::has_generation_tag)) says (it only logs a warning), so
    /// `{%+ generation %}` is recorded too. Like transformers, refuses
    /// `continue_final_message`.
    pub fn render_tracked<'a>(
        &self,
        conversation: impl Into<ConversationInput<'a>>,
        control: &RenderControl,
    ) -> Result<TrackedRender, RenderError> {
        let conversation = conversation.into();
        if conversation
            .conversation()
            .continue_final_message
            .field()
            .is_some()
        {
            return Err(RenderError::input(
                "continue_final_message is not compatible with return_assistant_tokens_mask.",
            ));
        }
        if !self.inner.source.contains("generation") {
            let prompt = self.render_controlled(conversation, control)?;
            return Ok(TrackedRender::untracked(prompt));
        }
        if control.cancel.is_cancelled() {
            return Err(RenderError::cancelled());
        }
        let (input, items) = self.thread_input(conversation)?;
        let (prompt, raw) =
            watchdog::run_recording_on_own_thread(self, input, items, control, true)?;
        let spans = generation::in_chars(&prompt, &raw);
        Ok(TrackedRender {
            prompt,
            spans,
            has_generation_tag: self.has_generation_tag(),
            has_generation_block: self.has_generation_block(),
        })
    }

    /// Renders `messages` (`count` of them, already template values) with
    /// `conversation`'s tools, documents and variables, on a render thread of its own
    /// (see [`watchdog`]): the inspector's prefix and perturbation renders.
    pub(crate) fn render_values(
        &self,
        conversation: &Conversation,
        messages: (Value, usize),
        add_generation_prompt: bool,
        cancel: &CancelToken,
    ) -> Result<String, RenderError> {
        // The inspector bounds all its renders together, through the token.
        let control = RenderControl::new(cancel.clone()).without_deadline();
        self.render_values_controlled(conversation, messages, add_generation_prompt, &control)
    }

    /// [`CompiledTemplate::render_values`] under `control`.
    pub(crate) fn render_values_controlled(
        &self,
        conversation: &Conversation,
        messages: (Value, usize),
        add_generation_prompt: bool,
        control: &RenderControl,
    ) -> Result<String, RenderError> {
        if control.cancel.is_cancelled() {
            return Err(RenderError::cancelled());
        }
        let (messages, count) = messages;
        let items = count
            + conversation.tools.as_ref().map_or(0, Vec::len)
            + conversation.documents.as_ref().map_or(0, Vec::len);
        let clock = crate::context::render_clock(conversation);
        let context = build_context(conversation, messages, add_generation_prompt)?;
        watchdog::run_on_own_thread(
            self,
            watchdog::RenderInput::Values {
                context,
                clock,
                continued: None,
            },
            items,
            control,
        )
    }
}

/// The prompt, cut where the continued message ends when one is continued.
pub(crate) fn finish(
    rendered: Result<String, RenderError>,
    continued: Option<String>,
) -> Result<String, RenderError> {
    match (rendered, continued) {
        (Ok(prompt), Some(final_text)) => continuation::cut_at_tag(prompt, &final_text),
        (result, _) => result,
    }
}
