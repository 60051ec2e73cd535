//! The UI thread's cost per keystroke: one typed character goes through the real keymap
//! and `App::update`, one render request goes to the worker, whatever replies are ready
//! are taken in, and a frame is drawn into a 120x40 `TestBackend`. The render itself runs
//! on the worker, concurrently, so the figure does not depend on the template's speed:
//! it is measured at 1,000 and 10,000 messages on the default template, and at 1,000 on
//! Gemma 4 when the corpus is present.
//!
//! `keystroke_to_result/*` and `ui_thread/*` cover the corpus' Llama 3.1,
//! Qwen3 and Gemma 4 templates at 1,000 and 10,000 messages: a typed character until
//! its render is shown (the worker's whole job: the update, converting the edited
//! message, the render, locating the messages) and the UI thread's own part of it.
//!
//! `worker_parts/*` splits the worker's share at 10,000 messages into
//! the render, converting the edited message, locating the messages, line starts, a
//! whole-conversation copy and the incremental attribution that follows each render.
//!
//! `keystroke_to_frame_10000_messages/*` is the UI thread's part of a keystroke (the key,
//! the update, one render request, replies taken in, the echoed 120x40 frame) on every
//! dev template of the conformance corpus at 10,000 messages; the worker renders
//! meanwhile. The frame budget (BENCHMARKS.md) applies to it.
//!
//! A filter on the command line (`cargo bench --bench keystroke -- worker_parts`) also
//! skips setting up the sections it does not name (see [`wanted`]).
//!
//! Conversations are generated here, not committed.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chatplate::tui::action::Action;
use chatplate::tui::app::App;
use chatplate::tui::files::workspace::Workspace;
use chatplate::tui::panes::messages::conversation::{add_tool_call, example_session};
use chatplate::tui::terminal::burst::Burst;
use chatplate::tui::ui;
use chatplate_core::catalog::{self, TemplateSource};
use chatplate_core::inspect::{attribute_incremental, Previous};
use chatplate_core::session::Message;
use chatplate_core::worker::locate;
use chatplate_render::{CancelToken, CompiledTemplate, Limits, PreparedMessages};
use criterion::{criterion_group, criterion_main, Criterion};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::Value as Json;

/// The allocator the chatplate binary installs: its bookkeeping and mimalloc's speed are
/// part of what a user's run costs.
#[global_allocator]
static ALLOCATOR: chatplate_render::MeteredAllocator = chatplate_render::MeteredAllocator;

const DEV_TEMPLATES: &str = "../shared/conformance/dev/templates";
const GEMMA_4: &str = "../shared/conformance/dev/templates/google-gemma-4-31B-it.jinja";

/// A system message, then alternating user / assistant turns; the first answer calls a
/// tool and is answered by a tool result. (The test below was meant to give every tenth
/// answer a tool call, but it counts messages: after the first call's three, every
/// count is even. The published figures were measured on this shape, so it is kept.)
fn big_app(dir: &Path, template: TemplateSource, count: usize) -> App {
    let mut app = unsettled_app(dir, template, count, Shape::Tools, &Json::Null);
    app.settle();
    app
}

/// The conversations a template is offered, in order, until one renders.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// System message, turns, tool calls and results.
    Tools,
    /// System message and plain turns.
    Plain,
    /// Plain turns only (for templates that raise on a system role).
    NoSystem,
}

