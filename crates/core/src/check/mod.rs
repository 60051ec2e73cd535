//! Fixture checking: re-render each session and compare with its `expected`.
//!
//! Used by `chatplate check` and by the test suite. Fixtures come from strangers (pull
//! requests), so every fixture found ends as passed or failed whatever it does: a panic
//! is caught and becomes that fixture's failure ([`check_all`]); `chatplate check` goes
//! further and runs fixtures in child processes ([`isolate`]), so even an abort or a
//! stack overflow is only the failure of the fixture that caused it.

mod child;
pub mod ci_report;
mod drift;
mod engines;
pub mod isolate;
mod pool;
mod report;
mod round_trip;
mod stream_round_trip;
mod token_round_trip;
pub mod watch;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::catalog::{self, CatalogError, Origin, TemplateAccess, TemplateSource};
use crate::inspect::check_prefix_stable;
use crate::session::{Expected, Session, TemplateRef};
use crate::tokens::{self, expect::TokenCheckError};
use chatplate_render::remedy::{means, Knob};
use chatplate_render::Limits;

// Public paths of the fixture and rendering items that moved below `check`, kept because
// the command line and library users name them through `check`.
pub use crate::fixture::{collect_fixtures, is_fixture_shaped, Discovery, Fixture};
pub use crate::rendering::{error_excerpt, render_session, render_with, RenderFailure};
pub use drift::{Drift, PreviousTemplate};
pub use engines::{EngineCheck, EngineOutcome};
pub use pool::check_all;
pub use report::{report, report_with};

/// What checking one fixture found. More outcomes may be added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The render matched `expected`.
    Pass,
    /// Rendered, but the prompt differs from the expected one.
    Mismatch {
        /// The expected prompt.
        expected: String,
        /// What was rendered.
        actual: String,
    },
    /// Rendering failed where a prompt was expected.
    UnexpectedError(String),
    /// Rendering succeeded where an error was expected.
    UnexpectedPrompt(String),
    /// The error happened but its message lacks the expected text.
    WrongError {
        /// The expected fragment.
        expected: String,
        /// The actual error.
        actual: String,
    },
    /// An error happened, but not the exact Python exception expected.
    WrongException {
        /// The expected exception, `Class: message`.
        expected: String,
        /// The actual error.
        actual: String,
    },
    /// The fixture has no `expected` yet.
    NoExpectation,
    /// The file or its template could not be loaded.
    Broken(String),
    /// Checking the fixture crashed chatplate (a panic, an abort, a stack overflow, a
    /// checker that stopped answering): a chatplate bug, reported as this fixture's
    /// failure so that the rest of the run still counts.
    Crashed(String),
    /// A JSON file found in a folder that is not a fixture (a `tokenizer_config.json`,
    /// a messages list); neither passed nor failed.
    Skipped(String),
    /// `--bless` wrote a new `expected`.
    Blessed,
    /// The prompt matched, but tokenizing it does not give `expected_tokens`.
    TokensDiffer(String),
    /// The fixture asks for `assert_prefix_stable` and one more turn rewrites the prompt.
    NotPrefixStable(String),
    /// The fixture asks for `assert_stream_round_trip` and an assistant message's
    /// generated text, streamed in chunks, parses otherwise than whole.
    StreamRoundTrip(String),
    /// The fixture asks for `assert_round_trip` and an assistant message does not parse
    /// back into itself.
    RoundTrip {
        /// The message's index in the conversation.
        message: usize,
        /// What went wrong.
        problem: String,
        /// The original message as JSON (empty when the parse failed).
        expected: String,
        /// The parsed message as JSON (empty when the parse failed).
        actual: String,
    },
    /// The fixture asks for `assert_token_round_trip` and the sampled tokens do not come
    /// back: where the first differs, both tokens and the cause when known.
    TokenRoundTrip(String),
    /// `--engines`: the fixture passed, but another engine renders it differently.
    EnginesDisagree {
        /// The reference render: the prompt, or the error's summary.
        reference: Result<String, String>,
        /// Every engine's render.
        renders: Vec<EngineOutcome>,
    },
    /// The template changed since the fixture was blessed (its `template.sha256`), and
    /// the fixture fails: `outcome` says how.
    TemplateChanged {
        /// How the template changed.
        drift: Box<Drift>,
        /// The failure itself (`Mismatch`, `UnexpectedError`, ...).
        outcome: Box<Outcome>,
    },
}

