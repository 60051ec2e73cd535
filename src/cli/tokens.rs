//! `chatplate tokens`: the rendered prompt as the model's tokenizer sees it (ids, token
//! strings, byte offsets), with a warning for user, tool or document text that becomes a
//! special token.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value as Json};

use super::limits::LimitArgs;
use super::output;
use super::render::with_stdin_note;
use super::session_input::{input_dir, load_session, read_input, shown, template_access};
use super::stdin;
use super::tokens_mask::MaskReport;
use chatplate_core::catalog;
use chatplate_core::files::MAX_SESSION_BYTES;
use chatplate_core::tokens::expect::session_tokenizer;
use chatplate_core::tokens::injection::{self, Injection, SplitEffect, TextSource, UntrustedText};
use chatplate_core::tokens::{
    shared, ModelTokenizer, Token, Tokenized, TokenizerError, TokenizerFiles,
};
use chatplate_core::training::{has_assistant_turn, render_tracked_with};
use chatplate_render::TrackedRender;

#[derive(Debug, Args)]
pub(super) struct TokensArgs {
    /// Session fixtures to render and tokenize (with --text: prompt text files); `-`
    /// reads one from standard input.
    #[arg(required = true, value_name = "FIXTURE")]
    inputs: Vec<PathBuf>,
    /// A model folder, tokenizer.json or tokenizer_config.json. Default: the fixture's
    /// "tokenizer", else the model folder its template file is in.
    #[arg(long, value_name = "PATH")]
    tokenizer: Option<PathBuf>,
    /// One JSON object per input and line: ids, tokens, offsets, special, injections.
    #[arg(long)]
    json: bool,
    /// The inputs are prompt text to tokenize as it is (needs --tokenizer).
    #[arg(long, requires = "tokenizer")]
    text: bool,
    /// A folder a fixture's template and tokenizer paths may also lead into
    /// (repeatable), besides the config file's "template_roots"; otherwise they must stay
    /// inside the fixture's folder.
    #[arg(long = "template-root", value_name = "DIR")]
    template_roots: Vec<PathBuf>,
    /// The render limits; `--max-memory` also bounds the tokenizer (a prompt is
    /// tokenized in pieces cut at its special tokens to stay within it).
    #[command(flatten)]
    limits: LimitArgs,
}

/// What one input gave.
struct Report {
    input: PathBuf,
    prompt: String,
    tokenizer: Arc<ModelTokenizer>,
    tokenized: Tokenized,
    injections: Vec<Injection>,
    split_effect: Option<SplitEffect>,
    /// The assistant mask; `None` for `--text` (no template).
    mask: Option<MaskReport>,
}

/// What one input gives before tokenizing.
struct Prepared {
    files: TokenizerFiles,
    untrusted: Vec<UntrustedText>,
    /// The render with its generation spans, and whether it has assistant turns; for
    /// `--text`, the text as it is.
    tracked: TrackedRender,
    assistant_turns: Option<bool>,
}

/// `chatplate tokens`: exit 0, or 1 when a fixture fails to render; unusable input is an
/// error (exit 2).
pub(super) fn run(args: TokensArgs) -> Result<i32> {
    stdin::at_most_one_in("FIXTURE", &args.inputs)?;
    let mut code = 0;
    for (index, input) in args.inputs.iter().enumerate() {
        let Some(report) = tokenize_input(input, &args)? else {
            code = 1;
            continue;
        };
        warn_injections(&report);
        let shown_input = report.input.display().to_string();
        if report
            .mask
            .as_ref()
            .is_some_and(|mask| mask.warn(&shown_input))
        {
            code = 1;
        }
        if args.json {
            // Serialized straight from the report: no JSON tree of millions of tokens.
            output::print_json(&JsonReport(&report), false)?;
            continue;
        }
        if args.inputs.len() > 1 {
            let gap = if index > 0 { "\n" } else { "" };
            output::print_visible(&format!("{gap}== {}\n", shown(input).display()))?;
        }
        print_table(&report)?;
    }
    Ok(code)
}