/// [`big_app`] without waiting for anything, in the given shape. `meta` is the
/// corpus's `templates/<stem>.json` (bos / eos tokens, the template's extra variables), or
/// null.
fn unsettled_app(
    dir: &Path,
    template: TemplateSource,
    count: usize,
    shape: Shape,
    meta: &Json,
) -> App {
    let plain = shape != Shape::Tools;
    let mut session = example_session(template.reference(dir));
    session
        .messages
        .truncate(usize::from(shape != Shape::NoSystem));
    let token = |key: &str| meta.get(key).and_then(Json::as_str).map(String::from);
    session.bos_token = token("bos_token").or(session.bos_token);
    session.eos_token = token("eos_token").or(session.eos_token);
    if let Some(Json::Object(extra)) = meta.get("extra") {
        session.variables.extend(extra.clone());
    }
    if plain {
        session.tools = None;
    }
    if let Some(name) = meta.get("tools_json_kwarg").and_then(Json::as_str) {
        // As the corpus passes tools to such templates (firefunction-v2's `functions`).
        let functions: Vec<Json> = session
            .tools
            .iter()
            .flatten()
            .filter_map(|tool| tool.get("function").cloned())
            .collect();
        let text = serde_json::to_string_pretty(&functions).unwrap_or_default();
        session.variables.insert(name.into(), Json::from(text));
    }
    while session.messages.len() < count {
        let turn = session.messages.len();
        session.messages.push(Message::new(
            "user",
            &format!("Question {turn}: how warm is it in city {turn}?"),
        ));
        let mut answer = Message::new(
            "assistant",
            &format!("Answer {turn}: it is {} degrees.", turn % 30),
        );
        if turn % 20 == 1 && !plain {
            add_tool_call(&mut answer, session.tools.as_deref());
            session.messages.push(answer);
            let mut result = Message::new("tool", "{\"temperature\": 18}");
            result.0.insert("tool_call_id".into(), "call_1".into());
            session.messages.push(result);
        } else {
            session.messages.push(answer);
        }
    }
    let workspace = Workspace::new(session, None, template, dir.to_path_buf());
    let mut app = App::new(workspace, catalog::bundled());
    app.update(Action::Resize(120, 40));
    app.request_render();
    app
}

fn bench_typing(c: &mut Criterion, name: &str, mut app: App) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    // Select the last message and open its content editor.
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    assert!(app.editor().is_some(), "editor open");
    c.bench_function(name, |b| {
        b.iter(|| {
            app.handle_key(black_box(press(KeyCode::Char('x'))));
            app.request_render();
            let _ = app.collect();
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
        })
    });
    app.settle();
}

/// Two hundred characters arriving at once (a paste in a terminal without bracketed
/// paste, or fast typing over a slow link): all applied, one render request, one frame.
fn bench_burst(c: &mut Criterion, mut app: App) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    c.bench_function("burst_of_200_keys_to_frame_1000_messages", |b| {
        b.iter(|| {
            // As the event loop does: one batch of input, collected into one insert.
            let mut burst = Burst::default();
            for _ in 0..200 {
                let key = black_box(press(KeyCode::Char('x')));
                if !burst.push(&app, &key) {
                    app.handle_key(key);
                }
            }
            burst.flush(&mut app);
            app.request_render();
            let _ = app.collect();
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
        })
    });
    app.settle();
}

/// A key typed after a 5 MB single-line paste into the message being edited.
fn bench_after_huge_paste(c: &mut Criterion, mut app: App) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    app.update(Action::Paste("0123456789".repeat(500_000)));
    app.settle();
    c.bench_function("keystroke_to_frame_after_5mb_paste", |b| {
        b.iter(|| {
            app.handle_key(black_box(press(KeyCode::Char('x'))));
            app.request_render();
            let _ = app.collect();
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
        })
    });
    app.settle();
}

const CORPUS_TEMPLATES: [(&str, &str); 3] = [
    ("llama-3.1", "meta-llama-Llama-3.1-8B-Instruct"),
    ("qwen3", "Qwen-Qwen3-0.6B"),
    ("gemma-4", "google-gemma-4-31B-it"),
];

/// A typed character until the render that includes it has been taken in and drawn (not
/// waiting for the attribution that follows it: `worker_parts` measures that).
fn bench_to_result(c: &mut Criterion, name: &str, mut app: App) {
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    let mut group = c.benchmark_group("keystroke_to_result");
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter(|| {
            app.handle_key(black_box(press(KeyCode::Char('x'))));
            app.request_render();
            // Until the render arrives; the attribution that follows it runs on in the
            // background (the next keystroke's render cancels it), as when typing.
            while app.is_stale() {
                let _ = app.collect();
                std::thread::sleep(Duration::from_micros(100));
            }
            terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
        })
    });
    group.finish();
}