impl Outcome {
    /// Whether this counts as a pass.
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Pass | Outcome::Blessed)
    }

    /// Whether this counts as a failure (skipped files are neither).
    pub fn failed(&self) -> bool {
        !self.passed() && !matches!(self, Outcome::Skipped(_))
    }
}

/// One checked fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseResult {
    /// The fixture file.
    pub path: PathBuf,
    /// What happened.
    pub outcome: Outcome,
    /// Worth knowing whatever the outcome (the cached template changed, ...).
    pub notes: Vec<String>,
}

/// What checking one fixture concluded: its outcome and its notes (what a checking
/// child process answers for each fixture).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// What happened.
    pub(crate) outcome: Outcome,
    /// Worth knowing whatever the outcome.
    #[serde(default)]
    pub(crate) notes: Vec<String>,
}

impl Verdict {
    /// A verdict without notes.
    pub(crate) fn of(outcome: Outcome) -> Self {
        Verdict {
            outcome,
            notes: Vec::new(),
        }
    }

    /// This verdict for the fixture at `path`.
    pub(crate) fn at(self, path: &Path) -> CaseResult {
        CaseResult {
            path: path.to_path_buf(),
            outcome: self.outcome,
            notes: self.notes,
        }
    }
}

/// How fixtures are checked.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CheckOptions {
    /// Rewrite `expected` from the current render instead of comparing.
    pub bless: bool,
    /// Bounds on each render.
    #[serde(with = "limits_serde")]
    pub limits: Limits,
    /// Folders a fixture's template path may also lead into, besides the tree it was
    /// found in (`--template-root`).
    pub template_roots: Vec<PathBuf>,
    /// Other engines each passing fixture must agree with (`--engines`).
    #[serde(default)]
    pub engines: EngineCheck,
}

/// Checks one fixture file.
pub fn check_file(fixture: &Fixture, options: &CheckOptions) -> CaseResult {
    check_verdict(fixture, options, &mut |_| {}).at(&fixture.path)
}

/// The wall-clock bound on each of `session`'s renders: the deadline grown for its
/// conversation ([`Limits::deadline_for`]).
pub(crate) fn render_deadline(session: &Session, limits: &Limits) -> Duration {
    let items = session.messages.len()
        + session.tools.as_ref().map_or(0, Vec::len)
        + session.documents.as_ref().map_or(0, Vec::len);
    limits.deadline_for(items)
}

