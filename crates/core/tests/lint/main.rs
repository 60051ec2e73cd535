//! Lint: each rule on a real template that has the defect and one that does not (the
//! conformance corpus's templates, the bundled ones, the real tokenizers' model folders),
//! crafted minimal templates beside them, and the dev corpus table of docs/lint.md.

/// The renderer's metered allocator, as the `chatplate` binary installs it.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

#[path = "../../../../tests/common/mod.rs"]
mod common;

mod corpus_table;
mod rules;
mod rules_models;

use std::path::{Path, PathBuf};

use chatplate_core::corpus::CorpusTemplate;
use chatplate_core::lint::{lint_template, lint_with, LintOptions, Surroundings, TemplateLint};
use chatplate_core::{Origin, TemplateSource};

/// A dev corpus template as the corpus renders it: its bos/eos, and the variables its
/// metadata names, as options.
pub fn corpus_template(corpus: &Path, stem: &str) -> (TemplateSource, LintOptions) {
    let path = corpus.join("templates").join(format!("{stem}.jinja"));
    let read = CorpusTemplate::read(&path).unwrap();
    let mut template = TemplateSource::new(stem, read.source, Origin::File(path));
    template.bos_token = read.bos_token;
    template.eos_token = read.eos_token;
    let mut options = LintOptions::default();
    options.variables = read.variables;
    (template, options)
}

/// The corpus template `stem` linted, or `None` (skipped) without the corpus.
pub fn corpus_lint(test: &str, stem: &str) -> Option<TemplateLint> {
    let corpus = common::corpus_dir(test)?;
    let (template, options) = corpus_template(&corpus, stem);
    Some(
        lint_with(
            &template,
            &Surroundings::default(),
            &options,
            &Default::default(),
        )
        .unwrap(),
    )
}

/// A crafted template linted with empty bos/eos.
pub fn crafted(source: &str) -> TemplateLint {
    let template = TemplateSource::new("crafted", source, Origin::Inline);
    lint_template(&template, &LintOptions::default(), &Default::default()).unwrap()
}

/// A bundled template (templates/) linted.
pub fn bundled(name: &str) -> TemplateLint {
    let path = common::repo()
        .join("templates")
        .join(format!("{name}.jinja"));
    let source = std::fs::read_to_string(&path).unwrap();
    let template = TemplateSource::new(name, source, Origin::File(path));
    lint_template(&template, &LintOptions::default(), &Default::default()).unwrap()
}

/// The rule ids of a report's findings, in order.
pub fn rules(report: &TemplateLint) -> Vec<&'static str> {
    report.findings.iter().map(|f| f.rule.id()).collect()
}

/// The finding of `rule`, or a panic listing what was found.
pub fn finding<'r>(report: &'r TemplateLint, rule: &str) -> &'r chatplate_core::lint::Finding {
    report
        .findings
        .iter()
        .find(|f| f.rule.id() == rule)
        .unwrap_or_else(|| panic!("no {rule} in {:#?}", report.findings))
}

/// Panics, listing what was found, when `report` has a finding of `rule`.
pub fn assert_lacks(report: &TemplateLint, rule: &str) {
    assert!(
        !rules(report).contains(&rule),
        "{rule} found: {:#?}",
        report.findings
    );
}

/// Panics unless `finding`'s evidence contains `text`.
pub fn assert_evidence(finding: &chatplate_core::lint::Finding, text: &str) {
    assert!(
        finding
            .evidence
            .as_deref()
            .is_some_and(|e| e.contains(text)),
        "no {text:?} in the evidence {:?}",
        finding.evidence
    );
}

/// A real tokenizer's model folder (target/tokenizers/NAME), or `None` (skipped).
pub fn real_model(name: &str, test: &str) -> Option<PathBuf> {
    let folder = std::env::var_os("CHATPLATE_TOKENIZERS")
        .map_or_else(|| common::repo().join("target/tokenizers"), PathBuf::from);
    let folder = folder.join(name);
    if folder.join("tokenizer.json").is_file() {
        return Some(folder);
    }
    common::skip_unless_ci(
        test,
        &format!(
            "no {name} model folder at {} (run scripts/fetch_tokenizers.sh)",
            folder.display()
        ),
    );
    None
}
