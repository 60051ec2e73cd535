//! `chatplate parse --stream`, `--chunks N|tokens` and `--check-chunkings`: the
//! streamed parse (transformers' `ResponseParser`), its events as JSON lines, and the
//! check that streaming in any chunks parses as the whole output does.

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Result};
use serde_json::Value as Json;

use super::output;
use chatplate_core::parse::{
    check_chunkings, stream_parse, Chunking, ParseError, ParseLimits, ResponseParser,
    ResponseTemplate, StreamEvent, MAX_INPUT_BYTES,
};

/// What a parse needs besides the output.
pub(super) struct Setup<'a> {
    pub(super) template: &'a ResponseTemplate,
    pub(super) prefix: &'a str,
    pub(super) tools: &'a [Json],
    pub(super) limits: ParseLimits,
}

/// `--chunks`: every N bytes, or at the tokenizer's token boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChunksArg {
    Bytes(usize),
    Tokens,
}

/// Reads `--chunks`: `tokens` or a positive number of bytes.
pub(super) fn chunks_arg(text: &str) -> Result<ChunksArg, String> {
    if text == "tokens" {
        return Ok(ChunksArg::Tokens);
    }
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(ChunksArg::Bytes(n)),
        _ => Err(format!(
            "expected `tokens` or a positive number of bytes, not {text:?}"
        )),
    }
}

/// `--stream`: reads the output as it arrives and prints each event as it is settled,
/// then the message. Exit 0, or 1 when the output does not parse.
pub(super) fn stream(setup: &Setup<'_>, input: &mut dyn Read) -> Result<i32> {
    let mut parser =
        match ResponseParser::new(setup.template, setup.prefix, setup.tools, &setup.limits) {
            Ok(parser) => parser,
            Err(err) => return Ok(does_not_parse(&err)),
        };
    print_events(parser.initial_events())?;
    let mut pending: Vec<u8> = Vec::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut total = 0usize;
    loop {
        let read = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        };
        total += read;
        if total > MAX_INPUT_BYTES {
            bail!("the output is over {MAX_INPUT_BYTES} bytes, more than a parse takes");
        }
        pending.extend_from_slice(&buffer[..read]);
        let text = complete_utf8(&mut pending, total)?;
        if text.is_empty() {
            continue;
        }
        match parser.feed(&text) {
            Ok(events) => print_events(&events)?,
            Err(err) => return Ok(does_not_parse(&err)),
        }
    }
    if !pending.is_empty() {
        bail!("the output is not UTF-8: it ends inside a character (byte {total})");
    }
    match parser.finalize() {
        Ok((message, events)) => {
            print_events(&events)?;
            output::print_json(&message, false)?;
            Ok(0)
        }
        Err(err) => Ok(does_not_parse(&err)),
    }
}

/// The complete characters at the front of `pending` (removed from it); an invalid
/// byte is an error naming its offset in the whole input (`total` bytes read so far).
fn complete_utf8(pending: &mut Vec<u8>, total: usize) -> Result<String> {
    let valid = match std::str::from_utf8(pending) {
        Ok(_) => pending.len(),
        Err(err) if err.error_len().is_none() => err.valid_up_to(),
        Err(err) => bail!(
            "the output is not UTF-8: invalid byte at offset {}",
            total - pending.len() + err.valid_up_to()
        ),
    };
    let rest = pending.split_off(valid);
    let text = String::from_utf8(std::mem::replace(pending, rest)).expect("checked");
    Ok(text)
}

/// `--chunks`: the whole output replayed in chunks, printed as `--stream` prints it.
pub(super) fn replay(setup: &Setup<'_>, output_text: &str, chunking: &Chunking) -> Result<i32> {
    let cuts = chunking.cuts(output_text);
    let run = stream_parse(
        setup.template,
        setup.prefix,
        setup.tools,
        output_text,
        &cuts,
        &setup.limits,
    );
    let events: Vec<StreamEvent> = run.events.into_iter().map(|(_, e)| e).collect();
    print_events(&events)?;
    match run.outcome {
        Ok(message) => {
            output::print_json(&message, false)?;
            Ok(0)
        }
        Err(err) => Ok(does_not_parse(&err)),
    }
}

/// `--check-chunkings`: one line per chunking, `same` or what differs; exit 1 when any
/// differs.
pub(super) fn check(setup: &Setup<'_>, output_text: &str, chunkings: &[Chunking]) -> Result<i32> {
    let (whole, differences) = check_chunkings(
        setup.template,
        setup.prefix,
        setup.tools,
        output_text,
        chunkings,
        &setup.limits,
    );
    let mut lines = vec![match &whole.outcome {
        Ok(message) => format!(
            "whole: {}",
            chatplate_core::machine_output::to_json(message)?
        ),
        Err(err) => format!("whole: does not parse: {err}"),
    }];
    for chunking in chunkings {
        let name = chunking.name();
        let chunks = chunking.cuts(output_text).len().saturating_sub(1);
        let line = match differences.iter().find(|d| d.chunking == name) {
            Some(difference) => {
                format!("{name} ({chunks} chunks): DIFFERS: {}", difference.problem)
            }
            None => format!("{name} ({chunks} chunks): same"),
        };
        lines.push(line);
    }
    output::print_visible(&(lines.join("\n") + "\n"))?;
    Ok(i32::from(!differences.is_empty()))
}

/// The chunkings `--check-chunkings` tries: every byte, every token (given the token
/// boundaries), three random ones.
pub(super) fn chunkings(token_cuts: Option<Vec<usize>>) -> Vec<Chunking> {
    let mut chunkings = vec![Chunking::Every(1)];
    if let Some(cuts) = token_cuts {
        chunkings.push(Chunking::At {
            name: "each token".into(),
            cuts,
        });
    }
    chunkings.extend((1..=3).map(Chunking::Random));
    chunkings
}

fn print_events(events: &[StreamEvent]) -> Result<()> {
    for event in events {
        output::print_json(&event.to_json(), false)?;
    }
    Ok(())
}

fn does_not_parse(err: &ParseError) -> i32 {
    output::note(&format!(
        "chatplate parse: the output does not parse: {err}"
    ));
    1
}

/// The byte offsets where the tokenizer at `files` starts a token in `text`.
#[cfg(feature = "tokens")]
pub(super) fn token_cuts(
    files: &chatplate_core::tokens::TokenizerFiles,
    text: &str,
) -> Result<Vec<usize>> {
    let tokenizer = chatplate_core::tokens::shared(files)?;
    let tokenized = tokenizer.tokenize(text)?;
    Ok(tokenized.tokens.iter().map(|t| t.start).collect())
}

/// Names the file a tokenizer was looked for in, for errors.
pub(super) fn no_tokenizer(session: Option<&Path>) -> String {
    match session {
        Some(path) => format!(
            "{}: no tokenizer for --chunks tokens: give --tokenizer PATH",
            path.display()
        ),
        None => "--chunks tokens needs a tokenizer: give --tokenizer PATH (or a session)".into(),
    }
}
