//! The template's fingerprint in a fixture: `template.sha256`, the SHA-256 of the
//! template text exactly as it was rendered when the fixture was saved or blessed.
//!
//! It lives inside the `template` object (`{"bundled": "chatml", "sha256": "…"}`), beside
//! the reference it fingerprints, while [`TemplateRef`] stays the plain reference every
//! other part of chatplate matches on: reading takes the key out before the reference is
//! read ([`read_template`], [`recorded`]), writing puts it back ([`write_into`]).

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};

use super::TemplateRef;

/// The key inside `template`.
const KEY: &str = "sha256";

/// The lower-case hex SHA-256 of a template's text.
pub fn template_sha256(source: &str) -> String {
    Sha256::digest(source.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Whether `text` is 64 lower- or upper-case hex digits.
fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Reads the `template` value: the reference, with a `sha256` beside it checked and set
/// aside (see [`recorded`]). Messages start with `"template"` so the session's error
/// points at the value.
pub(crate) fn read_template<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<TemplateRef, D::Error> {
    use serde::de::Error;
    let wrong = |message: String| D::Error::custom(format!("\"template\": {message}"));
    let mut fields = Map::<String, Json>::deserialize(deserializer)?;
    match fields.remove(KEY) {
        None => {}
        Some(Json::String(hash)) if is_sha256(&hash) => {}
        Some(_) => return Err(wrong(format!("\"{KEY}\" must be 64 hexadecimal digits"))),
    }
    TemplateRef::deserialize(Json::Object(fields)).map_err(|err| wrong(err.to_string()))
}

/// The `template.sha256` of session text already read without error, if it has one. A
/// second, shallow pass over the text (values other than `template` are skipped unread),
/// made only when the text mentions the key at all.
pub(crate) fn recorded(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Top {
        template: Fingerprint,
    }
    #[derive(Deserialize)]
    struct Fingerprint {
        sha256: Option<String>,
    }
    if !text.contains(KEY) {
        return None;
    }
    let top: Top = serde_json::from_str(text).ok()?;
    top.template.sha256.map(|hash| hash.to_ascii_lowercase())
}

/// Puts `hash` into the `template` object of a session's pretty JSON text, as its last
/// key: written into the text rather than into a copy of the session as a JSON tree,
/// which would take several times a large session's size.
pub(crate) fn write_into(text: &mut String, hash: &str) {
    let Some(start) = super::scan::top_level_value(text, "template") else {
        return;
    };
    if !text[start..].starts_with('{') {
        return;
    }
    let Some(end) = super::scan::object_end(text, start) else {
        return;
    };
    // Pretty JSON closes the object on a line of its own: the key goes before it.
    let at = text[..end].trim_end().len();
    let line = format!(",\n    \"{KEY}\": \"{hash}\"");
    text.reserve_exact(line.len());
    text.insert_str(at, &line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_lower_case_hex_of_the_exact_text() {
        // sha256("") and sha256("abc"), as `sha256sum` prints them.
        assert_eq!(
            template_sha256(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            template_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_fingerprint_is_read_and_written_inside_the_template_object() {
        let path = std::path::Path::new("f.json");
        let hash = template_sha256("{{ 1 }}");
        let text = format!(
            r#"{{"version": 1, "template": {{"path": "t.jinja", "sha256": "{hash}"}}, "messages": [], "variables": {{"x": 1.50}}}}"#
        );
        let session = crate::session::Session::parse(&text, path).unwrap();
        assert_eq!(session.template_sha256.as_deref(), Some(hash.as_str()));
        assert_eq!(session.template, TemplateRef::Path("t.jinja".into()));
        let written = session.to_json();
        assert!(
            written.contains(&format!(
                "\"path\": \"t.jinja\",\n    \"sha256\": \"{hash}\""
            )),
            "{written}"
        );
        assert!(
            written.contains("1.50"),
            "numbers stay as written: {written}"
        );
        assert_eq!(
            crate::session::Session::parse(&written, path).unwrap(),
            session
        );
    }

    #[test]
    fn the_fingerprint_is_written_after_a_nested_reference_too() {
        let path = std::path::Path::new("f.json");
        let mut session = crate::session::Session::new(TemplateRef::Named {
            path: "model {\"x\"}".into(),
            name: "tool_use".into(),
        });
        session.record_template("{{ 1 }}");
        let written = session.to_json();
        assert!(
            written.contains("\"name\": \"tool_use\"\n    },\n    \"sha256\": \""),
            "{written}"
        );
        assert_eq!(
            crate::session::Session::parse(&written, path).unwrap(),
            session
        );
    }

    #[test]
    fn a_bad_fingerprint_is_an_error_at_the_template() {
        let path = std::path::Path::new("f.json");
        let text = "{\"version\": 1,\n \"template\": {\"bundled\": \"x\", \"sha256\": \"abc\"},\n \"messages\": []}";
        let err = crate::session::Session::parse(text, path).unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.json:2:14: \"template\": \"sha256\" must be 64 hexadecimal digits"
        );
        let unknown = text.replace("\"sha256\": \"abc\"", "\"sha512\": \"abc\"");
        let err = crate::session::Session::parse(&unknown, path).unwrap_err();
        assert!(
            err.to_string().contains("f.json:2:14: \"template\""),
            "{err}"
        );
    }

    #[test]
    fn only_the_template_objects_key_is_recorded() {
        let hash = "A".repeat(64);
        let text = format!(
            r#"{{"version": 1, "template": {{"bundled": "x", "sha256": "{hash}"}}, "messages": []}}"#
        );
        assert_eq!(recorded(&text), Some("a".repeat(64)));
        let elsewhere = r#"{"template": {"bundled": "x"}, "variables": {"sha256": "y"}}"#;
        assert_eq!(recorded(elsewhere), None);
    }
}