/// Where the worker's time for one keystroke goes at 10,000 messages: the
/// render of the already-converted messages, converting the edited message, locating
/// the messages in the prompt, line starts, a copy of the whole conversation, and the
/// incremental attribution that follows every render.
fn worker_parts(c: &mut Criterion, short: &str, app: &App) {
    let conversation = app
        .workspace()
        .session
        .conversation()
        .expect("conversation");
    let compiled = CompiledTemplate::compile(&app.workspace().template.source, Limits::default())
        .expect("compiles");
    let mut prepared = PreparedMessages::new(&conversation);
    let token = CancelToken::new();
    let prompt = compiled
        .render_prepared(&conversation, &prepared, &token)
        .expect("renders");
    let last = conversation.messages.len() - 1;
    let mut group = c.benchmark_group(format!("worker_parts/{short}_10000_messages"));
    group.sample_size(10);
    group.bench_function("render_prepared", |b| {
        b.iter(|| compiled.render_prepared(&conversation, &prepared, &token))
    });
    group.bench_function("convert_edited_message", |b| {
        b.iter(|| prepared.set(last, black_box(&conversation.messages[last])))
    });
    group.bench_function("locate_messages", |b| {
        b.iter(|| locate::locate_messages(black_box(&prompt), &conversation.messages))
    });
    group.bench_function("line_starts", |b| {
        b.iter(|| chatplate_core::worker::line_starts(black_box(&prompt)))
    });
    group.bench_function("copy_conversation", |b| {
        b.iter(|| black_box(&conversation).clone())
    });
    if let Some(previous) = app.explanation().attributed.as_deref() {
        let mut edited = conversation.clone();
        let content = edited.messages[last]["content"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        edited.messages[last]["content"] = format!("{content}x").into();
        group.bench_function("attribute_incremental", |b| {
            b.iter(|| {
                let previous = Previous {
                    conversation: &previous.conversation,
                    prompt: &previous.prompt,
                    attribution: &previous.attribution,
                };
                attribute_incremental(&compiled, &edited, Some(previous), &token)
            })
        });
    }
    group.finish();
}

/// Both figures for the corpus' Llama 3.1, Qwen3 and Gemma 4 templates.
fn corpus_templates(c: &mut Criterion, dir: &Path) {
    for (short, name) in CORPUS_TEMPLATES {
        let path = format!("../shared/conformance/dev/templates/{name}.jinja");
        let template = match catalog::load_path(Path::new(&path)) {
            Ok(found) if !found.is_empty() => found[0].clone(),
            _ => {
                println!("SKIPPED {short} keystroke benches: {path} not found");
                continue;
            }
        };
        for count in [1000, 10_000] {
            let id = format!("{short}_{count}_messages");
            if wanted(&["ui_thread"]) {
                let app = big_app(dir, template.clone(), count);
                bench_typing(c, &format!("ui_thread/{id}"), app);
            }
            let parts = count == 10_000 && wanted(&["worker_parts"]);
            let to_result = wanted(&["keystroke_to_result"]);
            if parts || to_result {
                let app = big_app(dir, template.clone(), count);
                if parts {
                    worker_parts(c, short, &app);
                }
                if to_result {
                    bench_to_result(c, &id, app);
                }
            }
        }
    }
}

/// A typed character's UI-thread work, from the key to the echoed frame (update, one
/// render request, replies taken in, a 120x40 frame), at 10,000 messages on every dev
/// template of the conformance corpus. The render itself runs on the worker meanwhile.
/// Templates are given the tool-calling conversation, else plain turns after a system
/// message, else plain turns alone (see [`Shape`]), with the corpus's tokens and extra
/// variables; a template that rejects all three is skipped and named.
fn every_dev_template(c: &mut Criterion, dir: &Path) {
    let Ok(entries) = std::fs::read_dir(DEV_TEMPLATES) else {
        println!("SKIPPED keystroke_to_frame_10000_messages: {DEV_TEMPLATES} not found");
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    let mut group = c.benchmark_group("keystroke_to_frame_10000_messages");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    let mut skipped = Vec::new();
    for path in paths {
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if !wanted_template(&name) {
            continue;
        }
        let template = match catalog::load_path(&path) {
            Ok(found) if !found.is_empty() => found[0].clone(),
            _ => continue,
        };
        let meta = std::fs::read_to_string(path.with_extension("json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Json::Null);
        let Some(app) = accepted_app(dir, &template, &meta) else {
            skipped.push(name);
            continue;
        };
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("backend");
        let mut app = open_last_message(app);
        group.bench_function(&name, |b| {
            b.iter(|| {
                app.handle_key(black_box(press(KeyCode::Char('x'))));
                app.request_render();
                let _ = app.collect();
                terminal.draw(|frame| ui::draw(frame, &app)).expect("draw");
            })
        });
    }
    group.finish();
    println!("keystroke_to_frame_10000_messages: skipped (template rejects all three conversations): {skipped:?}");
}

/// An app on `template` with 10,000 messages whose first render succeeded, in the first
/// [`Shape`] the template accepts; `None` when it rejects all three.
fn accepted_app(dir: &Path, template: &TemplateSource, meta: &Json) -> Option<App> {
    for shape in [Shape::Tools, Shape::Plain, Shape::NoSystem] {
        let mut app = unsettled_app(dir, template.clone(), 10_000, shape, meta);
        let patience = Instant::now() + Duration::from_secs(120);
        while app.is_stale() && Instant::now() < patience {
            let _ = app.collect();
            std::thread::sleep(Duration::from_millis(5));
        }
        if !app.is_stale() && app.preview().error().is_none() {
            return Some(app);
        }
    }
    None
}

fn press(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Selects the last message and opens its content editor.
fn open_last_message(mut app: App) -> App {
    app.handle_key(press(KeyCode::End));
    app.handle_key(press(KeyCode::Up));
    app.handle_key(press(KeyCode::Char('e')));
    assert!(app.editor().is_some(), "editor open");
    app
}

/// Whether the template `name` should be set up: a filter `group/a|b` names templates by
/// the alternatives after the slash (each a plain substring of the name).
fn wanted_template(name: &str) -> bool {
    let filters: Vec<String> = filters().filter(|arg| arg.contains('/')).collect();
    filters.is_empty()
        || filters.iter().any(|filter| {
            let names = filter.split_once('/').map_or("", |(_, names)| names);
            names
                .trim_matches(|c| c == '(' || c == ')')
                .split('|')
                .any(|part| name.contains(part))
        })
}

/// Whether a section of this file should set up its (slow) apps: always without a
/// filter on the command line, else when the filter names one of its groups (setting up
/// 10,000-message apps on 57 templates takes minutes; criterion would only skip the
/// measuring).
fn wanted(groups: &[&str]) -> bool {
    let filters: Vec<String> = filters().collect();
    filters.is_empty()
        || filters.iter().any(|filter| {
            groups
                .iter()
                .any(|group| filter.contains(group) || group.contains(filter.as_str()))
        })
}

/// The benchmark filters given on the command line (criterion's own flags left out).
fn filters() -> impl Iterator<Item = String> {
    std::env::args().skip(1).filter(|arg| !arg.starts_with('-'))
}

fn keystroke(c: &mut Criterion) {
    let dir: PathBuf = std::env::temp_dir().join(format!("chatplate-bench-{}", std::process::id()));
    let default = catalog::default_template();
    if wanted(&["worker_parts", "keystroke_to_result", "ui_thread"]) {
        corpus_templates(c, &dir);
    }
    if wanted(&["keystroke_to_frame_10000_messages"]) {
        every_dev_template(c, &dir);
    }
    if !wanted(&["keystroke_to_frame_", "burst", "after_5mb"]) {
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    for count in [1000, 10_000] {
        let app = big_app(&dir, default.clone(), count);
        bench_typing(c, &format!("keystroke_to_frame_{count}_messages"), app);
    }
    match catalog::load_path(Path::new(GEMMA_4)) {
        Ok(found) if !found.is_empty() => {
            let app = big_app(&dir, found[0].clone(), 1000);
            bench_typing(c, "keystroke_to_frame_1000_messages_gemma4", app);
        }
        _ => println!("SKIPPED gemma4 keystroke bench: {GEMMA_4} not found"),
    }
    bench_burst(c, big_app(&dir, default.clone(), 1000));
    bench_after_huge_paste(c, big_app(&dir, default, 1000));
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, keystroke);
criterion_main!(benches);
