//! Fixture checking: re-render each session and compare with its `expected`.
//!
//! Used by `chatplate check` and by the test suite. Work is spread over the machine's
//! cores with scoped threads; results come back in input order.

use std::path::{Path, PathBuf};

use crate::catalog::{self, CatalogError, Origin, TemplateSource};
use crate::diff::{diff_lines, DiffLine};
use crate::inspect::check_prefix_stable;
use std::sync::Arc;

use crate::render::{prepare_source, render_with_deadline, CompiledTemplate, Limits, RenderError};
use crate::session::{Expected, Session, TemplateRef};
use crate::tokens::{self, expect::TokenCheckError};
use crate::visible::visible_whitespace;

/// What checking one fixture found.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// The fixture has no `expected` yet.
    NoExpectation,
    /// The file or its template could not be loaded.
    Broken(String),
    /// `--bless` wrote a new `expected`.
    Blessed,
    /// The prompt matched, but tokenizing it does not give `expected_tokens`.
    TokensDiffer(String),
    /// The fixture asks for `assert_prefix_stable` and one more turn rewrites the prompt.
    NotPrefixStable(String),
}

impl Outcome {
    /// Whether this counts as a pass.
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Pass | Outcome::Blessed)
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

/// Renders a session with its template, resolving relative paths from `session_dir`.
pub fn render_session(session: &Session, session_dir: &Path) -> Result<String, String> {
    let template = catalog::resolve_for(session, session_dir).map_err(|e| e.to_string())?;
    render_with(session, &template)
}

/// Renders a session with an already resolved template (its special tokens included).
pub fn render_with(session: &Session, template: &TemplateSource) -> Result<String, String> {
    let conversation = catalog::conversation_for(session, template).map_err(|e| e.to_string())?;
    let limits = Limits::default();
    CompiledTemplate::compile(&template.source, limits)
        .and_then(|compiled| {
            render_with_deadline(&Arc::new(compiled), conversation, limits.deadline)
        })
        .map_err(|err| describe_error(&err, &template.source))
}

/// An error message with its template excerpt, as the CLI prints it.
pub fn describe_error(err: &RenderError, source: &str) -> String {
    let prepared = prepare_source(source);
    match err.excerpt(&prepared, 2) {
        Some(excerpt) => format!("{err}\n{excerpt}"),
        None => err.to_string(),
    }
}

/// Every `.json` fixture under `paths` (files are taken as given), sorted per directory.
pub fn collect_fixtures(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect_dir(path, &mut found);
        } else {
            found.push(path.clone());
        }
    }
    found
}

fn collect_dir(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        found.push(dir.to_path_buf());
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') || name.ends_with(".recovery.json") {
            continue;
        }
        if path.is_dir() {
            collect_dir(&path, found);
        } else if name.ends_with(".json") {
            found.push(path);
        }
    }
}

/// Checks (or with `bless`, rewrites) every fixture, in parallel, keeping input order.
pub fn check_all(fixtures: &[PathBuf], bless: bool) -> Vec<CaseResult> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(1);
    let chunk = fixtures.len().div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = fixtures
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|p| check_file(p, bless))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Checks one fixture file.
pub fn check_file(path: &Path, bless: bool) -> CaseResult {
    let mut notes = Vec::new();
    let outcome = match Session::load(path) {
        Err(err) => Outcome::Broken(err.to_string()),
        Ok(mut session) => {
            let dir = path.parent().unwrap_or(Path::new("."));
            let template = catalog::resolve_for(&session, dir);
            let rendered = render_resolved(&session, &template);
            notes.extend(
                template
                    .as_ref()
                    .ok()
                    .and_then(|t| template_drift(&session.template, t)),
            );
            if bless {
                if let Ok(template) = &template {
                    record_snapshot(&mut session.template, template);
                }
                bless_file(path, session, rendered)
            } else {
                let outcome = compare(session.expected.as_ref(), rendered.clone());
                let outcome = prefix_stable(&session, &template, outcome);
                token_step(outcome, &session, dir, &rendered)
            }
        }
    };
    CaseResult {
        path: path.to_path_buf(),
        outcome,
        notes,
    }
}