/// Checks one fixture; `started` hears each render's bound once the fixture is loaded
/// (a checking child tells its parent, which waits accordingly).
pub(crate) fn check_verdict(
    fixture: &Fixture,
    options: &CheckOptions,
    started: &mut dyn FnMut(Duration),
) -> Verdict {
    let path = &fixture.path;
    let loaded = match &fixture.text {
        Some(text) => Session::parse(text, path),
        None => Session::load(path),
    };
    let mut session = match loaded {
        Ok(session) => session,
        Err(err) if fixture.found_in_folder => match crate::fixture::not_a_fixture(path) {
            Some(why) => return Verdict::of(Outcome::Skipped(why)),
            None => return Verdict::of(Outcome::Broken(engines::refused(err.to_string()))),
        },
        Err(err) => return Verdict::of(Outcome::Broken(engines::refused(err.to_string()))),
    };
    started(
        render_deadline(&session, &options.limits).saturating_add(options.engines.time_needed()),
    );
    if options.bless && fixture.text.is_some() {
        let why = format!(
            "{} rewrites fixture files; this fixture is not one (standard input)",
            means(Knob::Bless)
        );
        return Verdict::of(Outcome::Broken(why));
    }
    let dir = fixture.dir();
    let mut roots = vec![fixture.root.clone()];
    roots.extend(options.template_roots.iter().cloned());
    let access = TemplateAccess::Within(roots);
    let template = match catalog::resolve_for(&session, dir, &access) {
        Ok(template) => template,
        Err(err) => {
            let note = match &fixture.text {
                Some(_) => stdin_template_note(&session.template),
                None => None,
            };
            let message = format!("{err} {}", note.unwrap_or_default());
            let message = message.trim_end().to_string();
            // A template that cannot be read leaves nothing to check: no expected error
            // is about it, and `--bless` must not record it as one.
            if unreadable(&err) {
                return Verdict::of(Outcome::Broken(message));
            }
            let failure = Err(RenderFailure::load(message));
            return Verdict::of(if options.bless {
                bless_file(path, session, &access, failure)
            } else {
                compare(session.expected.as_ref(), failure)
            });
        }
    };
    let rendered = render_with(&session, &template, options.limits);
    let mut notes: Vec<String> = template_drift(&session.template, &template)
        .into_iter()
        .collect();
    let outcome = if options.bless {
        record_snapshot(&mut session.template, &template);
        session.record_template(&template.source);
        bless_file(path, session, &access, rendered)
    } else {
        let outcome = compare(session.expected.as_ref(), rendered.clone());
        let outcome = prefix_stable(&session, &template, outcome, options.limits);
        let outcome =
            round_trip::round_trip_step(&session, dir, &access, &template, outcome, options.limits);
        let outcome =
            stream_round_trip::step(&session, dir, &access, &template, outcome, options.limits);
        let outcome = token_round_trip::token_round_trip_step(
            &session,
            dir,
            &access,
            &template,
            outcome,
            options.limits,
        );
        let max_memory = options.limits.max_memory_bytes;
        let outcome = token_step(outcome, &session, dir, &access, &rendered, max_memory);
        let outcome = match &outcome {
            Outcome::Pass => engines::cross_check(
                &options.engines,
                &session,
                &template,
                &rendered,
                options.limits,
            )
            .unwrap_or(outcome),
            _ => outcome,
        };
        let drift = drift::detect(&session, &template);
        drift::attach(drift, outcome, &mut notes)
    };
    Verdict { outcome, notes }
}

/// Whether a template that did not resolve could not be read at all (missing, refused,
/// unreadable). A model whose templates transformers would not choose from either (no
/// default among several, no template of that name, none in its config) is a failure a
/// fixture may expect.
fn unreadable(err: &CatalogError) -> bool {
    !matches!(
        err,
        CatalogError::NoDefault { .. }
            | CatalogError::UnknownEntry { .. }
            | CatalogError::Config { .. }
    )
}

/// Said after the error of a template path that a fixture from standard input names:
/// such a fixture has no folder of its own, so its paths start at the working directory.
pub fn stdin_template_note(reference: &TemplateRef) -> Option<String> {
    if !matches!(reference, TemplateRef::Path(_) | TemplateRef::Named { .. }) {
        return None;
    }
    let here = std::env::current_dir().unwrap_or_default();
    Some(format!(
        "(a fixture read from standard input finds its template paths from the current directory, {})",
        here.display()
    ))
}

/// The commit a cached model template came from.
fn cached_commit(template: &TemplateSource) -> Option<&str> {
    match &template.origin {
        Origin::Model(model) => model.place.snapshot().map(|s| s.commit.as_str()),
        _ => None,
    }
}

/// Says so when a fixture's model reference recorded one snapshot and the cache now
/// resolves its revision to another: the model's template may have changed under it.
pub(crate) fn template_drift(reference: &TemplateRef, template: &TemplateSource) -> Option<String> {
    let TemplateRef::Model {
        id,
        revision,
        snapshot: Some(recorded),
        ..
    } = reference
    else {
        return None;
    };
    let current = cached_commit(template)?;
    (current != recorded).then(|| {
        format!(
            "the cached template changed under this fixture: {id}@{} was commit {} when recorded, the cache now resolves it to {} ({} records the new one)",
            revision.as_deref().unwrap_or(catalog::hf_cache::DEFAULT_REVISION),
            catalog::short(recorded),
            catalog::short(current),
            means(Knob::Bless)
        )
    })
}

