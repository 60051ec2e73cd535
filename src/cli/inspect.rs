//! `chatplate inspect`: what a template can render, decided by probe renders, and for a
//! fixture, which of its values the template ignores and whether its prompt stays a
//! prefix when the conversation grows.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, Result};
use clap::Args;
use serde_json::{Map, Value as Json};

use super::output;
use super::render::parse_var;
use super::session_input::{open_template, shown};
use chatplate_core::inspect::{
    self, ConversationReport, InspectError, ProbeSettings, TemplateReport,
};
use chatplate_render::{CancelToken, CompiledTemplate, Conversation, Limits, RenderError};

#[derive(Debug, Args)]
pub(super) struct InspectArgs {
    /// Template: a .jinja file, tokenizer_config.json, a bundled template name, or `-`
    /// (a template on standard input).
    #[arg(required_unless_present_any = ["fixture", "table"], conflicts_with_all = ["fixture", "table"])]
    template: Option<String>,
    /// A session fixture (`-`: standard input): adds the values its template ignores and
    /// prefix stability.
    #[arg(long, conflicts_with = "table")]
    fixture: Option<PathBuf>,
    /// A Markdown table of the bundled templates' main capabilities (as in docs/inspect.md).
    #[arg(long, conflicts_with = "json")]
    table: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Extra template variable for every probe, KEY=VALUE (VALUE parsed as JSON when it
    /// can be).
    #[arg(long = "var", value_name = "KEY=VALUE")]
    vars: Vec<String>,
    /// Wall-clock bound on the whole inspection, in seconds: every probe and prefix
    /// render together. Default 60 with a fixture (every prefix is rendered: a long
    /// conversation may need more), 20 for a template alone.
    #[arg(long, value_name = "SECONDS", value_parser = super::limits::parse_seconds)]
    deadline: Option<std::time::Duration>,
    /// Instead of the report: what each turn of the fixture makes a server with a prefix
    /// cache process again when the next user message arrives (tokens with a tokenizer,
    /// else bytes).
    #[arg(long, requires = "fixture")]
    turn_cost: bool,
    /// The tokenizer for --turn-cost (a model folder, tokenizer.json or
    /// tokenizer_config.json). Default: the fixture's "tokenizer", else the one beside
    /// its template.
    #[arg(long, requires = "turn_cost")]
    tokenizer: Option<PathBuf>,
}

/// `chatplate inspect`: the report on stdout; exit 1 when the template does not compile.
pub(super) fn run(args: InspectArgs) -> Result<i32> {
    if args.table {
        let mut variables = Map::new();
        for pair in &args.vars {
            let (key, value) = parse_var(pair)?;
            variables.insert(key, value);
        }
        output::print(&super::inspect_table::table(&variables)?)?;
        return Ok(0);
    }
    if let (true, Some(fixture)) = (args.turn_cost, &args.fixture) {
        return super::inspect_turn_cost::run(&super::inspect_turn_cost::TurnCostArgs {
            fixture,
            tokenizer: args.tokenizer.as_deref(),
            json: args.json,
            deadline: args.deadline,
        });
    }
    let input = Input::load(&args)?;
    let compiled = match CompiledTemplate::compile(&input.source, Limits::default()) {
        Ok(compiled) => Arc::new(compiled),
        Err(err) => {
            output::note(&input.error("", &err));
            return Ok(1);
        }
    };
    let outcome = with_deadline(&compiled, &input, args.deadline)?;
    let report = outcome.template?;
    let conversation = match outcome.conversation {
        Some(Ok(found)) => Some(found),
        Some(Err(InspectError::Render(err))) => {
            output::note(&input.error("the fixture does not render: ", &err));
            return Ok(1);
        }
        Some(Err(InspectError::Cancelled(cancelled))) => return Err(cancelled.into()),
        Some(Err(other)) => return Err(other.into()),
        None => None,
    };
    let training = super::inspect_training::warning(
        &input.name,
        &compiled,
        &report,
        input.conversation.as_ref(),
    );
    if let Some(warning) = training {
        output::note(&chatplate_render::visible::message(&warning));
    }
    if args.json {
        let mut json = report.to_json();
        if let Json::Object(object) = &mut json {
            object.insert("template".into(), Json::from(input.name.clone()));
            if let Some(found) = &conversation {
                if let Json::Object(more) = found.to_json() {
                    object.extend(more);
                }
            }
        }
        output::print_json(&json, true)?;
    } else {
        // Names, roles and the template's own error messages: escaped.
        let mut text = super::inspect_text::template_text(&input.name, &report);
        if let Some(found) = &conversation {
            text.push_str(&super::inspect_text::conversation_text(
                found,
                &input.messages,
            ));
        }
        output::print_visible(&text)?;
    }
    Ok(0)
}

/// The template, its name, the probe settings and, for a fixture, its conversation.
struct Input {
    name: String,
    /// Where the template is, for error positions (see `diagnostic::place`).
    place: String,
    source: String,
    settings: ProbeSettings,
    conversation: Option<Conversation>,
    /// The roles of the fixture's messages, for the report.
    messages: Vec<String>,
}

impl Input {
    /// A render error of this template, as the CLI reports it, its message after `lead`.
    fn error(&self, lead: &str, err: &RenderError) -> String {
        super::diagnostic::located_error(err, lead, &self.place, &self.source)
    }

