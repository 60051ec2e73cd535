//! The app's round-trip badges, on the worker: each assistant message rendered, cut out
//! as the model would have generated it and parsed back with the session's
//! `response_template`, as `check`'s `assert_round_trip` does
//! ([`crate::parse::round_trip_each`]); with a tokenizer at hand, also whether its
//! tokens survive (`assert_token_round_trip`, [`crate::roundtrip`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use chatplate_render::{CancelToken, RenderControl, RenderError};

use crate::parse::{self, ResponseTemplate, RoundTripFailure};

use super::parsing::SchemaLookup;
use super::snapshot::Snapshot;
use super::{Output, Template};

/// Each assistant message's round trip, by index; empty when the session has no
/// schema (or an unusable one: `problem` says why).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoundTrips {
    /// Assistant messages by index: `None` when the message parses back into itself.
    pub messages: BTreeMap<usize, Option<RoundTripFailure>>,
    /// Why no message was checked although a schema was found.
    pub problem: Option<String>,
    /// With a tokenizer at hand, each message that parses back into itself: `None` when
    /// its tokens survive too, else why not in a line: the first differing token (see
    /// [`crate::roundtrip`]). Empty without a tokenizer.
    pub tokens: BTreeMap<usize, Option<String>>,
}

/// Checks every assistant message of the worker's conversation.
pub(super) fn check(
    template: &Template,
    lookup: &SchemaLookup,
    conversation: &Snapshot,
    cancel: &CancelToken,
) -> Result<Output, RenderError> {
    let spec = match parse::session_schema(
        &lookup.session,
        &lookup.dir,
        &lookup.access,
        lookup.template.as_ref(),
    ) {
        Ok(Some(found)) => found.spec,
        Ok(None) => return Ok(Output::RoundTrips(Arc::default())),
        Err(err) => return Ok(problem(err.to_string())),
    };
    let parser = match ResponseTemplate::load(&spec) {
        Ok(parser) => parser,
        Err(err) => return Ok(problem(format!("invalid response_template: {err}"))),
    };
    let compiled = template.compiled()?;
    let control = RenderControl::new(cancel.clone());
    let conversation = conversation.conversation();
    let each = parse::round_trip_each(compiled, &conversation, &parser, &control);
    // A cancelled check says nothing about the messages: report it as cancelled.
    if cancel.is_cancelled() {
        return Err(RenderError::cancelled());
    }
    let passed: Vec<usize> = (each.iter())
        .filter(|(_, outcome)| outcome.is_ok())
        .map(|(index, _)| *index)
        .collect();
    let tokens = token_checks(lookup, compiled, &conversation, &parser, &control, &passed);
    if cancel.is_cancelled() {
        return Err(RenderError::cancelled());
    }
    let messages = each.into_iter().map(|(i, r)| (i, r.err())).collect();
    Ok(Output::RoundTrips(Arc::new(RoundTrips {
        messages,
        problem: None,
        tokens,
    })))
}

fn problem(why: String) -> Output {
    Output::RoundTrips(Arc::new(RoundTrips {
        messages: BTreeMap::new(),
        problem: Some(why),
        tokens: BTreeMap::new(),
    }))
}

/// Whether the tokens of each message in `passed` survive, when the session has a
/// tokenizer (its `tokenizer`, or one beside its template); none otherwise.
#[cfg(feature = "tokens")]
fn token_checks(
    lookup: &SchemaLookup,
    template: &chatplate_render::CompiledTemplate,
    conversation: &chatplate_render::Conversation,
    parser: &ResponseTemplate,
    control: &RenderControl,
    passed: &[usize],
) -> BTreeMap<usize, Option<String>> {
    use crate::roundtrip::{check_message, Identity, Turn};
    let files =
        crate::tokens::expect::session_tokenizer(&lookup.session, &lookup.dir, &lookup.access);
    let Ok(tokenizer) = files.and_then(|files| crate::tokens::shared(&files)) else {
        return BTreeMap::new();
    };
    let turn = Turn {
        template,
        conversation,
        parser,
        tokenizer: &tokenizer,
        control,
    };
    let mut verdicts = BTreeMap::new();
    for &index in passed {
        if control.cancel.is_cancelled() {
            break;
        }
        let verdict = match check_message(&turn, index) {
            Ok(Identity::Identical { .. }) => None,
            Ok(Identity::Differs(difference)) => {
                Some(format!("tokens differ {}", difference.summary()))
            }
            Err(err) => Some(err.to_string()),
        };
        verdicts.insert(index, verdict);
    }
    verdicts
}

#[cfg(not(feature = "tokens"))]
fn token_checks(
    _: &SchemaLookup,
    _: &chatplate_render::CompiledTemplate,
    _: &chatplate_render::Conversation,
    _: &ResponseTemplate,
    _: &RenderControl,
    _: &[usize],
) -> BTreeMap<usize, Option<String>> {
    BTreeMap::new()
}
