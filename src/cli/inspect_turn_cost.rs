//! `chatplate inspect --fixture F --turn-cost`: what each turn of the fixture makes a
//! server with a prefix cache process again when the next user message arrives, in
//! tokens of the session's tokenizer (or `--tokenizer`), else in bytes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use serde_json::{json, Value as Json};

use super::output;
use super::session_input::{input_dir, load_session, shown};
use chatplate_core::catalog::TemplateAccess;
use chatplate_core::inspect::{self, ByteCounter, TurnCostRun, TurnCosts, TurnCounter};
use chatplate_core::tokens::{expect::session_tokenizer, TokenizerError, TokenizerFiles};
use chatplate_render::{CompiledTemplate, Limits};

/// What `--turn-cost` was given.
pub(super) struct TurnCostArgs<'a> {
    pub fixture: &'a Path,
    pub tokenizer: Option<&'a Path>,
    pub json: bool,
    pub deadline: Option<std::time::Duration>,
}

/// Prints the table; exit 1 when the template does not compile.
pub(super) fn run(args: &TurnCostArgs) -> Result<i32> {
    let (template, conversation) = super::render::fixture_template(args.fixture, None, None)?;
    let compiled = match CompiledTemplate::compile(&template.source, Limits::default()) {
        Ok(compiled) => Arc::new(compiled),
        Err(err) => {
            output::note(&format!("{}: {}", template.name, err.message));
            return Ok(1);
        }
    };
    let (counter, tokenizer) = counter(args)?;
    let mut settings = conversation.clone();
    let messages = std::mem::take(&mut settings.messages)
        .into_iter()
        .map(Arc::new)
        .collect();
    let source: Arc<str> = template.source.as_str().into();
    let bound = args
        .deadline
        .unwrap_or_else(|| inspect::inspection_deadline(&compiled.limits(), true));
    let costs = super::knobs::within(bound, move |cancel| {
        let run = TurnCostRun {
            template: &compiled,
            source,
            settings: Arc::new(settings),
            messages,
            counter: counter.as_ref(),
            whole: true,
            budget: None,
        };
        inspect::turn_costs(&run, None, cancel)
    })?;
    let name = shown(args.fixture).display().to_string();
    if args.json {
        output::print_json(&to_json(&name, tokenizer.as_deref(), &costs), true)?;
    } else {
        output::print_visible(&text(&name, tokenizer.as_deref(), &costs))?;
    }
    Ok(0)
}

/// The counter: the tokenizer given or the session's, else bytes (with a note).
fn counter(args: &TurnCostArgs) -> Result<(Box<dyn TurnCounter>, Option<String>)> {
    let files = match args.tokenizer {
        Some(path) => Some(TokenizerFiles::locate(path)?),
        None => {
            let session = load_session(args.fixture)?;
            let dir = input_dir(args.fixture);
            // As the fixture's template: the user named the fixture themselves.
            match session_tokenizer(&session, &dir, &TemplateAccess::Anywhere) {
                Ok(files) => Some(files),
                Err(TokenizerError::Unspecified) => None,
                Err(err) => return Err(err.into()),
            }
        }
    };
    let Some(files) = files else {
        return Ok((Box::new(ByteCounter), None));
    };
    token_counter(&files)
}

#[cfg(feature = "tokens")]
fn token_counter(files: &TokenizerFiles) -> Result<(Box<dyn TurnCounter>, Option<String>)> {
    let tokenizer = chatplate_core::tokens::shared(files)?;
    let path: PathBuf = files.tokenizer.clone();
    Ok((
        Box::new(inspect::TokenCounter(tokenizer)),
        Some(path.display().to_string()),
    ))
}

#[cfg(not(feature = "tokens"))]
fn token_counter(_files: &TokenizerFiles) -> Result<(Box<dyn TurnCounter>, Option<String>)> {
    output::note("built without the tokens feature: counting bytes");
    Ok((Box::new(ByteCounter), None))
}

/// The table.
fn text(name: &str, tokenizer: Option<&str>, costs: &TurnCosts) -> String {
    let unit = match tokenizer {
        Some(path) => format!("tokens of {path}"),
        None => "bytes: no tokenizer is named by the session, beside its template or by \
                 --tokenizer"
            .to_string(),
    };
    let mut out = format!(
        "{name}: what a server with a prefix cache processes again when each user message \
         arrives ({unit})\n\n"
    );
    if costs.turns.is_empty() {
        out.push_str("  (no turn: no user message follows a reply)\n");
        return out;
    }
    out.push_str(&format!(
        "  {:>4}  {:>7}  {:>9}  {:>9}  {:>12}\n",
        "turn", "message", "request", "kept", "re-processed"
    ));
    let mut sent = 0;
    for (index, turn) in costs.turns.iter().enumerate() {
        let number = format!("#{}", turn.user + 1);
        match &turn.cost {
            Ok(cost) => {
                let prompt = cost.prompt.unwrap_or_default();
                sent += prompt;
                out.push_str(&format!(
                    "  {:>4}  {number:>7}  {prompt:>9}  {:>9}  {:>12}\n",
                    index + 1,
                    prompt - cost.reprocessed,
                    cost.reprocessed
                ));
            }
            Err(error) => out.push_str(&format!("  {:>4}  {number:>7}  {error}\n", index + 1)),
        }
    }
    out.push_str(&format!(
        "  {:>4}  {:>7}  {sent:>9}  {:>9}  {:>12}\n",
        "all",
        "",
        sent - costs.total(),
        costs.total()
    ));
    out
}

fn to_json(name: &str, tokenizer: Option<&str>, costs: &TurnCosts) -> Json {
    let turns: Vec<Json> = costs
        .turns
        .iter()
        .map(|turn| match &turn.cost {
            Ok(cost) => json!({
                "message": turn.user + 1,
                "request": cost.prompt,
                "kept": cost.prompt.map(|p| p - cost.reprocessed),
                "reprocessed": cost.reprocessed,
            }),
            Err(error) => json!({"message": turn.user + 1, "error": error}),
        })
        .collect();
    json!({
        "fixture": name,
        "unit": costs.unit.name(),
        "tokenizer": tokenizer,
        "turns": turns,
        "reprocessed": costs.total(),
    })
}
