//! The session file format at its edges: every way a fixture can be malformed is
//! reported with the file and, for JSON problems, line and column; saving is atomic; and
//! what is saved loads back unchanged, message keys in their written order.

use std::path::Path;

use chatplate_core::catalog::TemplateAccess;
use chatplate_core::catalog::{self, CatalogError};
use chatplate_core::check::{check_file, CheckOptions, Fixture, Outcome};
use chatplate_core::session::{Session, SessionError, TemplateRef};

const PATH: &str = "fixtures/case.json";

fn parse(text: &str) -> Result<Session, SessionError> {
    Session::parse(text, Path::new(PATH))
}

/// The `(line, column, message)` of an `Invalid` error.
fn invalid(text: &str) -> (usize, usize, String) {
    match parse(text) {
        Err(SessionError::Invalid {
            path,
            line,
            column,
            message,
        }) => {
            assert_eq!(path, Path::new(PATH));
            (line, column, message)
        }
        other => panic!("expected an Invalid error, got {other:?}"),
    }
}

/// A valid session, one line per key; `messages` is the given JSON list.
fn session_text(messages: &str) -> String {
    format!("{{\n  \"version\": 1,\n  \"template\": {{\"bundled\": \"gemma-3-tools\"}},\n  \"messages\": {messages}\n}}\n")
}

#[test]
fn invalid_json_reports_file_line_and_column() {
    let text =
        "{\n  \"version\": 1,\n  \"template\": {\"bundled\": \"x\"}\n  \"messages\": []\n}\n";
    let err = parse(text).unwrap_err();
    assert!(
        err.to_string().starts_with("fixtures/case.json:4:3: "),
        "{err}"
    );
    let (line, column, message) = invalid(text);
    assert_eq!((line, column), (4, 3));
    assert!(
        !message.contains(" at line "),
        "position is not repeated: {message}"
    );
}

#[test]
fn unknown_top_level_key_is_rejected_with_position() {
    let text = "{\n  \"version\": 1,\n  \"template\": {\"bundled\": \"x\"},\n  \"messages\": [],\n  \"colour\": \"red\"\n}\n";
    let (line, column, message) = invalid(text);
    assert_eq!(line, 5);
    assert!(column > 1);
    assert!(message.contains("unknown field `colour`"), "{message}");
}

#[test]
fn message_without_role_is_rejected() {
    let messages = "[\n    {\"role\": \"user\", \"content\": \"a \\\"}{ b\"},\n    {\"content\": \"hi\",\n     \"x\": {\"y\": 1}}\n  ]";
    let (line, column, message) = invalid(&session_text(messages));
    // A message's own check points at the message's opening brace (line 6, column 5),
    // not where the reader stopped, even past braces inside strings and nested objects.
    assert_eq!((line, column), (6, 5));
    assert!(message.contains("message has no \"role\""), "{message}");
}

#[test]
fn role_must_be_a_string() {
    let (_, _, message) = invalid(&session_text("[{\"role\": 1, \"content\": \"hi\"}]"));
    assert!(message.contains("\"role\" must be a string"), "{message}");
}

#[test]
fn content_of_any_json_type_is_accepted_as_transformers_takes_it() {
    // transformers 5.23 renders a dict, a number or a boolean `content` as the template
    // prints it (`{{ m.content }}` of `{"text": "hi"}` is `{'text': 'hi'}`).
    for content in [
        "42",
        "true",
        "{\"text\": \"hi\"}",
        "null",
        "\"hi\"",
        "[{\"type\": \"text\", \"text\": \"hi\"}]",
    ] {
        let messages = format!("[{{\"role\": \"user\", \"content\": {content}}}]");
        let session = parse(&session_text(&messages)).unwrap_or_else(|e| panic!("{content}: {e}"));
        let want: serde_json::Value = serde_json::from_str(content).unwrap();
        assert_eq!(session.messages[0].0["content"], want, "{content}");
    }
}