    fn load(args: &InspectArgs) -> Result<Self> {
        let mut clock = None;
        let mut conversation = None;
        let (name, place, source, mut variables) = match (&args.template, &args.fixture) {
            (Some(template), _) => {
                // A model's named templates are chosen as transformers would for a
                // conversation without tools; `TARGET#NAME` picks one.
                let found = open_template(template)?.choose(false)?;
                let variables = found.token_variables();
                let place = super::diagnostic::place(&found);
                (found.name, place, found.source, variables)
            }
            (None, Some(path)) => {
                let (template, found) = super::render::fixture_template(path, None, None)?;
                let variables = found.variables.clone();
                clock = found.clock;
                conversation = Some(found);
                let place = super::diagnostic::place(&template);
                (
                    shown(path).display().to_string(),
                    place,
                    template.source,
                    variables,
                )
            }
            (None, None) => return Err(anyhow!("give a TEMPLATE or --fixture FIXTURE")),
        };
        for pair in &args.vars {
            let (key, value) = parse_var(pair)?;
            variables.insert(key, value);
        }
        with_token_defaults(&mut variables);
        let defaults = ProbeSettings::default();
        let settings = ProbeSettings {
            variables,
            clock: clock.unwrap_or(defaults.clock),
        };
        let messages = conversation
            .iter()
            .flat_map(|c| &c.messages)
            .map(|m| m["role"].as_str().unwrap_or("?").to_string())
            .collect();
        Ok(Input {
            name,
            place,
            source,
            settings,
            conversation,
            messages,
        })
    }
}

/// What the worker found.
struct Outcome {
    template: Result<TemplateReport, inspect::Cancelled>,
    conversation: Option<Result<ConversationReport, InspectError>>,
}

/// Runs the inspection on a worker thread and gives up past a deadline, `--deadline` or
/// [`inspect::inspection_deadline`] (a template can make one render slow in ways fuel
/// does not count; the worker is then cancelled).
fn with_deadline(
    compiled: &Arc<CompiledTemplate>,
    input: &Input,
    given: Option<std::time::Duration>,
) -> Result<Outcome> {
    let cancel = CancelToken::new();
    let (sender, receiver) = std::sync::mpsc::channel();
    let worker = Arc::clone(compiled);
    let token = cancel.clone();
    let settings = input.settings.clone();
    let conversation = input.conversation.clone();
    std::thread::Builder::new()
        .name("chatplate-inspect".into())
        .spawn(move || {
            let template = inspect::inspect_template(&worker, &settings, &token);
            let conversation =
                conversation.map(|c| inspect::inspect_conversation(&worker, &c, &token));
            let _ = sender.send(Outcome {
                template,
                conversation,
            });
        })?;
    let deadline = given.unwrap_or_else(|| {
        inspect::inspection_deadline(&compiled.limits(), input.conversation.is_some())
    });
    match receiver.recv_timeout(deadline) {
        Ok(outcome) => Ok(outcome),
        Err(_) => {
            cancel.cancel();
            Err(anyhow!(
                "the probes did not finish within {:.1} s (the inspection's bound; raise it \
                 with --deadline)",
                deadline.as_secs_f64()
            ))
        }
    }
}

/// transformers always passes the tokenizer's `bos_token` and `eos_token`; a template
/// without that metadata gets empty ones, so `bos_token + ...` does not fail every probe.
pub(super) fn with_token_defaults(variables: &mut Map<String, Json>) {
    for key in ["bos_token", "eos_token"] {
        variables.entry(key).or_insert_with(|| Json::from(""));
    }
}