/// Renders (unless `--text`) and tokenizes one input; `None` when it does not render.
fn tokenize_input(input: &Path, args: &TokensArgs) -> Result<Option<Report>> {
    let Some(prepared) = prepare(input, args)? else {
        return Ok(None);
    };
    let Prepared {
        files,
        untrusted,
        tracked,
        assistant_turns,
    } = prepared;
    let tokenizer = shared(&files)?;
    let max_memory = args.limits.limits().max_memory_bytes;
    let tokenized = tokenizer.tokenize_within(&tracked.prompt, max_memory)?;
    let mask = assistant_turns.map(|turns| MaskReport::new(&tracked, &tokenized, turns));
    let prompt = tracked.prompt;
    let injections = injection::find_in_texts(&tokenizer, &untrusted)?;
    // Only worth a second pass over the prompt when there is something to explain.
    let split_effect = match injections.iter().any(|i| i.special) {
        true => Some(injection::split_effect(
            &tokenizer, &prompt, &tokenized, max_memory,
        )?),
        false => None,
    };
    Ok(Some(Report {
        input: shown(input),
        prompt,
        tokenizer,
        tokenized,
        injections,
        split_effect,
        mask,
    }))
}

/// The prompt, the tokenizer files and the untrusted texts of one input; `None` when the
/// fixture does not render (the error is printed).
fn prepare(input: &Path, args: &TokensArgs) -> Result<Option<Prepared>> {
    let given = args
        .tokenizer
        .as_deref()
        .map(TokenizerFiles::locate)
        .transpose()?;
    if args.text {
        let prompt = read_input(input, MAX_SESSION_BYTES)
            .with_context(|| format!("reading {}", shown(input).display()))?;
        let Some(files) = given else {
            bail!("--text needs --tokenizer");
        };
        return Ok(Some(Prepared {
            files,
            untrusted: Vec::new(),
            tracked: TrackedRender::untracked(prompt),
            assistant_turns: None,
        }));
    }
    let session = load_session(input)?;
    let dir = input_dir(input);
    let access = template_access(&dir, &args.template_roots);
    let files = match given {
        Some(files) => files,
        None => session_tokenizer(&session, &dir, &access).map_err(|err| {
            // This command also takes one on its command line.
            let also = match err {
                TokenizerError::Unspecified => ", or give --tokenizer PATH",
                _ => "",
            };
            anyhow::anyhow!("{}: {err}{also}", shown(input).display())
        })?,
    };
    let rendered = catalog::resolve_for(&session, &dir, &access)
        .map_err(|err| with_stdin_note(err, input, &session).to_string())
        .and_then(|template| {
            render_tracked_with(&session, &template, args.limits.limits())
                .map_err(|f| f.description)
        });
    let tracked = match rendered {
        Ok(tracked) => tracked,
        Err(message) => {
            let message = chatplate_render::visible::message(&message);
            output::note(&format!("{}: {message}", shown(input).display()));
            return Ok(None);
        }
    };
    let conversation = session.conversation()?;
    let untrusted = injection::untrusted_texts(&conversation);
    Ok(Some(Prepared {
        files,
        untrusted,
        tracked,
        assistant_turns: Some(has_assistant_turn(&conversation.messages)),
    }))
}

/// One line per injected token on stderr, in both output modes.
fn warn_injections(report: &Report) {
    for found in &report.injections {
        let at = format!(
            "{}: {} bytes {}..{}",
            report.input.display(),
            found.source,
            found.range.start,
            found.range.end
        );
        let token = format!("{:?} (id {})", found.token, found.id);
        if !found.special {
            output::note(&format!("note: {at}: becomes the added token {token}, not special; split_special_tokens does not change that"));
        } else if !found.active {
            output::note(&format!("note: {at}: would be the special token {token}; split_special_tokens=true in the config keeps it ordinary text"));
        } else {
            output::note(&format!(
                "warning: {at}: becomes the special token {token}; {}",
                split_advice(found, report.split_effect.as_ref())
            ));
        }
    }
}

/// What `split_special_tokens=true` would change, for a warning.
fn split_advice(found: &Injection, effect: Option<&SplitEffect>) -> String {
    let mut advice = format!(
        "with split_special_tokens=true it would be {} ordinary tokens {:?}",
        found.split_ids.len(),
        found.split_ids
    );
    if let Some(effect) = effect {
        advice.push_str(&format!(
            ", but the template's own special tokens would be split too ({} special tokens in this prompt would become {})",
            effect.special, effect.flipped_special
        ));
    }
    advice
}

