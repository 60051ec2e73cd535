//! Strangers' fixtures against the real binary: one test per item, each of which
//! failed (a panic, a hang, a lost result, a leaked file, a file read from outside the
//! tree) before the fix. The templates' side is in `untrusted_templates`.
//!
//! `CHATPLATE_TEST_BIN` runs them against another build of the binary (an older one,
//! to see them fail). Every run has a generous time limit, so a hang is a failure
//! rather than a stuck test.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::binary::{binary_under_test, run_bounded, Run};

use serde_json::{json, Value as Json};

/// Runs chatplate in `dir`, killing it (a hang) after two minutes.
pub(super) fn chatplate(args: &[&str], dir: &Path) -> Run {
    let mut command = Command::new(binary_under_test());
    command.args(args).current_dir(dir);
    run_bounded(command, Duration::from_secs(120))
}

pub(super) fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// A fixture on `template` with one user message and `expected`.
pub(super) fn fixture(dir: &Path, name: &str, template: Json, expected: Json) -> PathBuf {
    let path = dir.join(name);
    let session = json!({
        "version": 1,
        "template": template,
        "messages": [{"role": "user", "content": "hi"}],
        "expected": expected,
    });
    write(&path, &serde_json::to_string_pretty(&session).unwrap());
    path
}

pub(super) fn source_fixture(dir: &Path, name: &str, source: &str, expected: Json) -> PathBuf {
    fixture(dir, name, json!({"source": source}), expected)
}

// A fixture that crashed the checker took its batch's results with it.
#[test]
fn item_1_every_fixture_is_counted_even_when_one_crashes_the_checker() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..9 {
        source_fixture(
            dir.path(),
            &format!("ok{i}.json"),
            "x",
            json!({"prompt": "x"}),
        );
    }
    // Panicked source preparation before the fix.
    source_fixture(
        dir.path(),
        "broken.json",
        "{%}{% raw %}x{% endraw %}",
        json!({"prompt": "x"}),
    );
    let run = chatplate(&["check", "."], dir.path());
    assert_eq!(run.code(), Some(1), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("9 passed, 1 failed"), "{}", run.stdout);
    assert!(run.stdout.contains("FAIL ./broken.json"), "{}", run.stdout);
}

// Nothing to check is a failure; JSON that is not a fixture is skipped.
#[test]
fn item_2_no_fixtures_fails_and_non_fixtures_are_skipped() {
    let empty = tempfile::tempdir().unwrap();
    let run = chatplate(&["check", "."], empty.path());
    assert_eq!(run.code(), Some(2), "{}", run.stdout);
    assert!(run.stderr.contains("no fixtures found"), "{}", run.stderr);

    let dir = tempfile::tempdir().unwrap();
    source_fixture(dir.path(), "a.json", "x", json!({"prompt": "x"}));
    write(
        &dir.path().join("tokenizer_config.json"),
        r#"{"chat_template": "{{ 1 }}", "bos_token": "<s>"}"#,
    );
    write(&dir.path().join("messages.json"), r#"[{"role": "user"}]"#);
    let run = chatplate(&["check", "."], dir.path());
    assert_eq!(run.code(), Some(0), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("1 passed, 0 failed, 2 skipped (not fixtures)"),
        "{}",
        run.stdout
    );
}

// Bench counts aborted or panicked.
#[test]
fn item_6_bench_iterations_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let path = source_fixture(dir.path(), "a.json", "x", json!({"prompt": "x"}));
    let path = path.to_str().unwrap();
    for count in ["1000000000000", "18446744073709551615", "0"] {
        let run = chatplate(&["bench", path, "--iterations", count], dir.path());
        assert_eq!(
            run.code(),
            Some(2),
            "{count}: {:?} {}",
            run.status,
            run.stderr
        );
    }
}

