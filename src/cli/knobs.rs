//! `chatplate knobs`: the template's switches (the variables it reads besides the
//! standard ones), each with its value and what flipping it does to a conversation's
//! prompt: the built-in sample (three user turns, reasoning in the two replies), or a
//! fixture's.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, Result};
use clap::Args;
use serde_json::json;

use super::output;
use super::render::parse_var;
use super::session_input::{open_template, shown};
use chatplate_core::inspect::{self, Knob};
use chatplate_render::{CancelToken, CompiledTemplate, Conversation, Limits};

#[derive(Debug, Args)]
pub(super) struct KnobsArgs {
    /// Template: a .jinja file, tokenizer_config.json, a model, a bundled template name,
    /// or `-` (standard input). Default: the fixture's template.
    #[arg(required_unless_present = "fixture")]
    template: Option<String>,
    /// Flip the knobs on this fixture's conversation instead of the built-in sample.
    #[arg(long)]
    fixture: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// A template variable for every render, KEY=VALUE (VALUE parsed as JSON when it
    /// can be): the knob's value to flip from.
    #[arg(long = "var", value_name = "KEY=VALUE")]
    vars: Vec<String>,
    /// Wall-clock bound on all the renders, in seconds (default: 20, 60 with a fixture).
    #[arg(long, value_name = "SECONDS", value_parser = super::limits::parse_seconds)]
    deadline: Option<std::time::Duration>,
}

/// `chatplate knobs`: the list on stdout; exit 1 when the template does not compile.
pub(super) fn run(args: &KnobsArgs) -> Result<i32> {
    let (name, source, conversation, sample) = input(args)?;
    let compiled = match CompiledTemplate::compile(&source, Limits::default()) {
        Ok(compiled) => Arc::new(compiled),
        Err(err) => {
            output::note(&format!("{name}: {}", err.message));
            return Ok(1);
        }
    };
    let bound = args.deadline.unwrap_or_else(|| {
        inspect::inspection_deadline(&compiled.limits(), args.fixture.is_some())
    });
    let knobs = within(bound, move |cancel| {
        inspect::knobs(&compiled, &conversation, cancel)
    })?;
    if args.json {
        let json = json!({
            "template": name,
            "conversation": sample,
            "knobs": knobs.iter().map(Knob::to_json).collect::<Vec<_>>(),
        });
        output::print_json(&json, true)?;
    } else {
        output::print_visible(&text(&name, &sample, &knobs))?;
    }
    Ok(0)
}

/// The template's name and source, the conversation, and what the conversation is.
fn input(args: &KnobsArgs) -> Result<(String, String, Conversation, String)> {
    let (fixture, sample) = match &args.fixture {
        Some(path) => {
            let (template, conversation) = super::render::fixture_template(path, None, None)?;
            let named = shown(path).display().to_string();
            (Some((template, conversation)), named)
        }
        None => (None, "the built-in sample".to_string()),
    };
    let (name, source, mut conversation) = match (&args.template, fixture) {
        (Some(target), fixture) => {
            let found = open_template(target)?.choose(false)?;
            let mut conversation = match fixture {
                Some((_, conversation)) => conversation,
                None => inspect::sample_conversation(),
            };
            for (key, value) in found.token_variables() {
                conversation.variables.entry(key).or_insert(value);
            }
            (found.name, found.source, conversation)
        }
        (None, Some((template, conversation))) => (sample.clone(), template.source, conversation),
        (None, None) => return Err(anyhow!("give a TEMPLATE or --fixture FIXTURE")),
    };
    for pair in &args.vars {
        let (key, value) = parse_var(pair)?;
        conversation.variables.insert(key, value);
    }
    super::inspect::with_token_defaults(&mut conversation.variables);
    Ok((name, source, conversation, sample))
}

/// Runs `work` on a thread of its own, cancelled past `bound`.
pub(super) fn within<T: Send + 'static>(
    bound: std::time::Duration,
    work: impl FnOnce(&CancelToken) -> Result<T, inspect::Cancelled> + Send + 'static,
) -> Result<T> {
    let cancel = CancelToken::new();
    let token = cancel.clone();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("chatplate-knobs".into())
        .spawn(move || {
            let _ = sender.send(work(&token));
        })?;
    match receiver.recv_timeout(bound) {
        Ok(Ok(found)) => Ok(found),
        Ok(Err(cancelled)) => Err(cancelled.into()),
        Err(_) => {
            cancel.cancel();
            Err(anyhow!(
                "the renders did not finish within {:.1} s (raise the bound with --deadline)",
                bound.as_secs_f64()
            ))
        }
    }
}

/// The text report.
fn text(name: &str, sample: &str, knobs: &[Knob]) -> String {
    let mut out = format!("{name}: each knob flipped on {sample}\n\n");
    if knobs.is_empty() {
        out.push_str("  (none: the template reads no variables beyond the standard ones)\n");
    }
    let width = knobs.iter().map(|k| k.name.len()).max().unwrap_or(0);
    for (index, knob) in knobs.iter().enumerate() {
        out.push_str(&format!(
            "  {:<width$}  {}\n",
            knob.name,
            knob.shown_value()
        ));
        let line = match &knob.flip {
            Some(flip) => match &flip.change {
                Ok(change) if change.is_none() => {
                    format!("= {}: no change on this conversation", flip.to)
                }
                Ok(change) => {
                    let mut line =
                        format!("= {}: {}, {}", flip.to, change.summary(), change.shown());
                    if change.retains_reasoning() {
                        let (now, then) = change.reasoning_shown;
                        line.push_str(&format!(
                            "\n      reasoning retention: the prompt shows {then} of the \
                             conversation's reasoning texts instead of {now}"
                        ));
                    }
                    line
                }
                Err(error) => format!("= {}: does not render: {error}", flip.to),
            },
            None if index >= inspect::MAX_PROBED => "(not probed)".into(),
            None => format!("not a boolean; default {}", default_text(knob)),
        };
        out.push_str(&format!("      {line}\n"));
    }
    out
}

fn default_text(knob: &Knob) -> String {
    match &knob.default {
        inspect::VariableDefault::Value(value) => value.to_string(),
        inspect::VariableDefault::Expression(text) => text.clone(),
        inspect::VariableDefault::Undefined => "none written".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_list_says_why() {
        let out = text("t.jinja", "the built-in sample", &[]);
        assert!(
            out.contains("(none: the template reads no variables"),
            "{out}"
        );
    }
}
