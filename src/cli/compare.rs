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
use chatplate_core::check::marked_diff;
use chatplate_core::compare::{
    self, first_difference, first_divergence, line_col, Engine, EngineError, EngineRender,
    EngineSetup,
};
use chatplate_render::visible;

/// Bytes of each prompt shown around the first difference.
const EXCERPT_BYTES: usize = 30;

#[derive(Debug, Args)]
pub(super) struct CompareArgs {
    /// The session fixture (or OpenAI request body) to render.
    session: PathBuf,
    /// An engine to compare with transformers (repeatable): minijinja, python, hf-jinja,
    /// or a llama-server's URL (`http://127.0.0.1:8080`) for llama.cpp. Default: every
    /// installed one.
    #[arg(long = "engine", value_name = "NAME|URL", value_parser = parse_engine)]
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

fn parse_engine(name: &str) -> Result<EngineArg, String> {
    if name.contains("://") {
        compare::check_server_url(name)?;
        let url = Some(name.trim_end_matches('/').to_string());
        return Ok(EngineArg {
            engine: Engine::LlamaCpp,
            url,
        });
    }
    match Engine::parse(name) {
        Some(Engine::Transformers) => {
            Err("transformers is always rendered: it is the reference".into())
        }
        Some(engine) => Ok(EngineArg { engine, url: None }),
        None => Err(
            "the engines are minijinja, python, hf-jinja, and a llama-server's \
                     http:// URL for llama.cpp"
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
    let (template, conversation) = fixture_template(
        &args.session,
        args.template_name.as_deref(),
        Some(&args.template_roots),
    )?;
    let named: Vec<Engine> = args.engines.iter().map(|arg| arg.engine).collect();
    let mut setup = EngineSetup::default();
    setup.llama_server = llama_server_url(&args.engines)?;
    if args.python.is_some() {
        setup.python = args.python.clone();
    }
    setup.bounds = setup.bounds.with_timeout(Duration::from_secs(args.timeout));
    setup.limits = args.limits.limits();
    let chosen = chosen_engines(&named);
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
            if let Some(url) = &render.url {
                item["url"] = json!(url);
            }
            if let Some(note) = &render.note {
                item["note"] = json!(note);
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
        if let Some(note) = &render.note {
            out.push_str(&format!("  note: {}\n", visible::message(note)));
        }
    }
    out.push_str(&format!(
        "{agree} of {} engines agree with transformers\n",
        others.len()
    ));
    out
}

fn heading(render: &EngineRender) -> String {
    let version = visible::for_terminal(&render.version).into_owned();
    match &render.url {
        Some(url) => format!(
            "{} ({version}, {})",
            render.engine,
            visible::for_terminal(url)
        ),
        None => format!("{} ({version})", render.engine),
    }
}

fn summary(result: &Result<String, EngineError>) -> String {
    match result {
        Ok(prompt) => format!("{} bytes", prompt.len()),
        Err(err) => format!("error: {}", visible::message(&err.to_string())),
    }
}

/// One engine against the reference: its lines, and whether it agrees.
fn versus(reference: &EngineRender, render: &EngineRender, color: bool) -> (String, bool) {
    let head = heading(render);
    match (&reference.result, &render.result) {
        (Ok(want), Ok(got)) => match first_difference(want, got) {
            None => (format!("{head}: same\n"), true),
            Some(at) => (
                difference(&head, render.engine, want, got, at, color),
                false,
            ),
        },
        (Err(_), Err(err)) => {
            let why = visible::message(&err.to_string());
            (format!("{head}: fails too: {why}\n"), true)
        }
        (_, result) => (format!("{head}: {}\n", summary(result)), false),
    }
}

fn difference(head: &str, engine: Engine, want: &str, got: &str, at: usize, color: bool) -> String {
    let (line, col) = line_col(want, at);
    let mut out = format!("{head}: differs at byte {at} (line {line}:{col})\n");
    out.push_str(&format!("  transformers: {}\n", excerpt(want, at)));
    out.push_str(&format!("  {engine:>12}: {}\n", excerpt(got, at)));
    out.push_str(&marked_diff(want, got, color));
    out
}

/// The bytes of `text` around `at`, widened to whole characters, quoted with escapes.
fn excerpt(text: &str, at: usize) -> String {
    let mut start = at.saturating_sub(EXCERPT_BYTES).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + EXCERPT_BYTES).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let dots = |cut: bool| if cut { "…" } else { "" };
    format!(
        "{}{}{}",
        dots(start > 0),
        visible::quoted(&text[start..end]),
        dots(end < text.len())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_widen_to_whole_characters() {
        let text = format!("{}é{}", "a".repeat(40), "b".repeat(40));
        // Byte 41 is inside é.
        let shown = excerpt(&text, 41);
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert!(shown.contains('é'), "{shown}");
    }

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
