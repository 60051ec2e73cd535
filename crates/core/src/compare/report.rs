//! A corpus report: every fixture of a folder rendered by the reference and by one
//! engine, and the differences grouped by cause ([`super::causes`]), with the templates
//! each cause touches.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use super::causes::{classify, Cause};
use super::text::excerpt;
use super::{first_difference, Engine, EngineSetup, Renderer};
use crate::catalog::{self, TemplateAccess};
use crate::fixture::Fixture;
use crate::session::Session;
use chatplate_render::visible;

/// One fixture compared.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CaseComparison {
    /// The fixture file.
    pub fixture: PathBuf,
    /// Its template's name.
    pub template: String,
    /// Why the engine differs; `None` when it agrees.
    pub cause: Option<Cause>,
    /// What the difference looks like: the engine's error, or both excerpts at the
    /// first differing byte.
    pub detail: Option<String>,
}

/// One engine against the reference over a folder of fixtures.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CorpusReport {
    /// The engine.
    pub engine: Engine,
    /// Its version (from its first answer).
    pub version: String,
    /// Every fixture that could be rendered by the reference's rules.
    pub cases: Vec<CaseComparison>,
    /// Fixtures that could not be loaded, with why.
    pub broken: Vec<(PathBuf, String)>,
    /// Fixtures the engine could not run on (not installed, its process or server
    /// failed), with its error: neither agreeing nor differing.
    pub could_not_run: Vec<(PathBuf, String)>,
}

/// How many requests a report has in flight at once with a llama-server: its HTTP
/// server answers several at a time (and `/apply-template` needs no slot of the model),
/// and the reference renders on each request's thread meanwhile. Few enough not to
/// crowd a server that also serves users.
pub const LLAMA_REQUESTS: usize = 4;

/// What comparing one fixture gave.
enum Compared {
    /// Both rendered (or failed on the template): a case, with the engine's version.
    Case(CaseComparison, String),
    /// The engine could not run, with why.
    CouldNotRun(String),
}

/// One line of the table: a cause, its cases and the templates it touches.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CauseRow {
    /// The cause.
    pub cause: Cause,
    /// How many cases differ for it.
    pub cases: usize,
    /// The templates with such a case, sorted.
    pub templates: Vec<String>,
    /// Its first case: the fixture and what the difference looks like there.
    pub example: Option<(PathBuf, String)>,
}

/// Renders every fixture with the reference and with `engine`, and classifies each
/// difference. A fixture's template may lead into its own tree or `template_roots`, as
/// `check` allows it.
pub fn compare_fixtures(
    fixtures: &[Fixture],
    engine: Engine,
    setup: &EngineSetup,
    template_roots: &[PathBuf],
) -> CorpusReport {
    let mut report = CorpusReport {
        engine,
        version: String::new(),
        cases: Vec::new(),
        broken: Vec::new(),
        could_not_run: Vec::new(),
    };
    let compare = |renderer: &mut Renderer, fixture: &Fixture| {
        compare_caught(fixture, engine, setup, template_roots, renderer)
    };
    // A llama-server answers over the network, several requests at a time; the other
    // engines keep one process for the whole report (see [`Renderer`]).
    let compared = if engine == Engine::LlamaCpp {
        in_parallel(fixtures, LLAMA_REQUESTS, Renderer::default, compare)
    } else {
        let mut renderer = Renderer::default();
        let each = fixtures
            .iter()
            .map(|fixture| compare(&mut renderer, fixture));
        each.map(Some).collect()
    };
    for (fixture, compared) in fixtures.iter().zip(compared) {
        let compared = compared.unwrap_or_else(|| Err(CRASHED.into()));
        match compared {
            Ok(Compared::Case(case, version)) => {
                if report.version.is_empty() || report.version == "unknown" {
                    report.version = version;
                }
                report.cases.push(case);
            }
            Ok(Compared::CouldNotRun(why)) => {
                report.could_not_run.push((fixture.path.clone(), why));
            }
            Err(why) => report.broken.push((fixture.path.clone(), why)),
        }
    }
    report
}

