//! Chunking invariance: an output streamed in any chunks must parse as it does whole.
//!
//! Engines stream in deltas of one or more tokens, and the failures of streamed tool
//! calls are failures of chunking: a call dropped when a delta spans two markers, a
//! marker split across two deltas shown as content. [`check_chunkings`] streams one
//! output in several chunkings and compares each with the output fed in one chunk
//! (which is `parse_response`): the final message, and the text each region received,
//! so an event that shows part of a marker as content is caught even when the final
//! message happens to be right.

use serde_json::Value;

use super::{ParseError, ParseLimits, ResponseParser, ResponseTemplate, StreamEvent};

/// How an output is cut into chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Chunking {
    /// Every `n` bytes (a cut inside a character moves to its end).
    Every(usize),
    /// Random lengths of 1 to 9 bytes, from a fixed seed (the same cuts every run).
    Random(u64),
    /// At these byte offsets (a tokenizer's token boundaries, say), named `name`.
    At {
        /// What the cuts are, for reports.
        name: String,
        /// The byte offsets; ones inside a character or out of order are skipped.
        cuts: Vec<usize>,
    },
}

impl Chunking {
    /// The byte offsets where chunks start, then the text's length; always on
    /// character boundaries, increasing.
    pub fn cuts(&self, text: &str) -> Vec<usize> {
        let mut cuts = vec![0];
        let mut push = |at: usize| {
            let at = next_boundary(text, at.min(text.len()));
            if at > *cuts.last().expect("not empty") {
                cuts.push(at);
            }
        };
        match self {
            Chunking::Every(n) => (1..=text.len() / (*n).max(1)).for_each(|i| push(i * n)),
            Chunking::Random(seed) => {
                let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                let mut at = 0;
                while at < text.len() {
                    // xorshift64: reproducible everywhere, no dependency.
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    at += usize::try_from(state % 9).unwrap_or(0) + 1;
                    push(at);
                }
            }
            Chunking::At { cuts: at, .. } => at.iter().for_each(|c| push(*c)),
        }
        push(text.len());
        cuts
    }

    /// How the chunking is named in reports: `every 1 byte`, `random (seed 1)`.
    pub fn name(&self) -> String {
        match self {
            Chunking::Every(1) => "every byte".into(),
            Chunking::Every(n) => format!("every {n} bytes"),
            Chunking::Random(seed) => format!("random lengths (seed {seed})"),
            Chunking::At { name, .. } => name.clone(),
        }
    }
}

/// The next character boundary at or after `at`.
fn next_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// A streamed parse: every event with the call that gave it (0: the prefix, then one
/// per chunk, then `finalize`), and the message or the error that stopped it.
#[derive(Debug, Clone)]
pub struct StreamRun {
    /// The events, each with the call that gave it.
    pub events: Vec<(usize, StreamEvent)>,
    /// The message, or the error (the events of the call that failed are lost, as in
    /// transformers).
    pub outcome: Result<Value, ParseError>,
}

/// Streams `text` cut at `cuts` (from [`Chunking::cuts`]) through a [`ResponseParser`].
pub fn stream_parse(
    template: &ResponseTemplate,
    prefix: &str,
    tools: &[Value],
    text: &str,
    cuts: &[usize],
    limits: &ParseLimits,
) -> StreamRun {
    let mut events = Vec::new();
    let outcome = run(template, prefix, tools, text, cuts, limits, &mut events);
    StreamRun { events, outcome }
}

fn run(
    template: &ResponseTemplate,
    prefix: &str,
    tools: &[Value],
    text: &str,
    cuts: &[usize],
    limits: &ParseLimits,
    events: &mut Vec<(usize, StreamEvent)>,
) -> Result<Value, ParseError> {
    let mut parser = ResponseParser::new(template, prefix, tools, limits)?;
    events.extend(parser.initial_events().iter().map(|e| (0, e.clone())));
    for (call, pair) in cuts.windows(2).enumerate() {
        let got = parser.feed(&text[pair[0]..pair[1]])?;
        events.extend(got.into_iter().map(|e| (call + 1, e)));
    }
    let (message, last) = parser.finalize()?;
    events.extend(last.into_iter().map(|e| (cuts.len(), e)));
    Ok(message)
}

