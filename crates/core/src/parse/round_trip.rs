//! Round trips (`assert_round_trip`): each assistant message, rendered, cut out as the
//! model would have generated it and parsed back, must give the message again.
//!
//! The generated text of message `i` is what the render of messages `..=i` adds to the
//! render of messages `..i` with the generation prompt (which must be a prefix of it),
//! up to and including the end-of-turn: the first `eos_token` when the template writes
//! it, else the text without the whitespace the template puts between turns (the model
//! stops at its end-of-turn token and never generates that separator).

use serde_json::{Map, Value};

use super::{check_chunkings, parse_response_within, Chunking, ParseLimits, ResponseTemplate};
use chatplate_render::{CompiledTemplate, ContinueFinal, Conversation, RenderControl};

/// Why an assistant message does not survive the round trip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundTripFailure {
    /// The message's index in the conversation.
    pub message: usize,
    /// What went wrong, in a sentence.
    pub problem: String,
    /// The original message as JSON (keys sorted), when the parse gave a message.
    pub expected: String,
    /// The parsed message as JSON (keys sorted), when the parse gave a message.
    pub actual: String,
}

/// Checks every assistant message of `conversation`; the first failure.
pub fn check_round_trip(
    template: &CompiledTemplate,
    conversation: &Conversation,
    parser: &ResponseTemplate,
    control: &RenderControl,
) -> Result<(), RoundTripFailure> {
    let assistant = |m: &Value| m.get("role").and_then(Value::as_str) == Some("assistant");
    for (index, message) in conversation.messages.iter().enumerate() {
        if assistant(message) {
            one_message(template, conversation, parser, control, index)?;
        }
    }
    Ok(())
}

/// Checks each assistant message of `conversation` on its own (the app's badges): its
/// index and why it fails, if it does.
pub fn round_trip_each(
    template: &CompiledTemplate,
    conversation: &Conversation,
    parser: &ResponseTemplate,
    control: &RenderControl,
) -> Vec<(usize, Result<(), RoundTripFailure>)> {
    let assistant = |m: &Value| m.get("role").and_then(Value::as_str) == Some("assistant");
    (conversation.messages.iter().enumerate())
        .filter(|(_, message)| assistant(message))
        .map(|(index, _)| {
            let outcome = one_message(template, conversation, parser, control, index);
            (index, outcome)
        })
        .collect()
}

fn one_message(
    template: &CompiledTemplate,
    conversation: &Conversation,
    parser: &ResponseTemplate,
    control: &RenderControl,
    index: usize,
) -> Result<(), RoundTripFailure> {
    let fail = |problem: String| RoundTripFailure {
        message: index,
        problem,
        expected: String::new(),
        actual: String::new(),
    };
    let output = generated(template, conversation, control, index).map_err(fail)?;
    let tools = conversation.tools.clone().unwrap_or_default();
    let limits = parse_limits(template, control);
    let parsed = parse_response_within(&output.text, parser, &output.prefix, &tools, &limits)
        .map_err(|err| fail(format!("the generated text does not parse: {err}")))?;
    let original = &conversation.messages[index];
    if parsed == *original {
        return Ok(());
    }
    Err(RoundTripFailure {
        message: index,
        problem: "parses back into a different message".into(),
        expected: sorted_json(original),
        actual: sorted_json(&parsed),
    })
}

/// Each parse gets the render deadline, and stops when the renders would.
fn parse_limits(template: &CompiledTemplate, control: &RenderControl) -> ParseLimits {
    let deadline = control.deadline.unwrap_or(template.limits().deadline);
    ParseLimits::new(deadline).with_cancel(control.cancel.clone())
}

/// What the model generated for message `index`, and the prompt before it.
struct Generated {
    prefix: String,
    text: String,
}

fn generated(
    template: &CompiledTemplate,
    conversation: &Conversation,
    control: &RenderControl,
    index: usize,
) -> Result<Generated, String> {
    let render = |count: usize, generation_prompt: bool| {
        let mut part = conversation.clone();
        part.messages.truncate(count);
        part.add_generation_prompt = generation_prompt;
        part.continue_final_message = ContinueFinal::Off;
        template
            .render_controlled(part, control)
            .map_err(|err| format!("rendering failed: {err}"))
    };
    let before = render(index, true)?;
    let with = render(index + 1, false)?;
    let Some(tail) = with.strip_prefix(&before) else {
        return Err(
            "the render up to this message, with the generation prompt, is not a prefix of the \
             render including it"
                .into(),
        );
    };
    let text = generated_part(tail, conversation).to_string();
    Ok(Generated {
        prefix: before,
        text,
    })
}

/// Checks that every assistant message's generated text, streamed in chunks of one
/// byte, three bytes and two random chunkings, parses as it does whole
/// (`assert_stream_round_trip`); the first failure.
pub fn check_stream_round_trip(
    template: &CompiledTemplate,
    conversation: &Conversation,
    parser: &ResponseTemplate,
    control: &RenderControl,
) -> Result<(), RoundTripFailure> {
    let chunkings = [
        Chunking::Every(1),
        Chunking::Every(3),
        Chunking::Random(1),
        Chunking::Random(2),
    ];
    let tools = conversation.tools.clone().unwrap_or_default();
    let limits = parse_limits(template, control);
    for (index, message) in conversation.messages.iter().enumerate() {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let fail = |problem: String| RoundTripFailure {
            message: index,
            problem,
            expected: String::new(),
            actual: String::new(),
        };
        let output = generated(template, conversation, control, index).map_err(fail)?;
        let (_, differences) = check_chunkings(
            parser,
            &output.prefix,
            &tools,
            &output.text,
            &chunkings,
            &limits,
        );
        if let Some(first) = differences.first() {
            return Err(fail(format!(
                "streamed {} ({} chunks): {}",
                first.chunking, first.chunks, first.problem
            )));
        }
    }
    Ok(())
}

/// The part of `tail` the model generates: up to and including the end-of-turn.
pub(crate) fn generated_part<'t>(tail: &'t str, conversation: &Conversation) -> &'t str {
    let eos = conversation
        .variables
        .get("eos_token")
        .and_then(Value::as_str);
    match eos
        .filter(|e| !e.is_empty())
        .and_then(|e| tail.find(e).map(|at| at + e.len()))
    {
        Some(end) => &tail[..end],
        None => tail.trim_end(),
    }
}

/// Pretty JSON with every object's keys sorted, so a diff shows only real differences.
fn sorted_json(value: &Value) -> String {
    fn sort(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sort(&map[k])))
                        .collect::<Map<_, _>>(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string_pretty(&sort(value)).unwrap_or_default() + "\n"
}