// A fixture could print any file (the CI environment, /etc/passwd).
#[test]
fn item_7_template_paths_stay_inside_the_tree_being_checked() {
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("secret.jinja"), "TOP-SECRET");
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let secret = outside.path().join("secret.jinja");
    fixture(
        &tree,
        "abs.json",
        json!({"path": "/proc/self/environ"}),
        json!({"prompt": ""}),
    );
    fixture(
        &tree,
        "up.json",
        json!({"path": "../../../../../../etc/passwd"}),
        json!({"prompt": ""}),
    );
    fixture(
        &tree,
        "named.json",
        json!({"named": {"path": secret, "name": "x"}}),
        json!({"prompt": ""}),
    );
    std::os::unix::fs::symlink(&secret, tree.join("link.jinja")).unwrap();
    fixture(
        &tree,
        "link.json",
        json!({"path": "link.jinja"}),
        json!({"prompt": ""}),
    );
    let run = chatplate(&["check", "tree"], dir.path());
    assert!(run.stdout.contains("0 passed, 4 failed"), "{}", run.stdout);
    assert_eq!(
        run.stdout.matches("leads outside").count(),
        4,
        "{}",
        run.stdout
    );
    for leaked in ["PATH=", "root:", "TOP-SECRET"] {
        assert!(
            !run.stdout.contains(leaked),
            "leaked {leaked}: {}",
            run.stdout
        );
    }
    // The user may allow a folder explicitly.
    let root = outside.path().to_str().unwrap();
    fixture(
        &tree,
        "link.json",
        json!({"path": "link.jinja"}),
        json!({"prompt": "TOP-SECRET"}),
    );
    let run = chatplate(
        &["check", "tree/link.json", "--template-root", root],
        dir.path(),
    );
    assert!(run.stdout.contains("1 passed, 0 failed"), "{}", run.stdout);
}

// Special files and link cycles.
#[test]
fn item_8_only_regular_files_are_read_and_link_cycles_end() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.jinja");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let messages = dir.path().join("m.json");
    write(&messages, r#"[{"role": "user", "content": "hi"}]"#);
    for template in [fifo.to_str().unwrap(), "/dev/zero"] {
        let run = chatplate(
            &["render", "--template", template, "--messages", "m.json"],
            dir.path(),
        );
        assert_eq!(run.code(), Some(2), "{template}: {}", run.stderr);
        assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
    }
    // A tree with two link cycles: each fixture is found once, and the walk ends.
    let tree = dir.path().join("tree");
    source_fixture(&tree.join("a"), "one.json", "x", json!({"prompt": "x"}));
    std::fs::create_dir_all(tree.join("b")).unwrap();
    std::os::unix::fs::symlink("..", tree.join("a/up")).unwrap();
    std::os::unix::fs::symlink("../a", tree.join("b/to-a")).unwrap();
    std::os::unix::fs::symlink("../b", tree.join("a/to-b")).unwrap();
    let run = chatplate(&["check", "tree"], dir.path());
    assert!(run.stdout.contains("1 passed, 0 failed"), "{}", run.stdout);
    // A template folder that links to itself.
    let templates = dir.path().join("templates");
    write(&templates.join("t.jinja"), "T");
    std::os::unix::fs::symlink(".", templates.join("self")).unwrap();
    let run = chatplate(
        &["render", "--template", "templates", "--messages", "m.json"],
        dir.path(),
    );
    assert_eq!(
        (run.code(), run.stdout.as_str()),
        (Some(0), "T"),
        "{}",
        run.stderr
    );
}

// Timed-out renders kept running (and holding memory) until they finished.
#[test]
fn item_9_slow_fixtures_stop_at_their_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let slow =
        "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}\
                {% endfor %}{% endfor %}{% endfor %}";
    for i in 0..6 {
        source_fixture(
            dir.path(),
            &format!("slow{i}.json"),
            slow,
            json!({"prompt": ""}),
        );
    }
    let started = Instant::now();
    let run = chatplate(
        &["check", ".", "--deadline", "1", "--fuel", "1000000000000"],
        dir.path(),
    );
    assert!(run.stdout.contains("0 passed, 6 failed"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("did not finish within 1.0 s").count(), 6);
    // Not a timing assertion: six stopped renders, not six runs of 10^15 steps.
    assert!(started.elapsed() < Duration::from_secs(100));
}

// --bless rewrote numbers and duplicate keys lost a value silently.
#[test]
fn item_13_numbers_survive_bless_and_duplicate_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"{
  "version": 1,
  "template": {"source": "{{ messages[0].n }} {{ messages[0].z }} {{ messages[0].e }} {{ messages[0].f }}"},
  "messages": [{"role": "user", "n": 123456789012345678901234567890, "z": -0, "e": 1E5, "f": 1.50}]
}"#;
    write(&dir.path().join("a.json"), text);
    let run = chatplate(&["check", ".", "--bless"], dir.path());
    assert_eq!(run.code(), Some(0), "{}", run.stdout);
    let blessed = std::fs::read_to_string(dir.path().join("a.json")).unwrap();
    for number in ["123456789012345678901234567890", "-0,", "1.50"] {
        assert!(blessed.contains(number), "{number} lost: {blessed}");
    }
    // What Python's json.loads gives the template: int, int 0, float, float.
    assert!(
        blessed.contains(r#""prompt": "123456789012345678901234567890 0 100000.0 1.5""#),
        "{blessed}"
    );
    write(
        &dir.path().join("a.json"),
        "{\"version\": 1, \"template\": {\"source\": \"x\"},\n\"messages\": [{\"role\": \"user\", \"content\": \"a\", \"content\": \"b\"}]}",
    );
    let run = chatplate(&["check", "."], dir.path());
    assert!(
        run.stdout
            .contains("a.json:2:47: duplicate key \"content\""),
        "{}",
        run.stdout
    );
}

