//! A corpus template with what its metadata (`templates/<name>.json`) says it renders
//! with: the bos/eos strings and the variables the corpus passes (a `tools_json_kwarg`
//! as an empty list, the `extra` kwargs). Benches and tests that walk the corpus read
//! templates through this, so they render them as the goldens were made.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

/// One template of a conformance corpus's `templates/` folder.
#[derive(Debug, Clone)]
pub struct CorpusTemplate {
    /// The file's stem: the name the manifest and scenarios use.
    pub name: String,
    /// The `.jinja` file.
    pub path: PathBuf,
    /// The template's text.
    pub source: String,
    /// The `bos_token` the goldens were rendered with.
    pub bos_token: Option<String>,
    /// The `eos_token` the goldens were rendered with.
    pub eos_token: Option<String>,
    /// The other variables the goldens were rendered with.
    pub variables: Map<String, Json>,
}

impl CorpusTemplate {
    /// Reads `path` (a `.jinja` file) and its metadata beside it.
    pub fn read(path: &Path) -> io::Result<Self> {
        let source = fs::read_to_string(path)?;
        let meta: Json = serde_json::from_str(&fs::read_to_string(path.with_extension("json"))?)
            .map_err(io::Error::other)?;
        let token = |key: &str| meta[key].as_str().map(String::from);
        let mut variables = Map::new();
        if let Some(name) = meta["tools_json_kwarg"].as_str() {
            variables.insert(name.into(), Json::from("[]"));
        }
        if let Some(extra) = meta["extra"].as_object() {
            variables.extend(extra.clone());
        }
        Ok(CorpusTemplate {
            name: path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            path: path.to_path_buf(),
            source,
            bos_token: token("bos_token"),
            eos_token: token("eos_token"),
            variables,
        })
    }

    /// The variables with `bos_token` and `eos_token` among them, as a template given
    /// only variables (an inspection, a bare render) needs them.
    pub fn variables_with_tokens(&self) -> Map<String, Json> {
        let mut variables = Map::new();
        for (key, token) in [
            ("bos_token", &self.bos_token),
            ("eos_token", &self.eos_token),
        ] {
            variables.insert(key.into(), token.clone().map_or(Json::Null, Json::from));
        }
        variables.extend(self.variables.clone());
        variables
    }
}

/// Every `.jinja` template of the corpus folder `templates` (its `templates/`
/// subfolder), by name.
pub fn corpus_templates(templates: &Path) -> io::Result<Vec<CorpusTemplate>> {
    let mut paths: Vec<PathBuf> = fs::read_dir(templates)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "jinja"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| CorpusTemplate::read(path))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_gives_the_tokens_and_the_variables() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("b.jinja"), "{{ bos_token }}").unwrap();
        fs::write(
            dir.path().join("b.json"),
            r#"{"bos_token": "<s>", "eos_token": null, "tools_json_kwarg": "tools_json", "extra": {"x": 1}}"#,
        )
        .unwrap();
        fs::write(dir.path().join("a.jinja"), "a").unwrap();
        fs::write(dir.path().join("a.json"), "{}").unwrap();
        let templates = corpus_templates(dir.path()).unwrap();
        let names: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let b = &templates[1];
        assert_eq!(b.bos_token.as_deref(), Some("<s>"));
        assert_eq!(b.eos_token, None);
        assert_eq!(
            Json::Object(b.variables_with_tokens()),
            serde_json::json!({"bos_token": "<s>", "eos_token": null, "tools_json": "[]", "x": 1})
        );
    }
}
