//! A corpus report: every fixture of a folder rendered by the reference and by one
//! engine, and the differences grouped by cause ([`super::causes`]), with the templates
//! each cause touches.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;

use super::causes::{classify, Cause};
use super::{render, Engine, EngineSetup};
use crate::catalog::{self, TemplateAccess};
use crate::check::Fixture;
use crate::session::Session;

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
}

/// Renders every fixture with the reference and with `engine`, and classifies each
/// difference.
pub fn compare_fixtures(fixtures: &[Fixture], engine: Engine, setup: &EngineSetup) -> CorpusReport {
    let mut report = CorpusReport {
        engine,
        version: String::new(),
        cases: Vec::new(),
        broken: Vec::new(),
    };
    for fixture in fixtures {
        // A corpus is strangers' templates: a render that panics is that case's failure,
        // not the end of the report.
        let compared = panic::catch_unwind(AssertUnwindSafe(|| {
            compare_one(fixture, engine, setup, &mut report.version)
        }))
        .unwrap_or_else(|_| {
            Err("chatplate crashed on this fixture (a bug: please report it)".into())
        });
        match compared {
            Ok(case) => report.cases.push(case),
            Err(why) => report.broken.push((fixture.path.clone(), why)),
        }
    }
    report
}

fn compare_one(
    fixture: &Fixture,
    engine: Engine,
    setup: &EngineSetup,
    version: &mut String,
) -> Result<CaseComparison, String> {
    let session = Session::load(&fixture.path).map_err(|err| err.to_string())?;
    let access = TemplateAccess::Within(vec![fixture.root.clone()]);
    let template =
        catalog::resolve_for(&session, fixture.dir(), &access).map_err(|err| err.to_string())?;
    let conversation =
        catalog::conversation_for(&session, &template).map_err(|err| err.to_string())?;
    let results = [Engine::Transformers, engine].map(|engine| {
        let rendered = render(engine, &template.source, &conversation, setup);
        (
            rendered.version,
            rendered.result.map_err(|err| err.to_string()),
        )
    });
    let [(_, want), (engine_version, got)] = results;
    if version.is_empty() || version == "unknown" {
        *version = engine_version;
    }
    Ok(CaseComparison {
        fixture: fixture.path.clone(),
        template: template.name,
        cause: classify(&want, &got),
    })
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
        let mut by_cause: BTreeMap<Cause, (usize, BTreeSet<String>)> = BTreeMap::new();
        for case in &self.cases {
            if let Some(cause) = case.cause {
                let row = by_cause.entry(cause).or_default();
                row.0 += 1;
                row.1.insert(case.template.clone());
            }
        }
        let mut rows: Vec<CauseRow> = by_cause
            .into_iter()
            .map(|(cause, (cases, templates))| CauseRow {
                cause,
                cases,
                templates: templates.into_iter().collect(),
            })
            .collect();
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
        let report = compare_fixtures(&fixtures, Engine::MiniJinja, &EngineSetup::default());
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
    }
}
