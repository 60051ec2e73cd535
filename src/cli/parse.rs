//! `chatplate parse`: a model's raw output (stdin) back into an assistant message with a
//! `response_template`, as transformers' `tokenizer.parse_response` gives it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::Value as Json;

use super::limits::LimitArgs;
use super::output;
use super::render::fixture_template;
use super::session_input::{
    input_dir, load_session, read_input, read_json, shown, template_access,
};
use super::stdin;
use chatplate_core::parse::{self, ParseLimits, ResponseTemplate, MAX_INPUT_BYTES};
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
    // Read no more than a parse takes (the cap applies while reading, not after).
    let cap = MAX_INPUT_BYTES as u64;
    let output = match &args.response {
        Some(path) => {
            read_input(path, cap).with_context(|| format!("reading {}", shown(path).display()))?
        }
        None => stdin::read_text(cap)?,
    };
    let limits = ParseLimits::new(args.limits.limits().deadline);
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