#[test]
fn wrong_version_is_rejected() {
    let text = session_text("[]").replace("\"version\": 1", "\"version\": 2");
    match parse(&text) {
        Err(err @ SessionError::Invalid { line: 2, .. }) => {
            assert!(
                err.to_string().contains("unsupported session version 2"),
                "{err}"
            );
        }
        other => panic!("expected a version error with its position, got {other:?}"),
    }
}

#[test]
fn bad_clock_is_rejected_when_rendering() {
    let mut session = parse(&session_text("[]")).unwrap();
    session.clock = Some("15/01/2026".into());
    match session.conversation() {
        Err(err @ SessionError::Clock(_)) => assert!(err.to_string().contains("15/01/2026")),
        other => panic!("expected a clock error, got {other:?}"),
    }
    session.clock = Some("2026-01-15T00:00:00".into());
    assert!(session.conversation().is_ok());
}

#[test]
fn unknown_bundled_template_is_reported() {
    let reference = TemplateRef::Bundled("llama-9".into());
    let err = catalog::resolve(&reference, Path::new("."), &TemplateAccess::Anywhere).unwrap_err();
    assert!(matches!(err, CatalogError::UnknownBundled(ref name) if name == "llama-9"));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let text = session_text("[]")
        .replace("gemma-3-tools", "llama-9")
        .replace("[]", "[],\n  \"expected\": {\"prompt\": \"\"}");
    std::fs::write(&path, text).unwrap();
    let fixture = Fixture {
        path: path.clone(),
        root: dir.path().to_path_buf(),
        found_in_folder: false,
        text: None,
    };
    let outcome = check_file(&fixture, &CheckOptions::default()).outcome;
    assert!(
        matches!(&outcome, Outcome::UnexpectedError(e) | Outcome::Broken(e) if e.contains("no bundled template named \"llama-9\"")),
        "{outcome:?}"
    );
}

#[test]
fn missing_template_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let reference = TemplateRef::Path("templates/gone.jinja".into());
    let access = TemplateAccess::within(dir.path());
    let err = catalog::resolve(&reference, dir.path(), &access).unwrap_err();
    assert!(matches!(err, CatalogError::File(_)), "{err:?}");
    assert!(err.to_string().contains("gone.jinja"), "{err}");
}

#[test]
fn save_and_load_round_trip_keeping_message_key_order() {
    let messages = r#"[
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "w", "arguments": {"z": 1, "a": 2}}}], "content": null}
  ]"#;
    let session = parse(&session_text(messages)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/s.json");
    session.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let at = |key: &str| text.find(key).unwrap_or_else(|| panic!("{key} in {text}"));
    assert!(at("\"tool_calls\"") < at("\"content\": null"), "{text}");
    assert!(at("\"z\": 1") < at("\"a\": 2"), "{text}");
    let loaded = Session::load(&path).unwrap();
    assert_eq!(loaded, session);
    let keys: Vec<&String> = loaded.messages[1].0.keys().collect();
    assert_eq!(keys, ["role", "tool_calls", "content"]);
    assert_eq!(loaded.to_json(), text);
    let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(leftovers, 1, "no temporary file is left behind");
}

/// Saves a changed session over `path` and asserts that the save failed and the file is
/// byte for byte what it was.
fn assert_failed_save_keeps(path: &Path) {
    let before = std::fs::read(path).unwrap();
    let mut changed = Session::load(path).unwrap();
    changed.messages.clear();
    assert!(changed.save(path).is_err(), "the save should fail");
    assert_eq!(std::fs::read(path).unwrap(), before);
    assert!(Session::load(path).is_ok());
}

fn saved_session(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("s.json");
    let session = parse(&session_text("[{\"role\": \"user\", \"content\": \"hi\"}]")).unwrap();
    session.save(&path).unwrap();
    path
}

#[test]
fn failed_save_leaves_the_old_file_intact_when_the_temp_file_cannot_be_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = saved_session(dir.path());
    // The atomic save writes `.<name>.<pid>.tmp` first; a directory there makes it fail.
    let temp = dir
        .path()
        .join(format!(".s.json.{}.tmp", std::process::id()));
    std::fs::create_dir(&temp).unwrap();
    assert_failed_save_keeps(&path);
}

