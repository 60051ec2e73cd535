//! `chatplate lint`: a verdict on templates for people and for CI. Opens every TARGET
//! as the other commands do (a `.jinja`, a model folder and the GGUFs in it, a
//! `tokenizer_config.json`, a `.gguf`, a model id, a folder of these), lints each
//! template on the engine's rules ([`chatplate_core::lint`]) on all cores, and prints
//! the findings as text, JSON, SARIF or GitHub annotations. Exit 0: nothing at or
//! above `--fail-on`; 1: findings that are; 2: a target or template could not be linted.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{anyhow, Result};
use clap::{Args, ValueEnum};

use chatplate_core::catalog::{self, model, TemplateSource};
use chatplate_core::compare::{Engine, EngineSetup};
use chatplate_core::lint::{self, LintOptions, Policy, Rule, Severity, TemplateLint};

use super::limits::LimitArgs;
use super::output;
use super::session_input::open_template;

/// How long one template's lint may take, in units of one render's deadline: the probes
/// are about a hundred renders of small conversations.
const DEADLINE_RENDERS: u32 = 4;

#[derive(Debug, Args)]
pub(super) struct LintArgs {
    /// What to lint (repeatable): a .jinja file, a model folder (with the GGUFs in it),
    /// a tokenizer_config.json, a .gguf, a model id ORG/NAME[@REV] (HF cache, else the
    /// Hub), a bundled template's name, a folder of these, or `-` (standard input).
    #[arg(required = true, value_name = "TARGET")]
    targets: Vec<String>,
    /// Output: text (people), json, sarif (code scanning) or github (workflow
    /// annotations).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Exit 1 when a finding is at or above this severity: error, warning or info
    /// (default: the config file's "lint.fail_on", else error).
    #[arg(long, value_name = "SEVERITY", value_parser = parse_severity)]
    fail_on: Option<Severity>,
    /// Turn a rule off (repeatable); adds to the config file's "lint.allow".
    #[arg(long = "allow", value_name = "RULE", value_parser = parse_rule)]
    allow: Vec<Rule>,
    /// Make a rule's findings errors (repeatable); adds to the config file's "lint.deny".
    #[arg(long = "deny", value_name = "RULE", value_parser = parse_rule)]
    deny: Vec<Rule>,
    /// Render the template in this engine for `portability` instead of reading the
    /// table (repeatable): minijinja, hf-jinja, or a llama-server's URL for llama.cpp.
    #[arg(long = "engine", value_name = "NAME|URL")]
    engines: Vec<String>,
    /// Extra template variable for every probe, KEY=VALUE (VALUE parsed as JSON when it
    /// can be).
    #[arg(long = "var", value_name = "KEY=VALUE")]
    vars: Vec<String>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Sarif,
    Github,
}

fn parse_severity(text: &str) -> Result<Severity, String> {
    text.parse()
}

fn parse_rule(text: &str) -> Result<Rule, String> {
    text.parse()
}

/// `chatplate lint`.
pub(super) fn run(args: LintArgs) -> Result<i32> {
    let options = options(&args)?;
    let (templates, mut failed) = collect(&args.targets);
    let mut reports = lint_all(&templates, &options);
    reports.append(&mut failed);
    let text = match args.format {
        Format::Text => super::lint_text::text(&reports, &options.policy),
        Format::Json => json_text(&reports)?,
        Format::Sarif => sarif_text(&reports)?,
        Format::Github => super::lint_text::github(&reports),
    };
    match args.format {
        Format::Json | Format::Sarif => output::print(&text)?,
        Format::Text | Format::Github => output::print_visible(&text)?,
    }
    if args.format != Format::Text {
        for report in reports.iter().filter(|r| r.error.is_some()) {
            output::note(&format!(
                "chatplate: {}: {}",
                report.name,
                report.error.as_deref().unwrap_or_default()
            ));
        }
    }
    Ok(exit_code(&reports, &options.policy))
}

/// 2 when something could not be linted, else 1 when a finding fails the policy.
fn exit_code(reports: &[TemplateLint], policy: &Policy) -> i32 {
    if reports.iter().any(|r| r.error.is_some()) {
        2
    } else if reports.iter().any(|r| r.fails(policy)) {
        1
    } else {
        0
    }
}

/// The JSON report: one function, so the one place JSON text is made.
fn json_text(reports: &[TemplateLint]) -> Result<String> {
    Ok(chatplate_core::machine_output::to_json_pretty(&lint::json::report(reports))? + "\n")
}