/// `--bless` also records the snapshot a model reference resolves to now.
fn record_snapshot(reference: &mut TemplateRef, template: &TemplateSource) {
    if let (TemplateRef::Model { snapshot, .. }, Some(commit)) =
        (reference, cached_commit(template))
    {
        *snapshot = Some(commit.to_string());
    }
}

/// The separate `expected_tokens` step: only after the prompt itself passed.
fn token_step(
    outcome: Outcome,
    session: &Session,
    dir: &Path,
    access: &TemplateAccess,
    rendered: &Result<String, RenderFailure>,
    max_memory: usize,
) -> Outcome {
    let (Outcome::Pass, Ok(prompt)) = (&outcome, rendered) else {
        return outcome;
    };
    match tokens::expect::check(session, dir, access, prompt, max_memory) {
        Ok(()) => outcome,
        Err(TokenCheckError::Mismatch(difference)) => Outcome::TokensDiffer(difference),
        Err(TokenCheckError::Tokenizer(err)) => Outcome::Broken(err.to_string()),
    }
}

/// A passing fixture with `assert_prefix_stable` must also keep its prompt a prefix when
/// it grows by one turn.
fn prefix_stable(
    session: &Session,
    template: &TemplateSource,
    outcome: Outcome,
    limits: Limits,
) -> Outcome {
    let (true, Outcome::Pass) = (session.assert_prefix_stable, &outcome) else {
        return outcome;
    };
    let checked = catalog::conversation_for(session, template)
        .map_err(|e| e.to_string())
        .and_then(|conversation| check_prefix_stable(&template.source, &conversation, limits));
    match checked {
        Ok(()) => Outcome::Pass,
        Err(report) => Outcome::NotPrefixStable(report),
    }
}

/// Compares a render result with an expectation.
pub(crate) fn compare(
    expected: Option<&Expected>,
    rendered: Result<String, RenderFailure>,
) -> Outcome {
    match (expected, rendered) {
        (None, _) => Outcome::NoExpectation,
        (Some(Expected::Error(want)), _) if want.trim().is_empty() => {
            Outcome::Broken(EMPTY_ERROR.replace("BLESS", means(Knob::Bless)))
        }
        (Some(Expected::Prompt(want)), Ok(got)) if *want == got => Outcome::Pass,
        (Some(Expected::Prompt(want)), Ok(got)) => Outcome::Mismatch {
            expected: want.clone(),
            actual: got,
        },
        (Some(Expected::Prompt(_)), Err(err)) => Outcome::UnexpectedError(err.description),
        (Some(Expected::Error(_) | Expected::Exception(_)), Ok(got)) => {
            Outcome::UnexpectedPrompt(got)
        }
        (Some(Expected::Error(want)), Err(err)) if error_matches(&err, want) => Outcome::Pass,
        (Some(Expected::Exception(want)), Err(err)) if err.exception.as_ref() == Some(want) => {
            Outcome::Pass
        }
        (Some(Expected::Error(want)), Err(err)) => Outcome::WrongError {
            expected: want.clone(),
            actual: err.description,
        },
        (Some(Expected::Exception(want)), Err(err)) => Outcome::WrongException {
            expected: want.clone(),
            actual: err.description,
        },
    }
}

/// Why `{"error": ""}` is refused: the empty fragment is part of every error message.
const EMPTY_ERROR: &str = "the expected error is empty, which any error would match (a \
    missing template too): write the error the render must fail with, a part of its message \
    as `{\"error\": \"...\"}` or the exact `{\"exception\": \"Class: message\"}`, or record \
    the current one with BLESS";

/// Whether a failure satisfies `{"error": want}`: the fragment appears in the stable
/// summary or anywhere in the full description (fixtures blessed before the summary
/// existed carry the position too).
pub(crate) fn error_matches(failure: &RenderFailure, want: &str) -> bool {
    failure.summary.contains(want) || failure.description.contains(want)
}

