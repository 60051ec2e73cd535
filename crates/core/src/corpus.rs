//! Turns the conformance corpus (templates, scenarios and transformers' goldens, see
//! `shared/conformance/CORPUS-NOTES.md`) into ordinary session fixtures, so the corpus is
//! checked by exactly the code path users' fixtures go through.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

mod template;

pub use template::{corpus_templates, CorpusTemplate};

use crate::catalog::relative_to;
use crate::session::{ContinueSetting, Expected, Message, Session, TemplateRef, FORMAT_VERSION};

/// The fixed clock every golden was produced with.
pub(crate) const CORPUS_CLOCK: &str = "2026-01-15T00:00:00";

/// Why the corpus could not be converted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CorpusError {
    /// A corpus file is missing or unreadable.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error (shown in the message, so not chained as a `source` too).
        cause: std::io::Error,
    },
    /// A corpus file is not what MANIFEST.json describes.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Writing a fixture failed.
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
}

/// Writes one fixture per corpus case to `out/<template>/<scenario>.json`; returns their
/// paths in manifest order. Each fixture is saved as sessions are (atomically, synced to
/// disk): the output is the user's to keep.
pub fn import(corpus: &Path, out: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    import_with(corpus, out, Keep::Durable)
}

/// [`import`] into a scratch folder that is removed after use (`compare --report` on a
/// corpus): plain writes, nothing synced to disk. Syncing every fixture and its folder
/// was most of the time such a report took (798 fixtures: seconds on a busy disk, for
/// files nobody keeps).
pub fn import_scratch(corpus: &Path, out: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    import_with(corpus, out, Keep::Scratch)
}

/// Whether imported fixtures are the user's to keep.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Durable,
    Scratch,
}

fn import_with(corpus: &Path, out: &Path, keep: Keep) -> Result<Vec<PathBuf>, CorpusError> {
    // Cases share their template: each is copied once per import.
    let mut copied = std::collections::BTreeMap::new();
    let manifest = read_json(&corpus.join("MANIFEST.json"))?;
    let cases = manifest["cases"]
        .as_array()
        .ok_or_else(|| CorpusError::Format {
            path: corpus.join("MANIFEST.json"),
            message: "no \"cases\" list".into(),
        })?;
    cases
        .iter()
        .map(|case| import_case(corpus, out, case, keep, &mut copied))
        .collect()
}

fn import_case(
    corpus: &Path,
    out: &Path,
    case: &Json,
    keep: Keep,
    copied: &mut std::collections::BTreeMap<String, PathBuf>,
) -> Result<PathBuf, CorpusError> {
    let field = |name: &str| case[name].as_str().unwrap_or_default().to_string();
    let (template, scenario) = (field("template"), field("scenario"));
    let fixture_dir = out.join(&template);
    fs::create_dir_all(&fixture_dir).map_err(|source| CorpusError::Io {
        path: fixture_dir.clone(),
        cause: source,
    })?;
    let scenario_json = read_json(&corpus.join(format!("scenarios/{scenario}.json")))?;
    let golden_path = corpus.join(field("file"));
    let golden = fs::read_to_string(&golden_path).map_err(|source| CorpusError::Io {
        path: golden_path,
        cause: source,
    })?;
    let expected = match field("outcome").as_str() {
        "ok" => Expected::Prompt(golden),
        _ => Expected::Exception(exception_line(&golden)),
    };
    // The template is copied beside the fixtures, so the output is self-contained:
    // `chatplate check OUT` reads templates only inside OUT.
    let template_path = if let Some(copy) = copied.get(&template) {
        PathBuf::clone(copy)
    } else {
        let copy = copy_template(corpus, out, &template)?;
        copied.insert(template.clone(), copy.clone());
        copy
    };
    let mut session = build_session(
        TemplateRef::Path(relative_to(&template_path, &fixture_dir)),
        &scenario_json,
        case["template_kwargs"]
            .as_object()
            .cloned()
            .unwrap_or_default(),
        expected,
    )?;
    // Fixtures written here are blessed by the reference: they record the template.
    if let Ok(text) = crate::catalog::read_text(&template_path) {
        session.record_template(&text);
    }
    let path = fixture_dir.join(format!("{scenario}.json"));
    match keep {
        Keep::Durable => session.save(&path)?,
        Keep::Scratch => {
            fs::write(&path, session.to_json()).map_err(|source| CorpusError::Io {
                path: path.clone(),
                cause: source,
            })?;
        }
    }
    Ok(path)
}

