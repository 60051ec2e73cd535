//! Strangers' templates against the real binary: one test per item, each of which
//! failed (a panic, an abort, a stack overflow, a runaway allocation, a refused
//! conversation, escape sequences on the terminal) before the fix. The fixtures' side, and the helpers both share, are
//! in `untrusted`.

#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::binary::{binary_under_test, Run};
use crate::untrusted::{chatplate, fixture, source_fixture, write};

use serde_json::{json, Value as Json};

/// `render --template T --messages M` with one user message.
fn render_template(source: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("t.jinja"), source);
    write(
        &dir.path().join("m.json"),
        r#"[{"role": "user", "content": "hi"}]"#,
    );
    chatplate(
        &["render", "--template", "t.jinja", "--messages", "m.json"],
        dir.path(),
    )
}

/// Exit 1 with a message: the template failed cleanly (not a crash: 101, 134, ...).
fn assert_clean_failure(run: &Run, what: &str) {
    assert_eq!(
        run.code(),
        Some(1),
        "{what}: {:?}\n{}",
        run.status,
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{what}: {}", run.stderr);
}

// Panics in source preparation and string methods.
#[test]
fn item_3_no_panic_on_a_one_percent_tag_or_rsplit() {
    assert_clean_failure(&render_template("{%}{% raw %}x{% endraw %}"), "{%}");
    let run = render_template("{{ 'a b'.rsplit() }}{{ 'a b'.rsplit(None) }}");
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "['a', 'b']['a', 'b']");
    assert_clean_failure(&render_template("{{ 'a b'.rsplit(1) }}"), "rsplit(1)");
}

// Template-controlled sizes aborted the process.
#[test]
fn item_4_template_sizes_end_in_an_error_not_an_abort() {
    for source in [
        "{{ 'x'|center(10**12) }}",
        "{{ 'x'|indent(10**12) }}",
        "{{ [1]|tojson(indent=10**12) }}",
        "{{ 'x'.zfill(10**12) }}",
        "{{ '%1000000000000s' % 'x' }}",
        "{{ '{:>1000000000000}'.format('x') }}",
        "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|tojson }}",
    ] {
        assert_clean_failure(&render_template(source), source);
    }
}