fn bless_file(
    path: &Path,
    mut session: Session,
    access: &TemplateAccess,
    rendered: Result<String, RenderFailure>,
) -> Outcome {
    if let Ok(prompt) = &rendered {
        let dir = path.parent().unwrap_or(Path::new("."));
        if let Err(err) = tokens::expect::bless(&mut session, dir, access, prompt) {
            return Outcome::Broken(err.to_string());
        }
    }
    let exact = matches!(session.expected, Some(Expected::Exception(_)));
    session.expected = Some(match rendered {
        Ok(prompt) => Expected::Prompt(prompt),
        // A fixture that pinned the exact exception keeps pinning it.
        Err(RenderFailure {
            exception: Some(line),
            ..
        }) if exact => Expected::Exception(line),
        Err(err) => Expected::Error(err.summary),
    });
    match session.save(path) {
        Ok(()) => Outcome::Blessed,
        Err(err) => Outcome::Broken(err.to_string()),
    }
}

/// `Limits` carries a `Duration`; in the worker protocol it travels as milliseconds.
mod limits_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use chatplate_render::Limits;

    #[derive(Serialize, Deserialize)]
    struct Wire {
        fuel: u64,
        max_output_bytes: usize,
        max_memory_bytes: usize,
        recursion: usize,
        deadline_ms: u64,
    }

    pub(crate) fn serialize<S: Serializer>(
        limits: &Limits,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        Wire {
            fuel: limits.fuel,
            max_output_bytes: limits.max_output_bytes,
            max_memory_bytes: limits.max_memory_bytes,
            recursion: limits.recursion,
            deadline_ms: u64::try_from(limits.deadline.as_millis()).unwrap_or(u64::MAX),
        }
        .serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Limits, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        Ok(Limits::default()
            .with_fuel(wire.fuel)
            .with_max_output_bytes(wire.max_output_bytes)
            .with_max_memory_bytes(wire.max_memory_bytes)
            .with_recursion(wire.recursion)
            .with_deadline(std::time::Duration::from_millis(wire.deadline_ms)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_error_matches_by_fragment() {
        let expected = Expected::Error("roles must alternate".into());
        let failure = RenderFailure::load("template raised: roles must alternate".into());
        assert_eq!(compare(Some(&expected), Err(failure)), Outcome::Pass);
        let outcome = compare(Some(&expected), Ok("x".into()));
        assert_eq!(outcome, Outcome::UnexpectedPrompt("x".into()));
    }

    #[test]
    fn an_empty_expected_error_is_broken_whatever_happened() {
        for blank in ["", " \n"] {
            let expected = Expected::Error(blank.into());
            let failure = RenderFailure::load("template file not found".into());
            for rendered in [Err(failure), Ok("x".to_string())] {
                let outcome = compare(Some(&expected), rendered);
                assert!(
                    matches!(&outcome, Outcome::Broken(why) if why.contains("expected error is empty")),
                    "{outcome:?}"
                );
            }
        }
    }

    #[test]
    fn expected_exception_matches_class_and_message_exactly() {
        let failure = |message: &str| {
            let err = chatplate_render::CompiledTemplate::compile(
                &format!("{{{{ {message} }}}}"),
                Limits::default(),
            )
            .and_then(|t| t.render(&chatplate_render::Conversation::new(vec![])))
            .expect_err("fails");
            RenderFailure::render(&err, "")
        };
        // An empty conversation is refused before the template runs: transformers'
        // `ValueError`.
        let refused = "ValueError: Cannot apply chat template to an empty conversation. \
                       Provide at least one message.";
        let expected = Expected::Exception(refused.into());
        assert_eq!(compare(Some(&expected), Err(failure("1"))), Outcome::Pass);
        let other = Expected::Exception("ValueError: Cannot apply chat template".into());
        let outcome = compare(Some(&other), Err(failure("1")));
        assert!(
            matches!(outcome, Outcome::WrongException { .. }),
            "{outcome:?}"
        );
        let class = Expected::Exception(refused.replace("ValueError", "TypeError"));
        let outcome = compare(Some(&class), Err(failure("1")));
        assert!(
            matches!(outcome, Outcome::WrongException { .. }),
            "{outcome:?}"
        );
    }
}
