//! The `assert_stream_round_trip` step of `check`: after the prompt passed, every
//! assistant message's generated text, streamed in several chunkings, must parse as it
//! does whole (see [`crate::parse::check_stream_round_trip`]).

use std::path::Path;

use super::round_trip::RoundTripInputs;
use super::Outcome;
use crate::catalog::{TemplateAccess, TemplateSource};
use crate::parse::check_stream_round_trip;
use crate::session::Session;
use chatplate_render::{Limits, RenderControl};

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
    let inputs = RoundTripInputs::read(session, dir, access, template, limits)?;
    let control = RenderControl::default();
    Ok(
        match check_stream_round_trip(
            &inputs.compiled,
            &inputs.conversation,
            &inputs.parser,
            &control,
        ) {
            Ok(()) => Outcome::Pass,
            Err(failure) => Outcome::StreamRoundTrip(format!(
                "messages[{}] {}",
                failure.message, failure.problem
            )),
        },
    )
}
