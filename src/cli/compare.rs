//! `chatplate compare`: a session rendered by transformers (chatplate's engine, the
//! reference) and by other engines, and where each one's prompt parts from it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use serde_json::{json, Value as Json};

use super::check::ColorChoice;
use super::limits::LimitArgs;
use super::output;
use super::render::fixture_template;
use chatplate_core::compare::{
    self, first_divergence, text, Engine, EngineError, EngineRender, EngineSetup,
};
use chatplate_render::visible;

#[derive(Debug, Args)]
pub(super) struct CompareArgs {
    /// The session fixture (or OpenAI request body) to render.
    session: PathBuf,
    /// An engine to compare with transformers (repeatable): minijinja, python, hf-jinja.
    /// Default: every installed one.
    #[arg(long = "engine", value_name = "NAME", value_parser = parse_engine)]
    engines: Vec<Engine>,
    /// The Python interpreter with transformers for the `python` engine (default:
    /// $CHATPLATE_PYTHON).
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
    /// Seconds an external engine (python, hf-jinja) may run before it is stopped.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    timeout: u64,
    /// Print `{"renders": [...], "first_difference": N | null}` instead of text.
    #[arg(long)]
    json: bool,
    /// Use this named template of the model (`tool_use`, ...).
    #[arg(long, value_name = "NAME")]
    template_name: Option<String>,
    /// A folder the fixture's template path may also lead into (repeatable).
    #[arg(long = "template-root", value_name = "DIR")]
    template_roots: Vec<PathBuf>,
    /// Colour the diffs: `auto` (a terminal, and `NO_COLOR` unset), `always` or `never`.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    color: ColorChoice,
    #[command(flatten)]
    limits: LimitArgs,
}

pub(super) fn parse_engine(name: &str) -> Result<Engine, String> {
    match Engine::parse(name) {
        Some(Engine::Transformers) => {
            Err("transformers is always rendered: it is the reference".into())
        }
        Some(engine) => Ok(engine),
        None => Err("the engines are minijinja, python and hf-jinja".into()),
    }
}

/// `chatplate compare`: exit 0 when every engine agrees, 1 when any differs.
pub(super) fn run(args: CompareArgs) -> Result<i32> {
    let (template, conversation) = fixture_template(
        &args.session,
        args.template_name.as_deref(),
        Some(&args.template_roots),
    )?;
    let mut setup = EngineSetup::default();
    if args.python.is_some() {
        setup.python = args.python.clone();
    }
    setup.bounds = setup.bounds.with_timeout(Duration::from_secs(args.timeout));
    setup.limits = args.limits.limits();
    let chosen = chosen_engines(&args.engines);
    let mut renders = Vec::new();
    for engine in chosen {
        let render = compare::render(engine, &template.source, &conversation, &setup);
        if args.engines.is_empty() && matches!(render.result, Err(EngineError::NotInstalled { .. }))
        {
            let why = render
                .result
                .as_ref()
                .err()
                .map(ToString::to_string)
                .unwrap_or_default();
            output::note(&format!("chatplate: skipped {engine}: {why}"));
            continue;
        }
        renders.push(render);
    }
    let divergence = first_divergence(&renders);
    if args.json {
        output::print(&json_report(&renders, &template.name, divergence))?;
    } else {
        output::print(&text_report(&renders, args.color.enabled()))?;
    }
    Ok(i32::from(divergence.is_some()))
}

/// The reference first, then the named engines, or every other one.
fn chosen_engines(named: &[Engine]) -> Vec<Engine> {
    let others: Vec<Engine> = if named.is_empty() {
        Engine::ALL[1..].to_vec()
    } else {
        named.to_vec()
    };
    let mut chosen = vec![Engine::Transformers];
    for engine in others {
        if !chosen.contains(&engine) {
            chosen.push(engine);
        }
    }
    chosen
}

fn json_report(renders: &[EngineRender], template: &str, divergence: Option<usize>) -> String {
    let items: Vec<Json> = renders
        .iter()
        .map(|render| {
            let mut item = json!({
                "engine": render.engine.name(),
                "version": render.version,
                "template": template,
            });
            match &render.result {
                Ok(prompt) => item["prompt"] = json!(prompt),
                Err(err) => item["error"] = json!(err.to_string()),
            }
            item
        })
        .collect();
    let report = json!({"renders": items, "first_difference": divergence});
    format!(
        "{}\n",
        serde_json::to_string_pretty(&report).unwrap_or_default()
    )
}

fn text_report(renders: &[EngineRender], color: bool) -> String {
    let Some((reference, others)) = renders.split_first() else {
        return String::new();
    };
    let mut out = format!("{}: {}\n", heading(reference), summary(&reference.result));
    let mut agree = 0;
    for render in others {
        let (line, same) = versus(reference, render, color);
        agree += usize::from(same);
        out.push_str(&line);
    }
    out.push_str(&format!(
        "{agree} of {} engines agree with transformers\n",
        others.len()
    ));
    out
}

fn heading(render: &EngineRender) -> String {
    let version = visible::for_terminal(&render.version).into_owned();
    format!("{} ({version})", render.engine)
}

fn summary(result: &Result<String, EngineError>) -> String {
    let error = result.as_ref().map_err(ToString::to_string);
    text::summary(error.as_deref().map(String::as_str).map_err(String::as_str))
}

/// One engine against the reference: its lines, and whether it agrees.
fn versus(reference: &EngineRender, render: &EngineRender, color: bool) -> (String, bool) {
    let (reference_heading, heading) = (heading(reference), heading(render));
    let (reference_error, error) = (error_text(reference), error_text(render));
    let reference_side = text::Side {
        heading: &reference_heading,
        name: reference.engine.name(),
        result: reference
            .result
            .as_deref()
            .map_err(|_| reference_error.as_str()),
    };
    let side = text::Side {
        heading: &heading,
        name: render.engine.name(),
        result: render.result.as_deref().map_err(|_| error.as_str()),
    };
    text::versus(&reference_side, &side, color)
}

fn error_text(render: &EngineRender) -> String {
    render
        .result
        .as_ref()
        .err()
        .map(ToString::to_string)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transformers_is_first_and_engines_are_not_repeated() {
        let named = [Engine::HfJinja, Engine::HfJinja, Engine::MiniJinja];
        assert_eq!(
            chosen_engines(&named),
            [Engine::Transformers, Engine::HfJinja, Engine::MiniJinja]
        );
        assert_eq!(chosen_engines(&[]), Engine::ALL);
    }
}