/// What a fixture whose comparison panicked is reported as.
const CRASHED: &str = "chatplate crashed on this fixture (a bug: please report it)";

/// [`compare_one`], a panic caught: a corpus is strangers' templates, and a render that
/// panics is that case's failure, not the end of the report.
fn compare_caught(
    fixture: &Fixture,
    engine: Engine,
    setup: &EngineSetup,
    template_roots: &[PathBuf],
    renderer: &mut Renderer,
) -> Result<Compared, String> {
    panic::catch_unwind(AssertUnwindSafe(|| {
        compare_one(fixture, engine, setup, template_roots, renderer)
    }))
    .unwrap_or_else(|_| Err(CRASHED.into()))
}

/// `work` on each of `items` on up to `threads` threads, each with its own state made
/// by `state`; the answers in the items' order (`None` where a thread died).
fn in_parallel<T: Sync, S, R: Send>(
    items: &[T],
    threads: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<Option<R>> {
    let next = AtomicUsize::new(0);
    let mut answers: Vec<Option<R>> = items.iter().map(|_| None).collect();
    thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.clamp(1, items.len().max(1)))
            .map(|_| {
                scope.spawn(|| {
                    let mut state = state();
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(index) else {
                            break;
                        };
                        done.push((index, work(&mut state, item)));
                    }
                    done
                })
            })
            .collect();
        for worker in workers {
            for (index, answer) in worker.join().unwrap_or_default() {
                answers[index] = Some(answer);
            }
        }
    });
    answers
}

fn compare_one(
    fixture: &Fixture,
    engine: Engine,
    setup: &EngineSetup,
    template_roots: &[PathBuf],
    renderer: &mut Renderer,
) -> Result<Compared, String> {
    let session = Session::load(&fixture.path).map_err(|err| err.to_string())?;
    let access = TemplateAccess::for_tree(&fixture.root, template_roots);
    let template =
        catalog::resolve_for(&session, fixture.dir(), &access).map_err(|err| err.to_string())?;
    let conversation =
        catalog::conversation_for(&session, &template).map_err(|err| err.to_string())?;
    let [want, got] = [Engine::Transformers, engine]
        .map(|engine| renderer.render(engine, &template.source, &conversation, setup));
    if let Err(err) = &got.result {
        if err.could_not_run() {
            return Ok(Compared::CouldNotRun(err.to_string()));
        }
    }
    let version = got.version;
    let tokens = got.tokens.as_ref().and_then(|t| t.first.as_ref());
    let token_detail = tokens.map(super::text::token_difference);
    let want = want.result.map_err(|err| err.to_string());
    let got = got.result.map_err(|err| err.to_string());
    let cause = match classify(&want, &got) {
        None if tokens.is_some() => Some(Cause::Tokens),
        cause => cause,
    };
    let case = CaseComparison {
        fixture: fixture.path.clone(),
        template: template.name,
        detail: cause.map(|_| token_detail.unwrap_or_else(|| detail(&want, &got))),
        cause,
    };
    Ok(Compared::Case(case, version))
}

/// The engine's error (its first line), or both excerpts where the prompts part: text
/// safe for a terminal (escaped, quoted).
fn detail(want: &Result<String, String>, got: &Result<String, String>) -> String {
    match (want, got) {
        (Ok(want), Ok(got)) => {
            let at = first_difference(want, got).unwrap_or_default();
            format!("byte {at}: {} vs {}", excerpt(want, at), excerpt(got, at))
        }
        (_, Err(error)) => visible::message(error.lines().next().unwrap_or_default()),
        (Err(error), Ok(_)) => {
            let line = error.lines().next().unwrap_or_default();
            format!("transformers raises: {}", visible::message(line))
        }
    }
}

impl CorpusReport {
    /// How many cases agree.
    pub fn same(&self) -> usize {
        self.cases
            .iter()
            .filter(|case| case.cause.is_none())
            .count()
    }

    /// The templates compared, and those with any difference.
    pub fn templates(&self) -> (BTreeSet<&str>, BTreeSet<&str>) {
        let all = self.cases.iter().map(|c| c.template.as_str()).collect();
        let differ = self
            .cases
            .iter()
            .filter(|c| c.cause.is_some())
            .map(|c| c.template.as_str())
            .collect();
        (all, differ)
    }