/// An error golden (`builtins.TypeError`, a newline, then `str(exception)`) as Python's
/// traceback ends: `TypeError: message`.
fn exception_line(golden: &str) -> String {
    let (class, message) = golden.split_once('\n').unwrap_or((golden, ""));
    let class = class.rsplit('.').next().unwrap_or(class);
    format!("{class}: {message}")
}

/// Copies `templates/<name>.jinja` into `out/templates/` and returns the copy.
fn copy_template(corpus: &Path, out: &Path, name: &str) -> Result<PathBuf, CorpusError> {
    let source = corpus.join(format!("templates/{name}.jinja"));
    let copy = out.join(format!("templates/{name}.jinja"));
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |cause| CorpusError::Io { path, cause }
    };
    fs::create_dir_all(out.join("templates")).map_err(io(out))?;
    fs::copy(&source, &copy).map_err(io(&source))?;
    Ok(copy)
}

fn build_session(
    template: TemplateRef,
    scenario: &Json,
    mut kwargs: Map<String, Json>,
    expected: Expected,
) -> Result<Session, CorpusError> {
    let token = |value: Option<Json>| value.and_then(|v| v.as_str().map(String::from));
    let messages: Vec<Message> =
        serde_json::from_value(scenario["messages"].clone()).map_err(|err| {
            CorpusError::Format {
                path: PathBuf::from("scenario"),
                message: err.to_string(),
            }
        })?;
    Ok(Session {
        version: FORMAT_VERSION,
        template,
        template_sha256: None,
        bos_token: token(kwargs.remove("bos_token")),
        eos_token: token(kwargs.remove("eos_token")),
        add_generation_prompt: scenario["add_generation_prompt"].as_bool().unwrap_or(false),
        continue_final_message: ContinueSetting::Flag(
            scenario["continue_final_message"]
                .as_bool()
                .unwrap_or(false),
        ),
        messages,
        tools: scenario["tools"].as_array().cloned(),
        documents: scenario["documents"].as_array().cloned(),
        variables: kwargs,
        clock: Some(CORPUS_CLOCK.into()),
        request: Map::new(),
        tokenizer: None,
        expected: Some(expected),
        expected_tokens: None,
        assert_prefix_stable: false,
        response_template: None,
        assert_round_trip: false,
        assert_stream_round_trip: false,
        assert_token_round_trip: None,
    })
}

fn read_json(path: &Path) -> Result<Json, CorpusError> {
    let text = fs::read_to_string(path).map_err(|source| CorpusError::Io {
        path: path.to_path_buf(),
        cause: source,
    })?;
    serde_json::from_str(&text).map_err(|err| CorpusError::Format {
        path: path.to_path_buf(),
        message: err.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A corpus of one template and one scenario, where the reference raised.
    fn error_corpus(dir: &Path) {
        let write = |path: &str, text: &str| {
            let path = dir.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        };
        write("templates/t.jinja", "{{ messages[0].content + 1 }}");
        write(
            "scenarios/01.json",
            r#"{"messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": false}"#,
        );
        write(
            "expected/t/01.err",
            "builtins.TypeError\ncan only concatenate str (not \"int\") to str",
        );
        let manifest = serde_json::json!({"cases": [{
            "template": "t", "scenario": "01", "outcome": "error",
            "file": "expected/t/01.err", "template_kwargs": {}
        }]});
        write("MANIFEST.json", &manifest.to_string());
    }

    #[test]
    fn a_scenario_s_documents_reach_the_fixture() {
        let corpus = tempfile::tempdir().unwrap();
        error_corpus(corpus.path());
        let documents = serde_json::json!([{"title": "A", "text": "alpha"}]);
        let scenario = serde_json::json!({
            "messages": [{"role": "user", "content": "hi"}],
            "documents": documents,
            "continue_final_message": true,
        });
        fs::write(
            corpus.path().join("scenarios/01.json"),
            scenario.to_string(),
        )
        .unwrap();
        let out = tempfile::tempdir().unwrap();
        let fixtures = import(corpus.path(), out.path()).unwrap();
        let session = Session::load(&fixtures[0]).unwrap();
        assert_eq!(session.documents, documents.as_array().cloned());
        assert_eq!(session.continue_final_message, ContinueSetting::Flag(true));
    }

    #[test]
    fn an_error_case_keeps_the_reference_s_exception() {
        let corpus = tempfile::tempdir().unwrap();
        error_corpus(corpus.path());
        let out = tempfile::tempdir().unwrap();
        let fixtures = import(corpus.path(), out.path()).unwrap();
        let session = Session::load(&fixtures[0]).unwrap();
        assert_eq!(
            session.expected,
            Some(Expected::Exception(
                "TypeError: can only concatenate str (not \"int\") to str".into()
            ))
        );
    }
}