fn render_resolved(
    session: &Session,
    template: &Result<TemplateSource, CatalogError>,
) -> Result<String, String> {
    match template {
        Ok(template) => render_with(session, template),
        Err(err) => Err(err.to_string()),
    }
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
pub fn template_drift(reference: &TemplateRef, template: &TemplateSource) -> Option<String> {
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
            "the cached template changed under this fixture: {id}@{} was commit {} when recorded, the cache now resolves it to {} (--bless records the new one)",
            revision.as_deref().unwrap_or(catalog::hf_cache::DEFAULT_REVISION),
            catalog::short(recorded),
            catalog::short(current)
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

/// Compares a render result with an expectation.
pub fn compare(expected: Option<&Expected>, rendered: Result<String, String>) -> Outcome {
    match (expected, rendered) {
        (None, _) => Outcome::NoExpectation,
        (Some(Expected::Prompt(want)), Ok(got)) if *want == got => Outcome::Pass,
        (Some(Expected::Prompt(want)), Ok(got)) => Outcome::Mismatch {
            expected: want.clone(),
            actual: got,
        },
        (Some(Expected::Prompt(_)), Err(err)) => Outcome::UnexpectedError(err),
        (Some(Expected::Error(_)), Ok(got)) => Outcome::UnexpectedPrompt(got),
        (Some(Expected::Error(want)), Err(err)) if err.contains(want.as_str()) => Outcome::Pass,
        (Some(Expected::Error(want)), Err(err)) => Outcome::WrongError {
            expected: want.clone(),
            actual: err,
        },
    }
}

/// The separate `expected_tokens` step: only after the prompt itself passed.
fn token_step(
    outcome: Outcome,
    session: &Session,
    dir: &Path,
    rendered: &Result<String, String>,
) -> Outcome {
    let (Outcome::Pass, Ok(prompt)) = (&outcome, rendered) else {
        return outcome;
    };
    match tokens::expect::check(session, dir, prompt) {
        Ok(()) => outcome,
        Err(TokenCheckError::Mismatch(difference)) => Outcome::TokensDiffer(difference),
        Err(TokenCheckError::Tokenizer(err)) => Outcome::Broken(err.to_string()),
    }
}

/// A passing fixture with `assert_prefix_stable` must also keep its prompt a prefix when
/// it grows by one turn.
fn prefix_stable(
    session: &Session,
    template: &Result<TemplateSource, CatalogError>,
    outcome: Outcome,
) -> Outcome {
    let (true, Outcome::Pass, Ok(template)) = (session.assert_prefix_stable, &outcome, template)
    else {
        return outcome;
    };
    let checked = catalog::conversation_for(session, template)
        .map_err(|e| e.to_string())
        .and_then(|conversation| check_prefix_stable(&template.source, &conversation));
    match checked {
        Ok(()) => Outcome::Pass,
        Err(report) => Outcome::NotPrefixStable(report),
    }
}

fn bless_file(path: &Path, mut session: Session, rendered: Result<String, String>) -> Outcome {
    if let Ok(prompt) = &rendered {
        let dir = path.parent().unwrap_or(Path::new("."));
        if let Err(err) = tokens::expect::bless(&mut session, dir, prompt) {
            return Outcome::Broken(err.to_string());
        }
    }
    session.expected = Some(match rendered {
        Ok(prompt) => Expected::Prompt(prompt),
        Err(err) => Expected::Error(first_line(&err).to_string()),
    });
    match session.save(path) {
        Ok(()) => Outcome::Blessed,
        Err(err) => Outcome::Broken(err.to_string()),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// A human-readable report for one failed case, its notes last.
pub fn report(result: &CaseResult) -> String {
    let mut text = outcome_report(result);
    for note in &result.notes {
        text.push_str(&format!("\nnote: {note}"));
    }
    text
}

fn outcome_report(result: &CaseResult) -> String {
    let path = result.path.display();
    match &result.outcome {
        Outcome::Pass | Outcome::Blessed => format!("ok {path}"),
        Outcome::Mismatch { expected, actual } => {
            format!(
                "FAIL {path}: prompt differs\n{}",
                line_diff(expected, actual)
            )
        }
        Outcome::UnexpectedError(err) => {
            format!("FAIL {path}: expected a prompt, got an error\n{err}")
        }
        Outcome::UnexpectedPrompt(got) => format!(
            "FAIL {path}: expected an error, got a prompt\n{}",
            visible_whitespace(got)
        ),
        Outcome::WrongError { expected, actual } => {
            format!("FAIL {path}: error lacks {expected:?}\n{actual}")
        }
        Outcome::NoExpectation => {
            format!("FAIL {path}: no \"expected\" (run with --bless to record it)")
        }
        Outcome::Broken(err) => format!("FAIL {path}: {err}"),
        Outcome::TokensDiffer(difference) => format!("FAIL {path}: tokens differ: {difference}"),
        Outcome::NotPrefixStable(report) => {
            format!("FAIL {path}: assert_prefix_stable: {report}")
        }
    }
}

/// A line diff with whitespace made visible: `-` expected, `+` actual, two lines of
/// context around each change and `@@ line N @@` (of the expected prompt) per hunk.
pub fn line_diff(expected: &str, actual: &str) -> String {
    let lines = diff_lines(expected, actual);
    let near_change = |index: usize| {
        let from = index.saturating_sub(CONTEXT);
        let to = (index + CONTEXT + 1).min(lines.len());
        lines[from..to]
            .iter()
            .any(|l| !matches!(l, DiffLine::Same(_)))
    };
    let mut out = String::new();
    let (mut expected_line, mut in_hunk) = (1, false);
    for (index, line) in lines.iter().enumerate() {
        if !near_change(index) {
            in_hunk = false;
        } else {
            if !in_hunk {
                out.push_str(&format!("@@ line {expected_line} @@\n"));
                in_hunk = true;
            }
            let (mark, text) = match line {
                DiffLine::Same(text) => (' ', text),
                DiffLine::Removed(text) => ('-', text),
                DiffLine::Added(text) => ('+', text),
            };
            push_line(&mut out, mark, text);
        }
        if !matches!(line, DiffLine::Added(_)) {
            expected_line += 1;
        }
    }
    out
}

/// Unchanged lines shown around each change.
const CONTEXT: usize = 2;

fn push_line(out: &mut String, mark: char, line: &str) {
    out.push(mark);
    out.push(' ');
    let shown = visible_whitespace(line);
    out.push_str(shown.trim_end_matches('\n'));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_shows_changed_lines_with_visible_whitespace() {
        let diff = line_diff("a\nb \nc\n", "a\nb\nc\n");
        assert_eq!(diff, "@@ line 1 @@\n  a␊\n- b·␊\n+ b␊\n  c␊\n");
        let far_apart = line_diff("1\n2\n3\n4\n5\n6\n7\n8\n", "x\n2\n3\n4\n5\n6\n7\ny\n");
        assert_eq!(
            far_apart,
            "@@ line 1 @@\n- 1␊\n+ x␊\n  2␊\n  3␊\n@@ line 6 @@\n  6␊\n  7␊\n- 8␊\n+ y␊\n"
        );
    }

    #[test]
    fn expected_error_matches_by_fragment() {
        let expected = Expected::Error("roles must alternate".into());
        let outcome = compare(
            Some(&expected),
            Err("template raised: roles must alternate".into()),
        );
        assert_eq!(outcome, Outcome::Pass);
        let outcome = compare(Some(&expected), Ok("x".into()));
        assert_eq!(outcome, Outcome::UnexpectedPrompt("x".into()));
    }
}
