//! `chatplate roundtrip`: whether the tokens a model sampled come back when the
//! conversation is rendered again with the message parsed from them (see
//! [`chatplate_core::roundtrip`]).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::{json, Value as Json};

use super::limits::LimitArgs;
use super::output;
use super::render::fixture_template;
use super::session_input::{input_dir, load_session, read_input, shown, template_access};
use chatplate_core::parse::{self, ResponseTemplate, MAX_INPUT_BYTES};
use chatplate_core::roundtrip::{
    check_sample, Identity, Position, Sample, TokenDifference, TokenRoundTripError, Turn,
};
use chatplate_core::tokens::expect::session_tokenizer;
use chatplate_core::tokens::{shared, TokenizerError, TokenizerFiles};
use chatplate_render::{CompiledTemplate, RenderControl};

#[derive(Debug, Args)]
pub(super) struct RoundtripArgs {
    /// The session whose conversation came before the output: its template, its
    /// response_template (or its model's), its tools and its tokenizer.
    #[arg(value_name = "SESSION")]
    session: PathBuf,
    /// The model's raw output (`-`: standard input). Without --ids, its tokens as the
    /// model's tokenizer splits it are taken as the sampled ones.
    #[arg(long, value_name = "FILE", required_unless_present = "ids")]
    output: Option<PathBuf>,
    /// The sampled token ids: a JSON list, or ids separated by spaces or commas. Their
    /// text is the output (with --output too, the two must agree).
    #[arg(long, value_name = "FILE")]
    ids: Option<PathBuf>,
    /// A model folder, tokenizer.json or tokenizer_config.json. Default: the session's
    /// "tokenizer", else the model folder its template file is in.
    #[arg(long, value_name = "PATH")]
    tokenizer: Option<PathBuf>,
    /// A JSON file holding the response_template (instead of the session's).
    #[arg(long, value_name = "FILE")]
    schema: Option<PathBuf>,
    /// One JSON object: identical, or where, both tokens, the cause and both texts.
    #[arg(long)]
    json: bool,
    /// A folder the session's template, response_template or tokenizer path may also
    /// lead into (repeatable), besides the config file's "template_roots".
    #[arg(long = "template-root", value_name = "DIR")]
    template_roots: Vec<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Exit 0 when the tokens are identical; 1 when they differ, or when the output does not
/// parse or the conversation with it does not render; 2 for unusable input.
pub(super) fn run(args: RoundtripArgs) -> Result<i32> {
    let path = &args.session;
    let session = load_session(path)?;
    let dir = input_dir(path);
    let access = template_access(&dir, &args.template_roots);
    let (template, conversation) = fixture_template(path, None, Some(&args.template_roots))?;
    let spec = match &args.schema {
        Some(file) => parse::read_schema_file(file)?,
        None => match parse::session_schema(&session, &dir, &access, Some(&template))? {
            Some(found) => found.spec,
            None => bail!(
                "{}: no response_template: the session has none and neither has its model's \
                 tokenizer_config.json; give one with --schema FILE",
                shown(path).display()
            ),
        },
    };
    let parser = ResponseTemplate::load(&spec)
        .map_err(|err| anyhow::anyhow!("invalid response_template: {err}"))?;
    let files = match &args.tokenizer {
        Some(given) => TokenizerFiles::locate(given)?,
        None => session_tokenizer(&session, &dir, &access).map_err(|err| {
            let also = match err {
                TokenizerError::Unspecified => ", or give --tokenizer PATH",
                _ => "",
            };
            anyhow::anyhow!("{}: {err}{also}", shown(path).display())
        })?,
    };
    let tokenizer = shared(&files)?;
    let sample = sample(&args, &tokenizer)?;
    let compiled = CompiledTemplate::compile(&template.source, args.limits.limits())
        .map_err(|err| anyhow::anyhow!("compiling the template: {err}"))?;
    let control = RenderControl::default();
    let turn = Turn {
        template: &compiled,
        conversation: &conversation,
        parser: &parser,
        tokenizer: &tokenizer,
        control: &control,
    };
    match check_sample(&turn, &sample) {
        Ok(identity) => report(&identity, args.json),
        Err(err @ TokenRoundTripError::Tokenizer(_)) => Err(err.into()),
        Err(err @ TokenRoundTripError::Prompt(_)) => Err(err.into()),
        Err(err) => {
            output::note(&format!("chatplate roundtrip: {err}"));
            Ok(1)
        }
    }
}

/// The sampled tokens: `--ids` (checked against `--output` when both are given), else
/// the output tokenized.
fn sample(
    args: &RoundtripArgs,
    tokenizer: &chatplate_core::tokens::ModelTokenizer,
) -> Result<Sample> {
    let read = |path: &Path| {
        read_input(path, MAX_INPUT_BYTES as u64)
            .with_context(|| format!("reading {}", shown(path).display()))
    };
    let text = args.output.as_deref().map(read).transpose()?;
    let Some(ids_path) = &args.ids else {
        return Ok(Sample::from_text(text.unwrap_or_default(), tokenizer)?);
    };
    let ids = parse_ids(&read(ids_path)?)
        .map_err(|err| anyhow::anyhow!("{}: {err}", shown(ids_path).display()))?;
    let sample = Sample::from_ids(ids, tokenizer)
        .map_err(|err| anyhow::anyhow!("{}: {err}", shown(ids_path).display()))?;
    if let Some(text) = text.filter(|t| *t != sample.text) {
        let at = text
            .char_indices()
            .zip(sample.text.chars())
            .find(|((_, a), b)| a != b)
            .map_or(text.len().min(sample.text.len()), |((at, _), _)| at);
        bail!(
            "the ids decode to a text that differs from the output at byte {at}: give the \
             output the ids stand for, or only --ids"
        );
    }
    Ok(sample)
}

/// Token ids written as a JSON list or separated by whitespace or commas.
fn parse_ids(text: &str) -> Result<Vec<u32>, String> {
    let inner = text.trim();
    let inner = (inner.strip_prefix('[').and_then(|t| t.strip_suffix(']'))).unwrap_or(inner);
    inner
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|part| !part.is_empty())
        .enumerate()
        .map(|(index, part)| {
            part.parse::<u32>()
                .map_err(|_| format!("id {} is not a token id: {part:?}", index + 1))
        })
        .collect()
}

fn report(identity: &Identity, json: bool) -> Result<i32> {
    match (identity, json) {
        (Identity::Identical { tokens }, false) => {
            output::print(&format!("identical ({tokens} tokens)\n"))?;
        }
        (Identity::Differs(difference), false) => {
            output::print_lines(&difference.lines())?;
        }
        (Identity::Identical { tokens }, true) => {
            output::print_json(&json!({"identical": true, "tokens": tokens}), false)?;
        }
        (Identity::Differs(difference), true) => {
            output::print_json(&difference_json(difference), false)?;
        }
    }
    Ok(i32::from(matches!(identity, Identity::Differs(_))))
}

fn difference_json(difference: &TokenDifference) -> Json {
    let token = |t: &chatplate_core::roundtrip::ShownToken| json!({"id": t.id, "token": t.token});
    let position = match difference.position {
        Position::Output(n) => json!({"output": n}),
        Position::Prompt { from_end } => json!({"prompt_from_end": from_end}),
    };
    json!({
        "identical": false,
        "position": position,
        "sampled": token(&difference.sampled),
        "rendered": difference.rendered.as_ref().map(token),
        "cause": difference.cause.as_ref().map(|c| json!({"kind": c.kind(), "text": c.to_string()})),
        "sampled_text": difference.sampled_text,
        "rendered_text": difference.rendered_text,
    })
}
