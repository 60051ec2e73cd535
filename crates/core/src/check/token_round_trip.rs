//! The `assert_token_round_trip` step of `check`: after the prompt passed, the tokens
//! a model sampled must come back when the conversation is rendered again with the
//! message parsed from them (see [`crate::roundtrip`]): each assistant message as
//! rendered (`true`), or the output the fixture records.

use std::path::Path;

use super::Outcome;
use crate::catalog::{TemplateAccess, TemplateSource};
use crate::session::{Session, TokenRoundTripAssertion};
use chatplate_render::Limits;

/// The token round trip's outcome for a passing fixture that asks for it; other
/// outcomes as they are.
pub(super) fn token_round_trip_step(
    session: &Session,
    dir: &Path,
    access: &TemplateAccess,
    template: &TemplateSource,
    outcome: Outcome,
    limits: Limits,
) -> Outcome {
    let (Some(assertion), Outcome::Pass) = (&session.assert_token_round_trip, &outcome) else {
        return outcome;
    };
    if !assertion.asked() {
        return outcome;
    }
    match checked(session, dir, access, template, assertion, limits) {
        Ok(None) => Outcome::Pass,
        Ok(Some(report)) => Outcome::TokenRoundTrip(report),
        Err(problem) => Outcome::Broken(format!("assert_token_round_trip: {problem}")),
    }
}

#[cfg(not(feature = "tokens"))]
fn checked(
    _: &Session,
    _: &Path,
    _: &TemplateAccess,
    _: &TemplateSource,
    _: &TokenRoundTripAssertion,
    _: Limits,
) -> Result<Option<String>, String> {
    Err(crate::tokens::TokenizerError::Unsupported.to_string())
}

/// `Ok(None)` when the tokens survive, `Ok(Some(report))` when they do not, `Err` when
/// the check cannot be made (no schema, no tokenizer, ids that are not the output).
#[cfg(feature = "tokens")]
fn checked(
    session: &Session,
    dir: &Path,
    access: &TemplateAccess,
    template: &TemplateSource,
    assertion: &TokenRoundTripAssertion,
    limits: Limits,
) -> Result<Option<String>, String> {
    use crate::roundtrip::{check_each, check_sample, Identity, Sample, Turn};
    use crate::tokens::{expect::session_tokenizer, shared};
    use chatplate_render::RenderControl;

    let inputs = super::round_trip::RoundTripInputs::read(session, dir, access, template, limits)?;
    let files = session_tokenizer(session, dir, access).map_err(|e| e.to_string())?;
    let tokenizer = shared(&files).map_err(|e| e.to_string())?;
    let control = RenderControl::default();
    let turn = Turn {
        template: &inputs.compiled,
        conversation: &inputs.conversation,
        parser: &inputs.parser,
        tokenizer: &tokenizer,
        control: &control,
    };
    let report = |identity: Identity| match identity {
        Identity::Identical { .. } => None,
        Identity::Differs(difference) => Some(difference.lines().join("\n")),
    };
    match assertion {
        TokenRoundTripAssertion::Each(_) => {
            for (index, outcome) in check_each(&turn) {
                let failure = match outcome {
                    Ok(identity) => report(identity),
                    Err(err) => Some(err.to_string()),
                };
                if let Some(failure) = failure {
                    return Ok(Some(format!("messages[{index}] {failure}")));
                }
            }
            Ok(None)
        }
        TokenRoundTripAssertion::Sampled { output, ids } => {
            let sample = match ids {
                Some(ids) => Sample::from_ids(ids.clone(), &tokenizer),
                None => Sample::from_text(output.clone().unwrap_or_default(), &tokenizer),
            }
            .map_err(|e| e.to_string())?;
            if output.as_ref().is_some_and(|text| *text != sample.text) {
                return Err("the ids decode to a text other than the output".into());
            }
            match check_sample(&turn, &sample) {
                Ok(identity) => Ok(report(identity)),
                Err(err) => Ok(Some(err.to_string())),
            }
        }
    }
}
