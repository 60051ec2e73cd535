//! `chatplate compare FOLDER --engine NAME --report`: every fixture in a folder (or every
//! case of a conformance corpus) compared with an engine, and the differences counted by
//! cause, with the templates each cause touches.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Result};
use serde_json::json;

use super::output;
use super::session_input::allowed_roots;
use chatplate_core::check::{collect_fixtures, Fixture};
use chatplate_core::compare::report::{compare_fixtures, CorpusReport};
use chatplate_core::compare::{Engine, EngineSetup};
use chatplate_core::corpus;
use chatplate_render::visible;

/// Templates named per cause in the text table before "and N more".
const NAMED_TEMPLATES: usize = 6;

/// Compares `folder` with each engine, fixtures' templates allowed in their folder and
/// `template_roots` (`--template-root` and the config file's, as `check` allows them);
/// exit 0 when every case agrees, 1 when any differs, 2 when an engine could not run on
/// any (a report with holes is not a verdict).
pub(super) fn run(
    folder: &Path,
    engines: &[Engine],
    setup: &EngineSetup,
    template_roots: &[PathBuf],
    json: bool,
) -> Result<i32> {
    if engines.is_empty() {
        bail!("--report needs the engine to compare with: --engine NAME");
    }
    // What the user waits for starts here: reading (and importing) the corpus counts.
    let command_started = Instant::now();
    let imported = ImportedCorpus::of(folder)?;
    let found = collect_fixtures(&[imported.fixtures_dir().to_path_buf()]);
    let roots = allowed_roots(template_roots);
    if found.fixtures.is_empty() {
        bail!("no fixtures found in {}", folder.display());
    }
    let reading = command_started.elapsed().as_secs_f64();
    let mut differ = false;
    let mut could_not_run = false;
    let mut reports = Vec::new();
    for &engine in engines {
        let started = Instant::now();
        let report = compare_fixtures(&found.fixtures, engine, setup, &roots);
        let seconds = started.elapsed().as_secs_f64();
        differ |= report.same() < report.cases.len() || !report.broken.is_empty();
        could_not_run |= !report.could_not_run.is_empty();
        reports.push((report, seconds));
    }
    // The imported copy is removed before the total is taken: the user waits for that too.
    drop(imported);
    let total = Timing {
        reading,
        total: command_started.elapsed().as_secs_f64(),
    };
    if json {
        let documents: Vec<_> = reports
            .iter()
            .map(|(report, seconds)| json_report(report, *seconds, &total))
            .collect();
        output::print_json(&documents, true)?;
    } else {
        let mut text = String::new();
        for (report, seconds) in &reports {
            text.push_str(&text_report(report, &found.fixtures, *seconds));
        }
        text.push_str(&format!(
            "{:.1} s in all, {:.1} s of it reading the corpus\n",
            total.total, total.reading
        ));
        output::print(&text)?;
    }
    Ok(if could_not_run { 2 } else { i32::from(differ) })
}

/// What the whole command took, in seconds: `total` from the start of reading the
/// corpus to the removal of its imported copy, every engine included; `reading` the
/// corpus's share (importing `MANIFEST.json` cases and reading the fixtures).
struct Timing {
    reading: f64,
    total: f64,
}

/// A conformance corpus (`MANIFEST.json`) turned into fixtures in a temporary folder,
/// removed when dropped; any other folder is used as it is.
struct ImportedCorpus {
    folder: PathBuf,
    temporary: bool,
}

impl ImportedCorpus {
    fn of(folder: &Path) -> Result<Self> {
        if !folder.join("MANIFEST.json").is_file() {
            return Ok(ImportedCorpus {
                folder: folder.to_path_buf(),
                temporary: false,
            });
        }
        let out = std::env::temp_dir().join(format!("chatplate-report-{}", std::process::id()));
        let imported = ImportedCorpus {
            folder: out.clone(),
            temporary: true,
        };
        corpus::import_scratch(folder, &out)?;
        Ok(imported)
    }

