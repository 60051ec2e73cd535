//! `chatplate compare`: a session rendered by transformers (chatplate's engine, the
//! reference) and by other engines, and where each one's prompt parts from it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use serde_json::{json, Value as Json};

use super::check::ColorChoice;
use super::compare_report;
use super::compare_sides::{render_sides, Shown, SideArgs};
use super::limits::LimitArgs;
use super::output;
use super::render::fixture_session;
use chatplate_core::compare::{self, first_divergence, text, Engine, EngineError, EngineSetup};
use chatplate_render::visible;

#[derive(Debug, Args)]
pub(super) struct CompareArgs {
    /// The session fixture (or OpenAI request body) to render; with --report, a folder of
    /// fixtures or a conformance corpus.
    session: PathBuf,
    /// An engine to compare with transformers (repeatable): minijinja, minijinja@2,
    /// mistralrs, python, hf-jinja,
    /// a llama-server's URL (`http://127.0.0.1:8080`) for llama.cpp,
    /// `mistral-common:TOKENIZER`, a plug-in (`cmd:PROGRAM ARGS`, `lines:PROGRAM ARGS`,
    /// `py:FILE.py:FUNCTION`) or a name from the config file's "engines". Default: every
    /// installed one.
    #[arg(long = "engine", value_name = "NAME|URL", value_parser = parse_engine_arg)]
    engines: Vec<EngineArg>,
    /// The Python interpreter with transformers for the `python` engine (default:
    /// $CHATPLATE_PYTHON).
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,
    /// Seconds an external engine (python, hf-jinja, each llama-server request) may take
    /// before it is stopped.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    timeout: u64,
    /// Print `{"renders": [...], "first_difference": N | null}` instead of text.
    #[arg(long)]
    json: bool,
    /// Also render the conversation with this template (repeatable): a file, a model
    /// folder, a GGUF, a bundled name, or a model id (`ORG/NAME[@REV][#ENTRY]`).
    #[arg(long = "template", value_name = "SOURCE")]
    templates: Vec<String>,
    /// Also render it with the session's model at this revision (repeatable): a
    /// branch, tag or commit, from the Hugging Face cache or fetched from the Hub.
    #[arg(long = "revision", value_name = "REV")]
    revisions: Vec<String>,
    /// SESSION is a folder of fixtures (or a conformance corpus): compare every one
    /// with the --engine and print the differences grouped by cause.
    #[arg(long, conflicts_with_all = ["templates", "revisions"])]
    report: bool,
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

/// An engine named with `--engine`: a name, or a llama-server's URL.
#[derive(Debug, Clone)]
struct EngineArg {
    engine: Engine,
    url: Option<String>,
}

fn parse_engine_arg(name: &str) -> Result<EngineArg, String> {
    if name.contains("://") {
        compare::check_server_url(name)?;
        let url = Some(name.trim_end_matches('/').to_string());
        return Ok(EngineArg {
            engine: Engine::LlamaCpp,
            url,
        });
    }
    parse_engine(name).map(|engine| EngineArg { engine, url: None })
}

/// An engine named by its name (`check --engines`, and `compare --engine` without a URL).
pub(super) fn parse_engine(name: &str) -> Result<Engine, String> {
    if compare::plugin::is_plugin(name) {
        return Engine::plugin(None, name, std::path::Path::new("."));
    }
    if let Some(spec) = crate::engines_config::named(name)? {
        return Engine::plugin(Some(name), &spec.command, &spec.base);
    }
    parse_builtin(name)
}

/// A built-in engine, by its name.
fn parse_builtin(name: &str) -> Result<Engine, String> {
    match Engine::parse(name) {
        Some(Engine::Transformers) => {
            Err("transformers is always rendered: it is the reference".into())
        }
        Some(engine) => Ok(engine),
        None => Err(
            "the engines are minijinja, minijinja@2, mistralrs, python, hf-jinja, a llama-server's http:// URL \
                     for llama.cpp, mistral-common:TOKENIZER, a plug-in `cmd:PROGRAM [ARGS]`, \
                     `lines:PROGRAM [ARGS]` or `py:FILE.py:FUNCTION`, and the names the \
                     config file's \"engines\" gives"
                .into(),
        ),
    }
}

/// The one llama-server URL among the named engines (two different ones are refused).
fn llama_server_url(named: &[EngineArg]) -> Result<Option<String>> {
    let mut urls: Vec<&String> = named.iter().filter_map(|arg| arg.url.as_ref()).collect();
    urls.dedup();
    match urls.as_slice() {
        [] => Ok(None),
        [url] => Ok(Some((*url).clone())),
        _ => anyhow::bail!("compare takes one llama-server URL at a time"),
    }
}

/// `chatplate compare`: exit 0 when every engine agrees, 1 when any differs.
pub(super) fn run(args: CompareArgs) -> Result<i32> {
    let mut setup = EngineSetup::default();
    setup.llama_server = llama_server_url(&args.engines)?;
    if args.python.is_some() {
        setup.python = args.python.clone();
    }
    setup.bounds = setup.bounds.with_timeout(Duration::from_secs(args.timeout));
    setup.limits = args.limits.limits();
    let named: Vec<Engine> = args.engines.iter().map(|arg| arg.engine).collect();
    if args.report {
        return compare_report::run(
            &args.session,
            &named,
            &setup,
            &args.template_roots,
            args.json,
        );
    }
    let (session, template, conversation) = fixture_session(
        &args.session,
        args.template_name.as_deref(),
        Some(&args.template_roots),
    )?;
    let sides = SideArgs {
        templates: &args.templates,
        revisions: &args.revisions,
    };
    // Sides named without engines compare with the reference alone.
    let chosen = match (named.is_empty(), sides.any()) {
        (true, true) => vec![Engine::Transformers],
        _ => chosen_engines(&named),
    };
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
        renders.push(Shown::engine(render, &template));
    }
    renders.extend(render_sides(&sides, &session, &template, &setup)?);
    let divergence = first_divergence(&renders);
    if args.json {
        output::print(&json_report(&renders, divergence))?;
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

fn json_report(renders: &[Shown], divergence: Option<usize>) -> String {
    let items: Vec<Json> = renders
        .iter()
        .map(|shown| {
            let render = &shown.render;
            let mut item = json!({
                "engine": render.engine.name(),
                "version": render.version,
                "template": shown.template,
                "source": shown.source,
            });
            match &render.result {
                Ok(prompt) => item["prompt"] = json!(prompt),
                Err(err) => item["error"] = json!(err.to_string()),
            }
            if let Some(url) = &render.url {
                item["url"] = json!(url);
            }
            if let Some(note) = &shown.render.note {
                item["note"] = json!(note);
            }
            if let Some(tokens) = &shown.render.tokens {
                item["tokens"] = tokens_json(tokens);
            }
            item
        })
        .collect();
    let report = json!({"renders": items, "first_difference": divergence});
    format!(
        "{}\n",
        chatplate_core::machine_output::to_json_pretty(&report).unwrap_or_default()
    )
}

/// A token-level comparison: both counts and the first differing token.
fn tokens_json(tokens: &compare::TokenComparison) -> Json {
    let token = |token: &Option<compare::Token>| {
        token
            .as_ref()
            .map(|token| json!({"id": token.id, "text": token.text}))
    };
    let first = tokens.first.as_ref().map(|first| {
        json!({
            "index": first.index,
            "byte": first.byte,
            "reference": token(&first.reference),
            "engine": token(&first.engine),
        })
    });
    json!({
        "reference": tokens.reference_count,
        "engine": tokens.engine_count,
        "first_difference": first,
    })
}

fn text_report(renders: &[Shown], color: bool) -> String {
    let Some((reference, others)) = renders.split_first() else {
        return String::new();
    };
    let reference_error = reference.error_text();
    let reference_side = reference.side(&reference_error);
    let mut out = format!(
        "{}: {}\n",
        reference.heading,
        text::summary(reference_side.result)
    );
    let mut agree = 0;
    for shown in others {
        let error = shown.error_text();
        let side = shown.side(&error);
        let (line, same) = match &shown.render.tokens {
            Some(tokens) => text::tokens_versus(&reference_side, &side, tokens),
            None => text::versus(&reference_side, &side, color),
        };
        agree += usize::from(same);
        out.push_str(&line);
        if let Some(note) = &shown.render.note {
            out.push_str(&format!("  note: {}\n", visible::message(note)));
        }
    }
    let what = match others.iter().any(|shown| shown.is_side) {
        true => "renders",
        false => "engines",
    };
    out.push_str(&format!(
        "{agree} of {} {what} agree with transformers\n",
        others.len()
    ));
    out
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
