//! The `assert_round_trip` step of `check`: after the prompt passed, every assistant
//! message must parse back into itself with the session's `response_template`
//! (see [`crate::parse::check_round_trip`]).

use std::path::Path;

use super::Outcome;
use crate::catalog::{self, TemplateAccess, TemplateSource};
use crate::parse::{check_round_trip, session_schema, ResponseTemplate};
use crate::session::Session;
use chatplate_render::{CompiledTemplate, Conversation, Limits, RenderControl};

/// The round-trip outcome of a passing fixture that asks for it; other outcomes as they are.
pub(super) fn round_trip_step(
    session: &Session,
    dir: &Path,
    access: &TemplateAccess,
    template: &TemplateSource,
    outcome: Outcome,
    limits: Limits,
) -> Outcome {
    let (true, Outcome::Pass) = (session.assert_round_trip, &outcome) else {
        return outcome;
    };
    match round_trip(session, dir, access, template, limits) {
        Ok(outcome) => outcome,
        Err(problem) => Outcome::Broken(format!("assert_round_trip: {problem}")),
    }
}

fn round_trip(
    session: &Session,
    dir: &Path,
    access: &TemplateAccess,
    template: &TemplateSource,
    limits: Limits,
) -> Result<Outcome, String> {
    let inputs = RoundTripInputs::read(session, dir, access, template, limits)?;
    let control = RenderControl::default();
    Ok(
        match check_round_trip(
            &inputs.compiled,
            &inputs.conversation,
            &inputs.parser,
            &control,
        ) {
            Ok(()) => Outcome::Pass,
            Err(failure) => Outcome::RoundTrip {
                message: failure.message,
                problem: failure.problem,
                expected: failure.expected,
                actual: failure.actual,
            },
        },
    )
}

/// What every round-trip step of `check` (text, stream, tokens) starts from: the
/// session's parser, its conversation and its template compiled.
pub(super) struct RoundTripInputs {
    /// The session's `response_template` (or its model's), loaded.
    pub(super) parser: ResponseTemplate,
    /// The session's conversation, as the template is given it.
    pub(super) conversation: Conversation,
    /// The template, compiled with the fixture's limits.
    pub(super) compiled: CompiledTemplate,
}

impl RoundTripInputs {
    /// Finds the session's schema and prepares the rest; the error says what is missing.
    pub(super) fn read(
        session: &Session,
        dir: &Path,
        access: &TemplateAccess,
        template: &TemplateSource,
        limits: Limits,
    ) -> Result<Self, String> {
        let found = session_schema(session, dir, access, Some(template))
            .map_err(|e| e.to_string())?
            .ok_or(
                "the session has no response_template, and its model's tokenizer_config.json none",
            )?;
        let parser = ResponseTemplate::load(&found.spec)
            .map_err(|e| format!("invalid response_template ({}): {e}", found.from))?;
        let conversation =
            catalog::conversation_for(session, template).map_err(|e| e.to_string())?;
        let compiled =
            CompiledTemplate::compile(&template.source, limits).map_err(|e| e.to_string())?;
        Ok(RoundTripInputs {
            parser,
            conversation,
            compiled,
        })
    }
}