    fn fixtures_dir(&self) -> &Path {
        &self.folder
    }
}

impl Drop for ImportedCorpus {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.folder);
        }
    }
}

fn text_report(report: &CorpusReport, fixtures: &[Fixture], seconds: f64) -> String {
    let (templates, differing) = report.templates();
    let mut out = format!(
        "{} ({}): {} cases of {} templates in {:.1} s: {} same, {} differ ({} templates){}\n",
        report.engine,
        visible::for_terminal(&report.version),
        report.cases.len(),
        templates.len(),
        seconds,
        report.same(),
        report.cases.len() - report.same(),
        differing.len(),
        match report.could_not_run.len() {
            0 => String::new(),
            n => format!(", {n} could not run"),
        }
    );
    out.push_str(&format!(
        "  {:<36} {:>5} {:>9}  examples\n",
        "cause", "cases", "templates"
    ));
    for row in report.rows() {
        let mut named: Vec<String> = row
            .templates
            .iter()
            .take(NAMED_TEMPLATES)
            .cloned()
            .collect();
        if row.templates.len() > NAMED_TEMPLATES {
            named.push(format!(
                "and {} more",
                row.templates.len() - NAMED_TEMPLATES
            ));
        }
        out.push_str(&format!(
            "  {:<36} {:>5} {:>9}  {}\n",
            row.cause.label(),
            row.cases,
            row.templates.len(),
            visible::message(&named.join(", "))
        ));
        if let Some((fixture, detail)) = &row.example {
            out.push_str(&format!(
                "      e.g. {}: {}\n",
                visible::for_terminal(&shown_path(fixture)),
                detail
            ));
        }
    }
    for (path, why) in &report.broken {
        out.push_str(&format!(
            "  not compared: {}: {}\n",
            visible::for_terminal(&path.display().to_string()),
            visible::message(why)
        ));
    }
    if let Some((path, why)) = report.could_not_run.first() {
        out.push_str(&format!(
            "  could not run: {} cases, e.g. {}: {}\n",
            report.could_not_run.len(),
            visible::for_terminal(&shown_path(path)),
            visible::message(why)
        ));
    }
    let skipped =
        fixtures.len() - report.cases.len() - report.broken.len() - report.could_not_run.len();
    if skipped > 0 {
        out.push_str(&format!("  ({skipped} files skipped)\n"));
    }
    out
}

fn json_report(report: &CorpusReport, seconds: f64, timing: &Timing) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = report
        .rows()
        .into_iter()
        .map(|row| {
            let example = row
                .example
                .as_ref()
                .map(|(fixture, detail)| json!({"fixture": shown_path(fixture), "detail": detail}));
            json!({"cause": row.cause, "label": row.cause.label(), "cases": row.cases,
                   "templates": row.templates, "example": example})
        })
        .collect();
    let (templates, differing) = report.templates();
    json!({
        "engine": report.engine.name(),
        "version": report.version,
        "cases": report.cases.len(),
        "same": report.same(),
        "templates": templates.len(),
        "templates_differing": differing.len(),
        "causes": rows,
        "could_not_run": report.could_not_run.iter().map(|(path, why)| json!({"path": shown_path(path), "error": why})).collect::<Vec<_>>(),
        "not_compared": report.broken.iter().map(|(path, why)| json!({"path": path, "error": why})).collect::<Vec<_>>(),
        "seconds": seconds,
        "total_seconds": timing.total,
        "reading_seconds": timing.reading,
    })
}

/// A fixture's path; one of an imported corpus (in a temporary folder) from its template
/// folder on, `TEMPLATE/SCENARIO.json`, which names the corpus case.
fn shown_path(fixture: &Path) -> String {
    let temporary = std::env::temp_dir().join(format!("chatplate-report-{}", std::process::id()));
    fixture
        .strip_prefix(&temporary)
        .unwrap_or(fixture)
        .display()
        .to_string()
}