/// A write the system refuses, as it refuses root too (CI runs as root, for whom a
/// read-only directory is writable): the save's temporary file is `/dev/full`, where every
/// write fails with "no space left on device". The save fails, the file is byte for byte
/// what it was, and nothing is left beside it.
#[cfg(target_os = "linux")]
#[test]
fn failed_save_leaves_the_old_file_intact_when_the_disk_is_full() {
    use std::os::unix::fs::FileTypeExt;
    let full = Path::new("/dev/full");
    let device = std::fs::metadata(full).map(|m| m.file_type().is_char_device());
    assert!(device.unwrap_or(false), "Linux has /dev/full");
    let dir = tempfile::tempdir().unwrap();
    let path = saved_session(dir.path());
    // The atomic save writes `.<name>.<pid>.tmp` first: there, it writes to /dev/full.
    let temp = dir
        .path()
        .join(format!(".s.json.{}.tmp", std::process::id()));
    std::os::unix::fs::symlink(full, &temp).unwrap();
    assert_failed_save_keeps(&path);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the session is left: {left:?}");
}

#[test]
fn save_under_a_file_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "keep me").unwrap();
    let session = parse(&session_text("[]")).unwrap();
    let err = session.save(&blocker.join("s.json")).unwrap_err();
    assert!(matches!(err, SessionError::Io { .. }), "{err:?}");
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "keep me");
}

#[test]
fn tokenizer_and_expected_tokens_round_trip_and_bad_values_are_positioned() {
    use chatplate_core::session::ExpectedTokens;
    let count = "{\n  \"version\": 1,\n  \"template\": {\"bundled\": \"x\"},\n  \"messages\": [],\n  \"tokenizer\": \"../models/qwen3\",\n  \"expected_tokens\": 1234\n}\n";
    let session = parse(count).unwrap();
    assert_eq!(session.tokenizer.as_deref(), Some("../models/qwen3"));
    assert_eq!(session.expected_tokens, Some(ExpectedTokens::Count(1234)));
    assert_eq!(parse(&session.to_json()).unwrap(), session);
    assert!(session.to_json().contains("\"expected_tokens\": 1234\n"));
    let ids = count.replace("1234", "[\n    151644,\n    872\n  ]");
    let session = parse(&ids).unwrap();
    assert_eq!(
        session.expected_tokens,
        Some(ExpectedTokens::Ids(vec![151644, 872]))
    );
    assert_eq!(parse(&session.to_json()).unwrap(), session);
    for bad in ["\"many\"", "-1", "1.5", "[1, -2]", "[4294967296]"] {
        let (line, column, message) = invalid(&count.replace("1234", bad));
        // At the value, like every other field's bad value (clock, version, ...).
        assert_eq!((line, column), (6, 22), "{bad}");
        assert!(
            message.contains("\"expected_tokens\" must be a token count or a list of token ids"),
            "{bad}: {message}"
        );
    }
}

/// Without the `tokens` feature a fixture's `expected_tokens` cannot be checked: it fails
/// and says why instead of passing unchecked.
#[cfg(not(feature = "tokens"))]
#[test]
fn expected_tokens_without_tokenizer_support_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.json");
    let text = "{\"version\": 1, \"template\": {\"source\": \"{{ messages[0].content }}\"}, \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"expected\": {\"prompt\": \"Hi\"}, \"expected_tokens\": 1}";
    std::fs::write(&path, text).unwrap();
    let fixture = Fixture {
        path: path.clone(),
        root: dir.path().to_path_buf(),
        found_in_folder: false,
        text: None,
    };
    match check_file(&fixture, &CheckOptions::default()).outcome {
        Outcome::Broken(message) => {
            assert!(message.contains("without tokenizer support"), "{message}")
        }
        other => panic!("expected Broken, got {other:?}"),
    }
}
