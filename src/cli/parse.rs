//! `chatplate parse`: a model's raw output (stdin) back into an assistant message with a
//! `response_template`, as transformers' `tokenizer.parse_response` gives it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::Value as Json;

use super::limits::LimitArgs;
use super::output;
use super::parse_stream::{self, ChunksArg, Setup};
use super::render::fixture_template;
use super::session_input::{
    input_dir, load_session, read_input, read_json, shown, template_access,
};
use super::stdin;
use chatplate_core::parse::{self, Chunking, ParseLimits, ResponseTemplate, MAX_INPUT_BYTES};
use chatplate_render::{CompiledTemplate, ContinueFinal, RenderControl};

#[derive(Debug, Args)]
pub(super) struct ParseArgs {
    /// A session whose conversation came before the output: its `response_template` (or
    /// its model's), its prompt with the generation prompt as the prefix, and its tools.
    #[arg(value_name = "SESSION", required_unless_present = "schema")]
    session: Option<PathBuf>,
    /// A JSON file holding the response_template (instead of the session's).
    #[arg(long, value_name = "FILE")]
    schema: Option<PathBuf>,
    /// The prompt that came before the output (default: the session's rendered prompt;
    /// without a session, none).
    #[arg(long, value_name = "FILE")]
    prefix: Option<PathBuf>,
    /// The model's output (default: standard input).
    #[arg(long, value_name = "FILE")]
    response: Option<PathBuf>,
    /// JSON file with the tools list: tool-call arguments are cast with their schemas
    /// (default: the session's tools).
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// A folder the session's template or response_template path may also lead into
    /// (repeatable), besides the config file's "template_roots".
    #[arg(long = "template-root", value_name = "DIR")]
    template_roots: Vec<PathBuf>,
    /// Stream: read the output as it arrives and print transformers' `ResponseParser`
    /// events as JSON lines as they are settled, then the message on the last line.
    #[arg(long, conflicts_with_all = ["chunks", "check_chunkings"])]
    stream: bool,
    /// Replay the whole output in chunks, printed as --stream prints it: every N bytes,
    /// or `tokens` (at the tokenizer's token boundaries).
    #[arg(long, value_name = "N|tokens", value_parser = parse_stream::chunks_arg, conflicts_with = "check_chunkings")]
    chunks: Option<ChunksArg>,
    /// Parse the output whole and streamed in several chunkings (every byte, each token
    /// when a tokenizer is at hand, random splits with fixed seeds) and report any
    /// difference in the message or in the text a region received; exit 1 if any.
    #[arg(long)]
    check_chunkings: bool,
    /// The tokenizer for token chunkings: a model folder, tokenizer.json or
    /// tokenizer_config.json (default: the session's).
    #[cfg(feature = "tokens")]
    #[arg(long, value_name = "PATH")]
    tokenizer: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// What the parse needs, gathered from the session and the flags.
struct Inputs {
    spec: Json,
    prefix: String,
    tools: Vec<Json>,
}

/// The message as JSON on stdout (exit 0); an output the template cannot parse is
/// exit 1, bad input (an invalid template, unreadable files) exit 2.
pub(super) fn run(args: ParseArgs) -> Result<i32> {
    let dash = |path: &Option<PathBuf>| path.as_deref().is_some_and(stdin::is_stdin);
    if [&args.session, &args.schema, &args.prefix, &args.tools]
        .into_iter()
        .any(dash)
    {
        bail!("the model output is read from standard input: give the other inputs as files");
    }
    let inputs = gather(&args)?;
    let template = match ResponseTemplate::load(&inputs.spec) {
        Ok(template) => template,
        Err(err) => bail!("invalid response_template: {err}"),
    };
    let limits = ParseLimits::new(args.limits.limits().deadline);
    let setup = Setup {
        template: &template,
        prefix: &inputs.prefix,
        tools: &inputs.tools,
        limits: limits.clone(),
    };
    if args.stream {
        return match &args.response {
            Some(path) => {
                let mut file = std::fs::File::open(path)
                    .with_context(|| format!("reading {}", shown(path).display()))?;
                parse_stream::stream(&setup, &mut file)
            }
            None => parse_stream::stream(&setup, &mut std::io::stdin().lock()),
        };
    }
    // Read no more than a parse takes (the cap applies while reading, not after).
    let cap = MAX_INPUT_BYTES as u64;
    let output = match &args.response {
        Some(path) => {
            read_input(path, cap).with_context(|| format!("reading {}", shown(path).display()))?
        }
        None => stdin::read_text(cap)?,
    };
    match args.chunks {
        Some(ChunksArg::Bytes(n)) => {
            return parse_stream::replay(&setup, &output, &Chunking::Every(n))
        }
        Some(ChunksArg::Tokens) => {
            let Some(cuts) = token_cuts(&args, &output)? else {
                bail!(parse_stream::no_tokenizer(args.session.as_deref()));
            };
            let chunking = Chunking::At {
                name: "each token".into(),
                cuts,
            };
            return parse_stream::replay(&setup, &output, &chunking);
        }
        None => {}
    }
    if args.check_chunkings {
        let cuts = match token_cuts(&args, &output) {
            Ok(Some(cuts)) => Some(cuts),
            Ok(None) => {
                output::note(
                    "chatplate parse: no tokenizer, so no token chunking (give --tokenizer PATH)",
                );
                None
            }
            Err(err) => {
                output::note(&format!("chatplate parse: no token chunking: {err:#}"));
                None
            }
        };
        return parse_stream::check(&setup, &output, &parse_stream::chunkings(cuts));
    }
    match parse::parse_response_within(&output, &template, &inputs.prefix, &inputs.tools, &limits) {
        Ok(message) => {
            output::print_json(&message, true)?;
            Ok(0)
        }
        Err(err) => {
            output::note(&format!(
                "chatplate parse: the output does not parse: {err}"
            ));
            Ok(1)
        }
    }
}

fn gather(args: &ParseArgs) -> Result<Inputs> {
    let mut inputs = match &args.session {
        Some(path) => from_session(path, args)?,
        None => Inputs {
            spec: Json::Null,
            prefix: String::new(),
            tools: Vec::new(),
        },
    };
    if let Some(path) = &args.schema {
        inputs.spec = parse::read_schema_file(path)?;
    }
    if let Some(path) = &args.prefix {
        inputs.prefix = read_input(path, MAX_INPUT_BYTES as u64)
            .with_context(|| format!("reading {}", shown(path).display()))?;
    }
    if let Some(path) = &args.tools {
        inputs.tools = match read_json(path)? {
            Json::Array(items) => items,
            _ => bail!("{}: expected a JSON list of tools", shown(path).display()),
        };
    }
    Ok(inputs)
}

/// The session's schema (unless `--schema` replaces it), rendered prompt and tools.
fn from_session(path: &Path, args: &ParseArgs) -> Result<Inputs> {
    let session = load_session(path)?;
    let (template, mut conversation) = fixture_template(path, None, Some(&args.template_roots))?;
    // The output answers the conversation: the prompt ends with the assistant's opening
    // (unless the session continues its final message).
    conversation.add_generation_prompt |= conversation.continue_final_message == ContinueFinal::Off;
    let spec = match &args.schema {
        Some(_) => Json::Null,
        None => {
            let dir = input_dir(path);
            let access = template_access(&dir, &args.template_roots);
            let found = parse::session_schema(&session, &dir, &access, Some(&template))?;
            let Some(found) = found else {
                bail!(
                    "{}: no response_template: the session has none and neither has its model's \
                     tokenizer_config.json; give one with --schema FILE",
                    shown(path).display()
                );
            };
            found.spec
        }
    };
    let prefix = match &args.prefix {
        Some(_) => String::new(),
        None => {
            let limits = args.limits.limits();
            let control = RenderControl::default();
            CompiledTemplate::compile(&template.source, limits)
                .and_then(|compiled| compiled.render_controlled(&conversation, &control))
                .map_err(|err| anyhow::anyhow!("rendering the session's prompt: {err}"))?
        }
    };
    Ok(Inputs {
        spec,
        prefix,
        tools: session.tools.clone().unwrap_or_default(),
    })
}

/// Where the tokenizer (`--tokenizer`, else the session's) starts a token in `output`;
/// `None` when there is no tokenizer to ask.
#[cfg(feature = "tokens")]
fn token_cuts(args: &ParseArgs, output: &str) -> Result<Option<Vec<usize>>> {
    use chatplate_core::tokens::{expect::session_tokenizer, TokenizerFiles};
    let files = match (&args.tokenizer, &args.session) {
        (Some(path), _) => TokenizerFiles::locate(path)?,
        (None, Some(session)) => {
            let dir = input_dir(session);
            let access = template_access(&dir, &args.template_roots);
            match session_tokenizer(&load_session(session)?, &dir, &access) {
                Ok(files) => files,
                Err(_) => return Ok(None),
            }
        }
        (None, None) => return Ok(None),
    };
    parse_stream::token_cuts(&files, output).map(Some)
}

/// Without the tokenizer feature there are no token boundaries.
#[cfg(not(feature = "tokens"))]
fn token_cuts(_args: &ParseArgs, _output: &str) -> Result<Option<Vec<usize>>> {
    Ok(None)
}