/// How one chunking's parse differs from the whole output's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkingDifference {
    /// The chunking ([`Chunking::name`]).
    pub chunking: String,
    /// How many chunks it made.
    pub chunks: usize,
    /// What differs, in a sentence.
    pub problem: String,
}

/// Streams `text` in each of `chunkings` and compares every run with `text` fed whole:
/// the differences (none when the parse is invariant), and the whole run.
pub fn check_chunkings(
    template: &ResponseTemplate,
    prefix: &str,
    tools: &[Value],
    text: &str,
    chunkings: &[Chunking],
    limits: &ParseLimits,
) -> (StreamRun, Vec<ChunkingDifference>) {
    let whole = stream_parse(template, prefix, tools, text, &[0, text.len()], limits);
    let expected = regions(&whole.events);
    let mut differences = Vec::new();
    for chunking in chunkings {
        let cuts = chunking.cuts(text);
        let run = stream_parse(template, prefix, tools, text, &cuts, limits);
        if let Some(problem) = difference(&whole, &expected, &run) {
            differences.push(ChunkingDifference {
                chunking: chunking.name(),
                chunks: cuts.len() - 1,
                problem,
            });
        }
    }
    (whole, differences)
}

fn difference(whole: &StreamRun, expected: &[(String, String)], run: &StreamRun) -> Option<String> {
    let shown = |outcome: &Result<Value, ParseError>| match outcome {
        Ok(message) => message.to_string(),
        Err(err) => format!("error {err}"),
    };
    let (a, b) = (shown(&whole.outcome), shown(&run.outcome));
    if a != b {
        return Some(format!(
            "the parse gives {b} where the whole output gives {a}"
        ));
    }
    // A failed call's events are lost: regions are comparable only when both parsed.
    if whole.outcome.is_err() {
        return None;
    }
    let got = regions(&run.events);
    let first = (0..expected.len().max(got.len())).find(|i| expected.get(*i) != got.get(*i))?;
    let region = |r: Option<&(String, String)>| {
        r.map_or("nothing".into(), |(field, text)| {
            format!("{field} {text:?}")
        })
    };
    Some(format!(
        "region {} received {} where the whole output gives {}",
        first + 1,
        region(got.get(first)),
        region(expected.get(first))
    ))
}

/// Each region's field and the text its chunks carried, in order.
fn regions(events: &[(usize, StreamEvent)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (_, event) in events {
        match event {
            StreamEvent::Open { field } => out.push((field.clone(), String::new())),
            StreamEvent::Chunk { text, .. } => {
                if let Some(last) = out.last_mut() {
                    last.1.push_str(text);
                }
            }
            StreamEvent::Close { .. } => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_stay_on_character_boundaries() {
        let text = "aé😀b";
        assert_eq!(Chunking::Every(1).cuts(text), vec![0, 1, 3, 7, 8]);
        assert_eq!(Chunking::Every(3).cuts(text), vec![0, 3, 7, 8]);
        let random = Chunking::Random(1).cuts(text);
        assert_eq!(random, Chunking::Random(1).cuts(text));
        assert!(random.iter().all(|c| text.is_char_boundary(*c)));
        assert_eq!(Chunking::Every(5).cuts(""), vec![0]);
    }

    #[test]
    fn a_region_that_received_other_text_is_reported() {
        let run = |texts: &[&str]| StreamRun {
            events: std::iter::once(StreamEvent::open("content"))
                .chain(texts.iter().map(|t| StreamEvent::Chunk {
                    field: "content".into(),
                    text: (*t).into(),
                    dirty: false,
                }))
                .map(|e| (1, e))
                .collect(),
            outcome: Ok(serde_json::json!({"content": "Hi"})),
        };
        let whole = run(&["Hi"]);
        let expected = regions(&whole.events);
        assert_eq!(difference(&whole, &expected, &run(&["H", "i"])), None);
        assert_eq!(
            difference(&whole, &expected, &run(&["Hi", "<|im"])).as_deref(),
            Some(
                "region 1 received content \"Hi<|im\" where the whole output gives content \"Hi\""
            )
        );
        let mut failed = run(&["Hi"]);
        failed.outcome = Err(ParseError::value("boom"));
        assert_eq!(
            difference(&whole, &expected, &failed).as_deref(),
            Some("the parse gives error ValueError: boom where the whole output gives {\"content\":\"Hi\"}")
        );
    }
}