// --bless stored the error position, the app only the message.
#[test]
fn item_14_bless_stores_the_error_without_its_position() {
    let dir = tempfile::tempdir().unwrap();
    source_fixture(
        dir.path(),
        "a.json",
        "\n   {{ raise_exception('no user') }}",
        json!({"prompt": ""}),
    );
    let run = chatplate(&["check", ".", "--bless"], dir.path());
    assert_eq!(run.code(), Some(0), "{}", run.stdout);
    let blessed: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("a.json")).unwrap()).unwrap();
    assert_eq!(
        blessed["expected"],
        json!({"error": "template raised: no user"})
    );
}

// Load errors without a position, or in serde's words.
#[test]
fn item_15_load_errors_have_positions_and_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let base = |extra: &str| {
        format!("{{\n  \"version\": 1,\n  \"template\": {{\"source\": \"x\"}},\n  \"messages\": [{{\"role\": \"user\"}}]{extra}\n}}")
    };
    let cases = [
        (
            "clock.json",
            base(",\n  \"clock\": \"15/01/2026\""),
            "clock.json:5:",
        ),
        (
            "version.json",
            base("").replace("\"version\": 1", "\"version\": 2"),
            "version.json:2:",
        ),
        (
            "cont.json",
            base(",\n  \"continue_final_message\": 5"),
            "must be true, false or the name of a field",
        ),
    ];
    for (name, text, wanted) in &cases {
        write(&dir.path().join(name), text);
        let run = chatplate(&["check", name], dir.path());
        assert!(run.stdout.contains(wanted), "{name}: {}", run.stdout);
        assert!(!run.stdout.contains("untagged"), "{}", run.stdout);
    }
    std::fs::write(
        dir.path().join("utf8.json"),
        b"{\n  \"version\": 1, \"x\": \"\xff\"}",
    )
    .unwrap();
    let run = chatplate(&["check", "utf8.json"], dir.path());
    assert!(
        run.stdout.contains("utf8.json:2:23: not valid UTF-8"),
        "{}",
        run.stdout
    );
}

// The isolation itself: a checking child that aborts or dies on a fixture costs
// only that fixture; a new child takes the rest, and every fixture is counted.
#[test]
fn item_1_a_crashing_checker_child_fails_only_its_fixture() {
    use chatplate_core::check::isolate::check_all_isolated;
    use chatplate_core::check::{CheckOptions, Fixture, Outcome};
    let dir = tempfile::tempdir().unwrap();
    // A stand-in child speaking the worker protocol: reads the options line, then
    // answers a passing verdict per request, but dies by SIGABRT or SIGSEGV on some
    // fixtures.
    let script = r#"read options
while read request; do
  case "$request" in
    *abort*) echo "memory allocation of 999 bytes failed" >&2; kill -ABRT $$ ;;
    *segv*) kill -SEGV $$ ;;
    *) echo '{"outcome": "pass"}' ;;
  esac
done"#;
    let fixtures: Vec<Fixture> = ["a", "abort", "b", "segv", "c", "abort2", "d"]
        .iter()
        .map(|name| Fixture {
            path: dir.path().join(format!("{name}.json")),
            root: dir.path().to_path_buf(),
            found_in_folder: true,
            text: None,
        })
        .collect();
    let worker = || {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        command
    };
    let results = check_all_isolated(&fixtures, &CheckOptions::default(), &worker);
    assert_eq!(results.len(), 7);
    let crashed: Vec<&str> = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Crashed(_)))
        .map(|r| r.path.file_stem().unwrap().to_str().unwrap())
        .collect();
    assert_eq!(crashed, ["abort", "segv", "abort2"]);
    assert_eq!(
        results
            .iter()
            .filter(|r| r.outcome == Outcome::Pass)
            .count(),
        4
    );
    let Outcome::Crashed(why) = &results[1].outcome else {
        unreachable!()
    };
    assert!(
        why.contains("signal 6") && why.contains("memory allocation of 999 bytes failed"),
        "{why}"
    );
}
