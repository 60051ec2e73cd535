//! Lint: a verdict on a template. Each rule is a general check built on the engine's
//! probes ([`crate::inspect`]): the capabilities say which conversations the template
//! claims to support, and the rules render those conversations and judge the prompts
//! (crashes, dropped system messages and reasoning, prefix stability, markers, the
//! generation prompt, the training mask, round trips), read what is around the template
//! (the tokenizer's BOS, the model's `response_template` and tokenizer, a GGUF's model)
//! or read its tokens without rendering (`sandbox-escape`, the portability table).
//!
//! One template, one [`TemplateLint`]: its [`Finding`]s, each with its [`Rule`], a
//! [`Severity`], where (a template line, else the conversation) and how to fix it. The
//! [`Policy`] turns rules off (`--allow`), raises them to errors (`--deny`) and says from
//! which severity a run fails. [`json`] and [`sarif`] give the machine-readable reports;
//! front ends print the text themselves.
//!
//! ```
//! use chatplate_core::lint::{lint_template, LintOptions, Rule};
//! use chatplate_core::{Origin, TemplateSource};
//!
//! let template = TemplateSource::new("evil", "{{ cycler.__init__.__globals__ }}", Origin::Inline);
//! let report = lint_template(&template, &LintOptions::default(), &Default::default())?;
//! let escape = &report.findings[0];
//! assert_eq!((escape.rule, escape.location.map(|l| l.line)), (Rule::SandboxEscape, Some(1)));
//! # Ok::<(), chatplate_core::lint::LintError>(())
//! ```

mod clock;
mod crash;
pub mod double_bos;
mod finding;
mod generation;
mod gguf_drift;
#[cfg(feature = "tokens")]
mod injection;
pub mod json;
mod lab;
mod markers;
mod mask;
mod policy;
pub mod portability;
mod round_trip;
mod rule;
mod sandbox;
pub mod sarif;
mod scenarios;
mod stability;
mod surroundings;
mod syntax;
mod system;
mod tool_args;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Map, Value as Json};

pub use finding::{Finding, Location, Severity};
pub use policy::{Policy, CONFIG_SECTION};
pub use rule::Rule;
pub use surroundings::{CurrentTemplate, Surroundings};

use crate::catalog::{Origin, TemplateSource};
use crate::compare::{Engine, EngineSetup};
use crate::inspect::{Cancelled, ProbeSettings};
use chatplate_render::{CancelToken, CompiledTemplate, Limits};
use lab::Lab;

/// How a run lints.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct LintOptions {
    /// Which rules run, and which are errors.
    pub policy: Policy,
    /// Bounds on each render.
    pub limits: Limits,
    /// Variables every probe gets on top of the template's special tokens (`--var`).
    pub variables: Map<String, Json>,
    /// Engines to render the template in for `portability` (else the table answers).
    pub engines: Vec<Engine>,
    /// Where those engines are.
    pub setup: EngineSetup,
}

/// One template's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateLint {
    /// The template's display name.
    pub name: String,
    /// Where it came from, for people (`file t.jinja`, `GGUF m.gguf`, ...).
    pub origin: String,
    /// The file the template was read from, when it was read from one.
    pub file: Option<PathBuf>,
    /// Whether the findings' lines are the lines of [`TemplateLint::file`] (a `.jinja`
    /// file; not a template inside a JSON config or a GGUF).
    pub lines_in_file: bool,
    /// What the rules found, in rule order.
    pub findings: Vec<Finding>,
    /// What could not be read around the template (the rules that needed it were
    /// skipped).
    pub notes: Vec<String>,
    /// Why the template could not be linted at all, when it could not.
    pub error: Option<String>,
}

impl TemplateLint {
    /// A template that could not be linted.
    pub fn failed(template: &TemplateSource, error: impl Into<String>) -> Self {
        TemplateLint {
            name: template.name.clone(),
            origin: template.origin_label(),
            file: template.watched_path().map(PathBuf::from),
            lines_in_file: false,
            findings: Vec::new(),
            notes: Vec::new(),
            error: Some(error.into()),
        }
    }

    /// Whether the policy fails the run on this template (an error to lint it counts).
    pub fn fails(&self, policy: &Policy) -> bool {
        self.error.is_some() || policy.fails(&self.findings)
    }
}

/// Why a template could not be linted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LintError {
    /// Stopped through its cancel token.
    #[error("the lint was cancelled")]
    Cancelled,
    /// Its renders did not finish in time.
    #[error("the lint did not finish within {:.0} s", .0.as_secs_f64())]
    TimedOut(Duration),
}

impl From<Cancelled> for LintError {
    fn from(_: Cancelled) -> Self {
        LintError::Cancelled
    }
}

/// Lints `template`, reading what is around it ([`Surroundings::of`]).
pub fn lint_template(
    template: &TemplateSource,
    options: &LintOptions,
    cancel: &CancelToken,
) -> Result<TemplateLint, LintError> {
    let surroundings = Surroundings::of(template);
    lint_with(template, &surroundings, options, cancel)
}