    /// The causes, most cases first.
    pub fn rows(&self) -> Vec<CauseRow> {
        let mut by_cause: BTreeMap<Cause, CauseRow> = BTreeMap::new();
        for case in &self.cases {
            let Some(cause) = case.cause else {
                continue;
            };
            let row = by_cause.entry(cause).or_insert_with(|| CauseRow {
                cause,
                cases: 0,
                templates: Vec::new(),
                example: case.detail.clone().map(|d| (case.fixture.clone(), d)),
            });
            row.cases += 1;
            if !row.templates.contains(&case.template) {
                row.templates.push(case.template.clone());
            }
        }
        let mut rows: Vec<CauseRow> = by_cause.into_values().collect();
        for row in &mut rows {
            row.templates.sort();
        }
        rows.sort_by(|a, b| b.cases.cmp(&a.cases).then(a.cause.cmp(&b.cause)));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(dir: &std::path::Path, name: &str, template: &str) -> Fixture {
        let text = format!(
            r#"{{"version": 1, "template": {{"source": {}}}, "messages": [{{"role": "user", "content": "Hi"}}]}}"#,
            serde_json::to_string(template).unwrap()
        );
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        Fixture {
            path,
            root: dir.to_path_buf(),
            found_in_folder: true,
            text: None,
        }
    }

    #[test]
    fn differences_are_grouped_by_cause_with_their_templates() {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = [
            fixture(dir.path(), "plain.json", "{{ messages[0].content }}"),
            fixture(dir.path(), "quote.json", "{{ \"it's\" | tojson }}"),
            fixture(dir.path(), "float.json", "{{ 2.5e20 }}"),
        ];
        let report = compare_fixtures(&fixtures, Engine::MiniJinja, &EngineSetup::default(), &[]);
        assert!(report.broken.is_empty(), "{:?}", report.broken);
        assert_eq!(report.same(), 1);
        let rows = report.rows();
        let causes: Vec<Cause> = rows.iter().map(|row| row.cause).collect();
        assert_eq!(causes, [Cause::JsonEscaping, Cause::Numbers]);
        assert!(
            report.version.starts_with("minijinja "),
            "{}",
            report.version
        );
        let (fixture, detail) = rows[0].example.clone().expect("an example");
        assert!(fixture.ends_with("quote.json"), "{fixture:?}");
        let want = r#"byte 3: "\"it's\"" vs "\"it\\u0027s\"""#;
        assert_eq!(detail, want);
    }

    /// The items are worked on `threads` at a time, and the answers keep their order.
    #[test]
    fn work_in_parallel_runs_that_many_at_once_in_order() {
        use std::sync::atomic::AtomicUsize;
        use std::time::{Duration, Instant};
        let items: Vec<usize> = (0..10).collect();
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let answers = in_parallel(
            &items,
            4,
            || (),
            |(), &item| {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // Each waits (boundedly) until four run at once, or the others ran out.
                let until = Instant::now() + Duration::from_secs(5);
                while most.load(Ordering::SeqCst) < 4 && Instant::now() < until {
                    std::thread::yield_now();
                }
                running.fetch_sub(1, Ordering::SeqCst);
                item * 10
            },
        );
        let answers: Vec<usize> = answers.into_iter().map(Option::unwrap).collect();
        assert_eq!(answers, (0..10).map(|i| i * 10).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn an_engine_that_cannot_run_is_counted_apart() {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = [fixture(
            dir.path(),
            "plain.json",
            "{{ messages[0].content }}",
        )];
        let setup = EngineSetup {
            python: Some(dir.path().join("no-such-python")),
            ..EngineSetup::default()
        };
        let report = compare_fixtures(&fixtures, Engine::Python, &setup, &[]);
        assert!(report.cases.is_empty(), "{:?}", report.cases);
        assert_eq!(report.could_not_run.len(), 1);
        assert!(
            report.could_not_run[0]
                .1
                .starts_with("python is not available: "),
            "{:?}",
            report.could_not_run
        );
    }
}
