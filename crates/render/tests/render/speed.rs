//! Speed without a clock: the work of a render counted in bytes allocated (every copy
//! of a string allocates its destination) and in MiniJinja's fuel (one per instruction,
//! plus the bytes its operators produce), both the same on any machine and under any
//! load. A change that makes a render copy more, or run more instructions, fails here
//! in CI; BENCHMARKS.md and `scripts/bench_speed.py` give the CPU times.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chatplate_render::{thread_allocated_bytes, CompiledTemplate, Conversation, Limits};
use serde_json::{json, Value as Json};

use super::corpus_conversation::{conversation_for, corpus_templates};

/// Bytes allocated and fuel used by one render of `conversation` with `template`.
/// The second render is measured: the first also pays for what a process or thread
/// sets up once (whichever test gets there first).
fn work(template: &CompiledTemplate, conversation: &Conversation) -> Option<(u64, u64)> {
    template.render(conversation).ok()?;
    let before = thread_allocated_bytes();
    template.render(conversation).ok()?;
    Some((thread_allocated_bytes() - before, template.last_fuel_used()))
}

#[test]
fn appending_to_a_namespace_string_grows_it_in_place() {
    // Reka Edge builds its prompt so: each message appends a few pieces to one string.
    let source = "{% set ns = namespace(out='') %}{% for m in messages %}\
                  {% set ns.out = ns.out ~ '<m>' ~ m.content ~ '</m>' %}{% endfor %}\
                  {{ ns.out|length }}";
    let count = 2000u64;
    let content = "x".repeat(100);
    let messages = (0..count)
        .map(|_| json!({"role": "user", "content": content}))
        .collect();
    let conversation = Conversation::new(messages);
    let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
    let (allocated, _) = work(&template, &conversation).unwrap();
    // Each append's result is the whole string so far: 107 bytes more each time.
    let results: u64 = (1..=count).map(|i| i * 107).sum();
    // MiniJinja's pairwise `~` built three strings per append and copied each twice
    // (about 6x of `results`); a join copied the string once (`results`); the builder
    // grows it in place, a few times the final string in all.
    let last = count * 107;
    assert!(
        allocated < 16 * last,
        "{allocated} bytes allocated for a {last}-byte string ({results} bytes of results)"
    );
}

#[test]
fn namespace_appends_render_what_transformers_renders() {
    // Appends around a macro that appends to the same namespace while the statement's
    // pieces are evaluated (its append is lost, as in Python), a read between appends,
    // a test and a method on the attribute, slices of the result.
    let source = r#"{%- macro add(n) -%}{%- set ns.out = ns.out ~ "[m" ~ n ~ "]" -%}{{- n -}}{%- endmacro -%}
{%- set ns = namespace(out="", k=0) -%}
{%- for i in range(3000) -%}
{%- set ns.out = ns.out ~ "abcdefgh" ~ i -%}
{%- if i % 1000 == 7 -%}{%- set ns.out = ns.out ~ "<" ~ add(i) ~ ">" -%}{%- endif -%}
{%- if i % 1000 == 9 -%}{%- set ns.k = ns.k + (ns.out|length) -%}{%- set ns.out = ns.out ~ (ns.out is string) ~ ns.out.endswith("9") -%}{%- endif -%}
{%- endfor -%}
{{- ns.out|length }}|{{ ns.k }}|{{ ns.out[-40:] }}|{{ ns.out[:30] }}|{{ ns.out[5000:5030] }}"#;
    let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
    let conversation = Conversation::new(vec![json!({"role": "user", "content": "hi"})]);
    // transformers 5.23.0's render_jinja_template of the same source.
    assert_eq!(
        template.render(&conversation).unwrap(),
        "34929|34161|2996abcdefgh2997abcdefgh2998abcdefgh2999|abcdefgh0abcdefgh1abcdefgh2abc|\
         gh463abcdefgh464abcdefgh465abc"
    );
}

/// The committed figures: template, then bytes allocated and fuel at each size.
const BASELINE: &str = "tests/render/speed_baseline.tsv";
/// The sizes measured: small enough for a debug build, far enough apart that a
/// quadratic template shows (its work grows 16x, a linear one's 4x).
const SIZES: [usize; 2] = [100, 400];

fn measure_corpus(dir: &Path) -> BTreeMap<String, Vec<u64>> {
    let mut figures = BTreeMap::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jinja"))
        .collect();
    paths.sort();
    for path in paths {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let source = std::fs::read_to_string(&path).unwrap();
        let meta: Json =
            serde_json::from_str(&std::fs::read_to_string(path.with_extension("json")).unwrap())
                .unwrap();
        let Ok(template) = CompiledTemplate::compile(&source, Limits::default()) else {
            continue;
        };
        let mut row = Vec::new();
        for count in SIZES {
            // A template that refuses this conversation (it raises) is left out.
            let Some((bytes, fuel)) = work(&template, &conversation_for(&meta, count)) else {
                break;
            };
            row.extend([bytes, fuel]);
        }
        if row.len() == SIZES.len() * 2 {
            figures.insert(stem, row);
        }
    }
    figures
}

fn read_baseline(path: &Path) -> BTreeMap<String, Vec<u64>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let name = fields.next()?.to_string();
            Some((name, fields.filter_map(|f| f.parse().ok()).collect()))
        })
        .collect()
}

fn write_baseline(path: &Path, figures: &BTreeMap<String, Vec<u64>>) {
    let mut text = String::from(
        "# Written by `CHATPLATE_BLESS_SPEED=1 cargo test -p chatplate-render --test render speed`:\n\
         # template, then bytes allocated and fuel used by one render at 100 and 400 messages.\n",
    );
    for (name, row) in figures {
        let fields: Vec<String> = row.iter().map(u64::to_string).collect();
        text.push_str(&format!("{name}\t{}\n", fields.join("\t")));
    }
    std::fs::write(path, text).unwrap();
}

/// How much more work than the baseline a render may do before the test fails: room
/// for small changes elsewhere (a new check per message), none for a new copy of the
/// prompt per message.
const SLACK_PERCENT: u64 = 25;

#[test]
fn no_corpus_template_does_more_work_than_its_baseline() {
    let Some(dir) = corpus_templates() else {
        return;
    };
    let figures = measure_corpus(&dir);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(BASELINE);
    if std::env::var_os("CHATPLATE_BLESS_SPEED").is_some() {
        write_baseline(&path, &figures);
        return;
    }
    let baseline = read_baseline(&path);
    let mut worse = Vec::new();
    for (name, row) in &figures {
        let Some(expected) = baseline.get(name) else {
            worse.push(format!("{name}: not in {BASELINE} (bless it)"));
            continue;
        };
        for (index, (now, then)) in row.iter().zip(expected).enumerate() {
            if *now > then + then * SLACK_PERCENT / 100 + 4096 {
                let what = if index % 2 == 0 {
                    "bytes allocated"
                } else {
                    "fuel"
                };
                let size = SIZES[index / 2];
                worse.push(format!(
                    "{name} at {size} messages: {what} {now}, baseline {then}"
                ));
            }
        }
    }
    assert!(
        worse.is_empty(),
        "renders do more work than {BASELINE} records (if that is intended, bless it with \
         CHATPLATE_BLESS_SPEED=1):\n{}",
        worse.join("\n")
    );
}
