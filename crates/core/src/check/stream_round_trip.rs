//! The `assert_stream_round_trip` step of `check`: after the prompt passed, every
//! assistant message's generated text, streamed in several chunkings, must parse as it
//! does whole (see [`crate::parse::check_stream_round_trip`]).

use std::path::Path;

use super::Outcome;
use crate::catalog::{self, TemplateAccess, TemplateSource};
use crate::parse::{check_stream_round_trip, session_schema, ResponseTemplate};
use crate::session::Session;
use chatplate_render::{CompiledTemplate, Limits, RenderControl};

/// The streaming outcome of a passing fixture that asks for it; other outcomes as they are.
pub(super) fn step(
    session: &Session,
    dir: &Path,
    access: &TemplateAccess,
    template: &TemplateSource,
    outcome: Outcome,
    limits: Limits,
) -> Outcome {
    let (true, Outcome::Pass) = (session.assert_stream_round_trip, &outcome) else {
        return outcome;
    };
    match streamed(session, dir, access, template, limits) {
        Ok(outcome) => outcome,
        Err(problem) => Outcome::Broken(format!("assert_stream_round_trip: {problem}")),
    }
}

fn streamed(
    session: &Session,
    dir: &Path,
    access: &TemplateAccess,
    template: &TemplateSource,
    limits: Limits,
) -> Result<Outcome, String> {
    let found = session_schema(session, dir, access, Some(template))
        .map_err(|e| e.to_string())?
        .ok_or(
            "the session has no response_template, and its model's tokenizer_config.json none",
        )?;
    let parser = ResponseTemplate::load(&found.spec)
        .map_err(|e| format!("invalid response_template ({}): {e}", found.from))?;
    let conversation = catalog::conversation_for(session, template).map_err(|e| e.to_string())?;
    let compiled =
        CompiledTemplate::compile(&template.source, limits).map_err(|e| e.to_string())?;
    let control = RenderControl::default();
    Ok(
        match check_stream_round_trip(&compiled, &conversation, &parser, &control) {
            Ok(()) => Outcome::Pass,
            Err(failure) => Outcome::StreamRoundTrip(format!(
                "messages[{}] {}",
                failure.message, failure.problem
            )),
        },
    )
}