/// The SARIF log: one function, so the one place SARIF text is made.
fn sarif_text(reports: &[TemplateLint]) -> Result<String> {
    Ok(chatplate_core::machine_output::to_json_pretty(&lint::sarif::report(reports))? + "\n")
}

/// The config file's policy with the flags on top, and the rest of the options.
fn options(args: &LintArgs) -> Result<LintOptions> {
    let mut policy = crate::lint_config::policy().map_err(|e| anyhow!(e))?;
    for rule in &args.allow {
        policy.allow(*rule).map_err(|e| anyhow!(e))?;
    }
    for rule in &args.deny {
        policy.deny(*rule);
    }
    if let Some(severity) = args.fail_on {
        policy.fail_on = severity;
    }
    let mut options = LintOptions::default();
    options.policy = policy;
    options.limits = args.limits.limits();
    for pair in &args.vars {
        let (key, value) = super::render::parse_var(pair)?;
        options.variables.insert(key, value);
    }
    let mut setup = EngineSetup::default();
    setup.limits = options.limits;
    for name in &args.engines {
        if name.contains("://") {
            chatplate_core::compare::check_server_url(name).map_err(|e| anyhow!(e))?;
            setup.llama_server = Some(name.trim_end_matches('/').to_string());
            options.engines.push(Engine::LlamaCpp);
        } else {
            let engine = super::compare::parse_engine(name).map_err(|e| anyhow!(e))?;
            options.engines.push(engine);
        }
    }
    options.setup = setup;
    Ok(options)
}

/// Every template the targets name, and the targets (or files in them) that could not
/// be opened, as reports with their error.
fn collect(targets: &[String]) -> (Vec<TemplateSource>, Vec<TemplateLint>) {
    let mut templates = Vec::new();
    let mut failed = Vec::new();
    for target in targets {
        let path = Path::new(target);
        if path.is_dir() && !model::is_model_folder(path) {
            let loaded = catalog::load_all(path);
            templates.extend(loaded.templates);
            failed.extend(
                loaded
                    .problems
                    .iter()
                    .map(|p| unreadable(target, &p.to_string())),
            );
            continue;
        }
        match open_template(target) {
            Ok(set) => match set.pinned.as_deref() {
                Some(_) => match set.choose(false) {
                    Ok(template) => templates.push(template),
                    Err(err) => failed.push(unreadable(target, &err.to_string())),
                },
                None => templates.extend(set.entries),
            },
            Err(err) => failed.push(unreadable(target, &format!("{err:#}"))),
        }
        if path.is_dir() {
            templates.extend(ggufs_in(path, &mut failed));
        }
    }
    (templates, failed)
}

/// The GGUF files directly inside a model folder: converted from the model, so their
/// templates are linted too (and compared with the folder's, `gguf-drift`).
fn ggufs_in(folder: &Path, failed: &mut Vec<TemplateLint>) -> Vec<TemplateSource> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = (entries.filter_map(Result::ok))
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "gguf") && p.is_file())
        .collect();
    paths.sort();
    let mut found = Vec::new();
    for path in paths {
        match catalog::load_set(&path) {
            Ok(set) => found.extend(set.entries),
            Err(err) => failed.push(unreadable(&path.display().to_string(), &err.to_string())),
        }
    }
    found
}

/// A report for something that could not be opened.
fn unreadable(target: &str, error: &str) -> TemplateLint {
    let template = TemplateSource::new(target, "", catalog::Origin::Inline);
    let mut report = TemplateLint::failed(&template, error);
    report.origin = target.to_string();
    report
}

/// Lints every template on all cores, in the order given.
fn lint_all(templates: &[TemplateSource], options: &LintOptions) -> Vec<TemplateLint> {
    let deadline = options.limits.deadline.saturating_mul(DEADLINE_RENDERS);
    let workers = std::thread::available_parallelism()
        .map_or(2, std::num::NonZeroUsize::get)
        .min(templates.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<TemplateLint>>> = Mutex::new(vec![None; templates.len()]);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(template) = templates.get(index) else {
                    break;
                };
                let report = lint_one(template, options, deadline);
                if let Ok(mut done) = done.lock() {
                    done[index] = Some(report);
                }
            });
        }
    });
    done.into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

fn lint_one(template: &TemplateSource, options: &LintOptions, deadline: Duration) -> TemplateLint {
    lint::lint_with_deadline(template, options, deadline)
        .unwrap_or_else(|err| TemplateLint::failed(template, err.to_string()))
}