/// Rows printed at a time: the table is never held whole.
const ROWS_PER_WRITE: usize = 4096;

/// One row per token and a total, printed as they are made.
fn print_table(report: &Report) -> Result<()> {
    let Report {
        tokenizer,
        tokenized,
        ..
    } = report;
    let mut text = format!("{:>6} {:>7}  {:<13} token\n", "index", "id", "bytes");
    for (index, token) in tokenized.tokens.iter().enumerate() {
        let string = tokenizer.token_string(token.id).unwrap_or_default();
        let bytes = format!("{}..{}", token.start, token.end);
        let special = if token.special { "  special" } else { "" };
        let trained = match &report.mask {
            Some(mask) if mask.trained(index) => "  trained",
            _ => "",
        };
        text.push_str(&format!(
            "{index:>6} {:>7}  {bytes:<13} {string:?}{special}{trained}\n",
            token.id
        ));
        if index % ROWS_PER_WRITE == ROWS_PER_WRITE - 1 {
            output::print_visible(&std::mem::take(&mut text))?;
        }
    }
    let trained = report
        .mask
        .as_ref()
        .map(MaskReport::total)
        .unwrap_or_default();
    text.push_str(&format!(
        "{} tokens ({} special{trained}, {} bytes) with {}\n",
        tokenized.len(),
        tokenized.special_count(),
        report.prompt.len(),
        tokenizer.files().tokenizer.display()
    ));
    output::print_visible(&text)?;
    Ok(())
}

/// One input as `--json` writes it, serialized field by field from the report (the
/// token lists straight from the tokens).
struct JsonReport<'r>(&'r Report);

/// A list serialized from the tokens, one item per token.
struct PerToken<'r, T: Serialize>(&'r [Token], fn(&Report, &Token) -> T, &'r Report);

impl<T: Serialize> Serialize for PerToken<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let PerToken(tokens, item, report) = self;
        serializer.collect_seq(tokens.iter().map(|token| item(report, token)))
    }
}

impl Serialize for JsonReport<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let report = self.0;
        let (tokenizer, tokens) = (&report.tokenizer, &report.tokenized.tokens[..]);
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("input", &report.input.display().to_string())?;
        map.serialize_entry(
            "tokenizer",
            &tokenizer.files().tokenizer.display().to_string(),
        )?;
        map.serialize_entry("split_special_tokens", &tokenizer.split_special_tokens())?;
        map.serialize_entry("count", &report.tokenized.len())?;
        map.serialize_entry("special_count", &report.tokenized.special_count())?;
        map.serialize_entry("ids", &PerToken(tokens, |_, t| t.id, report))?;
        let string = |r: &Report, t: &Token| r.tokenizer.token_string(t.id).unwrap_or_default();
        map.serialize_entry("tokens", &PerToken(tokens, string, report))?;
        map.serialize_entry(
            "offsets",
            &PerToken(tokens, |_, t| [t.start, t.end], report),
        )?;
        map.serialize_entry("special", &PerToken(tokens, |_, t| t.special, report))?;
        let injections: Vec<Json> = report.injections.iter().map(injection_json).collect();
        map.serialize_entry("injections", &injections)?;
        map.serialize_entry(
            "split_effect",
            &report.split_effect.map(|e| {
                json!({
                    "configured": e.configured,
                    "tokens": e.tokens,
                    "special": e.special,
                    "flipped_tokens": e.flipped_tokens,
                    "flipped_special": e.flipped_special,
                })
            }),
        )?;
        match &report.mask {
            Some(mask) => mask.serialize_entries(&mut map)?,
            None => {
                for key in [
                    "has_generation_markers",
                    "assistant_mask",
                    "assistant_spans",
                ] {
                    map.serialize_entry(key, &Json::Null)?;
                }
            }
        }
        map.end()
    }
}

fn injection_json(found: &Injection) -> Json {
    let (kind, index, role) = match &found.source {
        TextSource::Message { index, role } => ("message", *index, Some(role.as_str())),
        TextSource::Document { index } => ("document", *index, None),
    };
    json!({
        "source": kind,
        "index": index,
        "role": role,
        "offsets": [found.range.start, found.range.end],
        "id": found.id,
        "token": found.token,
        "special": found.special,
        "active": found.active,
        "split_ids": found.split_ids,
    })
}