// Stack overflows aborted the process.
#[test]
fn item_5_cycles_deep_nesting_and_long_chains_do_not_overflow_the_stack() {
    for source in [
        "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}",
        "{% set a = namespace() %}{% set b = namespace() %}{% set a.x = a %}{% set b.x = b %}{{ a == b }}",
        "{% set ns = namespace(l=[]) %}{% for i in range(50000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l|length }}",
    ] {
        assert_clean_failure(&render_template(source), source);
    }
    // A 10,000-term `~` chain renders, also inside `check`.
    let chain = format!("{{% set x = 'a' %}}{{{{ x{} }}}}", " ~ x".repeat(9_999));
    let dir = tempfile::tempdir().unwrap();
    source_fixture(
        dir.path(),
        "chain.json",
        &chain,
        json!({"prompt": "a".repeat(10_000)}),
    );
    let run = chatplate(&["check", "."], dir.path());
    assert!(
        run.stdout.contains("1 passed, 0 failed"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

// Single renders reached gigabytes.
#[test]
fn item_10_the_byte_budget_stops_big_allocations() {
    for source in [
        "{{ 'x'|center(10**9) }}",
        "{{ 'x'.zfill(10**9) }}",
        "{{ '%1000000000s' % 'x' }}",
    ] {
        let run = render_template(source);
        assert_clean_failure(&run, source);
        assert!(run.stderr.contains("--max-memory"), "{}", run.stderr);
    }
}

// Real conversations were called endless loops.
#[test]
fn item_11_long_quadratic_conversations_render() {
    let dir = tempfile::tempdir().unwrap();
    let messages: Vec<Json> = (0..1500)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": "x"}))
        .collect();
    let source =
        "{% for m in messages %}{% for n in messages %}{% if n.role == m.role %}{% endif %}\
                  {% endfor %}{{ m.content }}{% endfor %}";
    let session = json!({"version": 1, "template": {"source": source}, "messages": messages});
    write(&dir.path().join("long.json"), &session.to_string());
    let run = chatplate(&["render", "long.json", "--deadline", "100"], dir.path());
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "x".repeat(1500));
    let endless = json!({"version": 1,
        "template": {"source": "{% for i in range(100000) %}{% endfor %}"},
        "messages": [{"role": "user"}]});
    write(&dir.path().join("endless.json"), &endless.to_string());
    let run = chatplate(&["render", "endless.json", "--fuel", "1000"], dir.path());
    assert!(run.stderr.contains("1,010 steps"), "{}", run.stderr);
    assert!(
        run.stderr.contains("--fuel") && !run.stderr.contains("endless"),
        "{}",
        run.stderr
    );
}

// Escape sequences and huge values reached the terminal.
#[test]
fn item_12_control_characters_are_escaped_and_long_values_cut() {
    let run = render_template("{{ raise_exception('\x1b]0;owned\x07\x1b[31mred') }}");
    assert_clean_failure(&run, "raise_exception");
    assert!(
        !run.stderr.contains('\x1b') && !run.stderr.contains('\x07'),
        "{:?}",
        run.stderr
    );
    assert!(run.stderr.contains("\\u{001b}[31mred"), "{}", run.stderr);

    let dir = tempfile::tempdir().unwrap();
    let key = format!("\x1b[2J{}", "k".repeat(1 << 20));
    write(
        &dir.path().join("a.json"),
        &format!(r#"{{"version": 1, "{key}": 1}}"#),
    );
    let run = chatplate(&["check", "."], dir.path());
    assert!(!run.stdout.contains('\x1b'), "escape in check output");
    assert!(
        run.stdout.len() < 20_000,
        "{} bytes of output",
        run.stdout.len()
    );

    // A 50 MB template name in a fixture, and a long one on the command line.
    let name = "n".repeat(50 << 20);
    fixture(
        dir.path(),
        "b.json",
        json!({"bundled": name}),
        json!({"prompt": ""}),
    );
    let run = chatplate(&["check", "b.json"], dir.path());
    assert!(
        run.stdout.contains("bytes in all"),
        "{}",
        &run.stdout[..200.min(run.stdout.len())]
    );
    assert!(
        run.stdout.len() < 20_000,
        "{} bytes of output",
        run.stdout.len()
    );
    let run = chatplate(&["render", "b.json"], dir.path());
    assert!(
        run.stderr.len() < 20_000,
        "{} bytes on stderr",
        run.stderr.len()
    );
    let long_name = "n".repeat(100_000);
    let run = chatplate(
        &["render", "--template", &long_name, "--messages", "m.json"],
        dir.path(),
    );
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr.len() < 20_000,
        "{} bytes on stderr",
        run.stderr.len()
    );
}

// A closed pipe printed "Broken pipe"; one bad config dropped a folder.
#[test]
fn item_16_closed_pipes_end_quietly_and_good_templates_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("t.jinja"), &"line\n".repeat(200_000));
    write(
        &dir.path().join("m.json"),
        r#"[{"role": "user", "content": "hi"}]"#,
    );
    let mut child = Command::new(binary_under_test())
        .args(["render", "--template", "t.jinja", "--messages", "m.json"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away, like `| head -0`
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{:?}", output.status);
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let templates = dir.path().join("templates");
    write(
        &templates.join("a/tokenizer_config.json"),
        r#"{"bos_token": "<s>"}"#,
    );
    write(&templates.join("b/good.jinja"), "GOOD");
    let run = chatplate(
        &["render", "--template", "templates", "--messages", "m.json"],
        dir.path(),
    );
    assert_eq!(
        (run.code(), run.stdout.as_str()),
        (Some(0), "GOOD"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("warning") && run.stderr.contains("chat_template"),
        "{}",
        run.stderr
    );
}

// `debug()` printed the engine's state; helpers were callable.
#[test]
fn item_17_templates_see_only_transformers_environment() {
    assert_clean_failure(&render_template("{{ debug() }}"), "debug()");
    assert_clean_failure(&render_template("{{ __c_loop_iterable('ab') }}"), "helper");
    assert_clean_failure(&render_template("{{ 'ab'|__c_loop_iterable }}"), "helper");
}

// The rewrites use MiniJinja's unstable parser API.
#[test]
fn item_18_minijinja_is_pinned_and_install_is_locked() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("minijinja = { version = \"~3.1."),
        "minijinja not pinned"
    );
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains("cargo install --locked"),
        "README lacks --locked"
    );
}