/// Lints `template` with what is known around it.
pub fn lint_with(
    template: &TemplateSource,
    surroundings: &Surroundings,
    options: &LintOptions,
    cancel: &CancelToken,
) -> Result<TemplateLint, LintError> {
    let findings = findings(template, surroundings, options, cancel)?;
    Ok(TemplateLint {
        name: template.name.clone(),
        origin: template.origin_label(),
        file: template.watched_path().map(PathBuf::from),
        lines_in_file: lines_in_file(template),
        findings: options.policy.apply(findings),
        notes: surroundings.notes.clone(),
        error: None,
    })
}

/// [`lint_template`] on a thread of its own, given up (and cancelled) after `deadline`:
/// a template can make a render slow in ways its step budget does not count.
pub fn lint_with_deadline(
    template: &TemplateSource,
    options: &LintOptions,
    deadline: Duration,
) -> Result<TemplateLint, LintError> {
    let cancel = CancelToken::new();
    let (sender, receiver) = mpsc::channel();
    let (template_copy, options_copy, token) = (template.clone(), options.clone(), cancel.clone());
    let spawned = std::thread::Builder::new()
        .name("chatplate-lint".into())
        .spawn(move || {
            let _ = sender.send(lint_template(&template_copy, &options_copy, &token));
        });
    if spawned.is_err() {
        return lint_template(template, options, &cancel);
    }
    receiver.recv_timeout(deadline).unwrap_or_else(|_| {
        cancel.cancel();
        Err(LintError::TimedOut(deadline))
    })
}

/// The findings before the policy's severities.
fn findings(
    template: &TemplateSource,
    surroundings: &Surroundings,
    options: &LintOptions,
    cancel: &CancelToken,
) -> Result<Vec<Finding>, LintError> {
    let policy = &options.policy;
    let source = chatplate_render::normalize_newlines(&template.source);
    let mut found = sandbox::check(&syntax::Scan::of(&source));
    if !found.is_empty() {
        // A template reaching for Python internals is hostile: it is not rendered.
        return Ok(found);
    }
    let compiled = match CompiledTemplate::compile(&template.source, options.limits) {
        Ok(compiled) => compiled,
        Err(err) => {
            found.push(crash::compile_error(&err));
            return Ok(found);
        }
    };
    let settings = settings(template, options);
    let lab = Lab::new(&compiled, surroundings, &settings, cancel)?;
    if !lab.caps.content.renders_user_message.value {
        found.push(crash::no_render(&lab));
        return Ok(found);
    }
    let scenarios = scenarios::claimed(&lab);
    let runs = |rule: Rule| policy.runs(rule);
    if runs(Rule::Crash) {
        found.extend(crash::check(&lab, &scenarios)?);
    }
    if runs(Rule::DoubleBos) {
        found.extend(double_bos::check(&lab)?);
    }
    if runs(Rule::ToolArgsString) {
        found.extend(tool_args::check(&lab)?);
    }
    if runs(Rule::SystemDropped) {
        found.extend(system::check(&lab)?);
    }
    if runs(Rule::ReasoningDropped) || runs(Rule::PrefixUnstable) {
        found.extend(stability::check(&lab)?);
    }
    if runs(Rule::MarkerBalance) {
        found.extend(markers::check(&lab, &scenarios)?);
    }
    if runs(Rule::GenerationPrompt) {
        found.extend(generation::check(&lab)?);
    }
    if runs(Rule::RoundTrip) {
        found.extend(round_trip::check(&lab)?);
    }
    if runs(Rule::ZeroMask) || runs(Rule::MaskUntrainedPrefix) {
        found.extend(mask::check(&lab)?);
    }
    #[cfg(feature = "tokens")]
    if runs(Rule::Injection) {
        found.extend(injection::check(&lab)?);
    }
    if runs(Rule::Portability) {
        found.extend(portability::check(
            &lab,
            &scenarios,
            &options.engines,
            &options.setup,
        )?);
    }
    if runs(Rule::Clock) {
        found.extend(clock::check(&lab));
    }
    if runs(Rule::GgufDrift) {
        found.extend(gguf_drift::check(&lab));
    }
    if cancel.is_cancelled() {
        return Err(LintError::Cancelled);
    }
    found.sort_by_key(|f| f.rule);
    Ok(found)
}

/// The probe variables: the template's special tokens (`""` where it names none, as
/// transformers always passes them), then the run's own.
fn settings(template: &TemplateSource, options: &LintOptions) -> ProbeSettings {
    let mut variables = template.token_variables();
    for key in ["bos_token", "eos_token"] {
        variables.entry(key).or_insert_with(|| Json::from(""));
    }
    variables.extend(options.variables.clone());
    ProbeSettings {
        variables,
        ..ProbeSettings::default()
    }
}

/// Whether the template is a whole `.jinja` file (so its lines are the file's).
fn lines_in_file(template: &TemplateSource) -> bool {
    let path = match &template.origin {
        Origin::File(path) => path,
        Origin::Model(model) => &model.file,
        _ => return false,
    };
    path.extension().is_some_and(|e| e == "jinja")
}
