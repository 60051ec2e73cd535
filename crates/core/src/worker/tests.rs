//! The worker's contract: replies carry their generation, requests coalesce, runaway
//! renders time out without piling up threads, panics become errors.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Job, JobKind, MessageUpdate, Output, Reply, Template, Update, Worker};
use chatplate_render::{Conversation, Limits, RenderErrorKind};

const PATIENCE: Duration = Duration::from_secs(60);

fn conversation(text: &str) -> Conversation {
    Conversation::new(vec![json!({"role": "user", "content": text})])
}

/// Sets the worker's conversation to one user message and asks for a render.
fn render(worker: &Worker, generation: u64, template: &Arc<Template>, text: &str) {
    worker.update(Update::all(conversation(text)));
    worker.submit(
        generation,
        Job::Render {
            template: Arc::clone(template),
        },
    );
}

/// A template that takes seconds: a list doubled 23 times, then its last item, which
/// MiniJinja finds by walking the whole lazy chain without charging fuel.
fn slow_template() -> Arc<Template> {
    Template::new(
        "{% set ns = namespace(l=[1]) %}{% for i in range(23) %}{% set ns.l = ns.l + ns.l %}\
         {% endfor %}{{ ns.l|last }}",
        Limits::default(),
    )
}

fn next(worker: &Worker) -> Reply {
    worker.recv_timeout(PATIENCE).expect("a reply")
}

fn prompt(reply: &Reply) -> &str {
    match &reply.result {
        Ok(Output::Rendered(rendered)) => &rendered.prompt,
        other => panic!("not a render: {other:?}"),
    }
}

#[test]
fn renders_and_locates_with_generations() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    let template = Template::new("<{{ messages[0].content }}>\n.", Limits::default());
    render(&worker, 7, &template, "hi");
    let reply = next(&worker);
    assert_eq!((reply.kind, reply.generation), (JobKind::Render, 7));
    assert_eq!(prompt(&reply), "<hi>\n.");
    let Ok(Output::Rendered(rendered)) = reply.result else {
        unreachable!()
    };
    assert_eq!(rendered.line_starts, vec![0, 5]);
    assert_eq!(rendered.spans, vec![Some(1..3)]);
}

#[test]
fn updates_patch_the_workers_conversation() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    let template = Template::new(
        "{% for m in messages %}{{ m.content }};{% endfor %}{{ x }}",
        Limits::default(),
    );
    let mut start = conversation("a");
    start.messages.push(json!({"role": "user", "content": "b"}));
    worker.update(Update::all(start));
    let mut settings = Conversation::default();
    settings.variables.insert("x".into(), json!("!"));
    worker.update(Update {
        settings: None,
        messages: MessageUpdate::Some(vec![(1, json!({"role": "user", "content": "B"}))]),
    });
    worker.update(Update {
        settings: Some(settings),
        messages: MessageUpdate::Unchanged,
    });
    let job = Job::Render {
        template: Arc::clone(&template),
    };
    worker.submit(1, job);
    assert_eq!(prompt(&next(&worker)), "a;B;!");
}

/// Edits after a render reuse the converted messages and patch only the edited one;
/// the prompt is always the one a full render of the same conversation gives.
#[test]
fn edited_messages_render_like_a_full_render() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    let source = "{% for m in messages %}{{ m.role }}:{{ m.content }}{{ m.thinking }};{% endfor %}";
    let template = Template::new(source, Limits::default());
    let mut whole = conversation("a");
    whole
        .messages
        .push(json!({"role": "assistant", "content": "b", "reasoning_content": "r"}));
    whole.messages.push(json!({"role": "user", "content": "c"}));
    worker.update(Update::all(whole.clone()));
    let render_now = |generation| {
        worker.submit(
            generation,
            Job::Render {
                template: Arc::clone(&template),
            },
        );
        prompt(&next(&worker)).to_string()
    };
    let full = |conversation: &Conversation| {
        chatplate_render::CompiledTemplate::compile(source, Limits::default())
            .unwrap()
            .render(conversation)
            .unwrap()
    };
    assert_eq!(render_now(1), full(&whole));
    for (generation, (index, text)) in [(1, "B"), (0, "A"), (1, "BB"), (2, "C")]
        .into_iter()
        .enumerate()
    {
        let message = json!({"role": whole.messages[index]["role"], "content": text});
        whole.messages[index] = message.clone();
        worker.update(Update {
            settings: None,
            messages: MessageUpdate::Some(vec![(index, message)]),
        });
        assert_eq!(
            render_now(generation as u64 + 2),
            full(&whole),
            "after editing {index}"
        );
    }
    // A new list replaces the converted values entirely.
    whole.messages.truncate(1);
    worker.update(Update::all(whole.clone()));
    assert_eq!(render_now(9), full(&whole));
}

#[test]
fn a_burst_of_requests_coalesces_to_the_newest() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    let template = Template::new("{{ messages[0].content }}", Limits::default());
    for generation in 1..=200 {
        render(&worker, generation, &template, &generation.to_string());
    }
    let mut answered = Vec::new();
    while answered.last() != Some(&200) {
        let reply = next(&worker);
        assert_eq!(prompt(&reply), reply.generation.to_string());
        answered.push(reply.generation);
    }
    assert!(answered.windows(2).all(|w| w[0] < w[1]), "in order");
    assert!(
        answered.len() < 200,
        "coalesced: {} renders",
        answered.len()
    );
}

#[test]
fn a_runaway_render_times_out_and_blocks_only_its_template() {
    let worker = Worker::spawn(Duration::from_millis(100)).unwrap();
    let slow = slow_template();
    render(&worker, 1, &slow, "x");
    let timed_out = next(&worker);
    assert_eq!(timed_out.result.unwrap_err().kind, RenderErrorKind::Timeout);
    // The same template again: refused while the abandoned render still runs, then
    // tried once it has ended. The engine stops a cancelled render at its next
    // checkpoint, so the abandoned one may already be gone: then it just runs (and
    // times out) at once.
    render(&worker, 2, &slow, "y");
    let reply = until_settled(&worker, 2);
    assert_eq!(reply.result.unwrap_err().kind, RenderErrorKind::Timeout);
    // Another template renders meanwhile on a fresh runner.
    let quick = Template::new("ok {{ messages[0].content }}", Limits::default());
    render(&worker, 3, &quick, "z");
    let reply = until_settled(&worker, 3);
    assert_eq!(prompt(&reply), "ok z");
}

// A stopped render's thread ran on after its runner had answered, so the
// worker no longer counted it and started the template again beside it.
#[test]
fn a_stopped_render_counts_as_running_until_its_thread_ends() {
    let worker = Worker::spawn(Duration::from_millis(100)).unwrap();
    // Seconds inside one builtin filter call (sorting twenty thousand equal 100 KB
    // strings, comparisons which have no checkpoint; the step budget that refuses it
    // by default is lifted): the render can only stop once the call returns.
    let stuck = Template::new(
        "{{ (['x' * 100000] * 20000)|sort|length }}",
        Limits::default().with_fuel(u64::MAX / 4),
    );
    render(&worker, 1, &stuck, "x");
    let timed_out = next(&worker);
    assert_eq!(timed_out.result.unwrap_err().kind, RenderErrorKind::Timeout);
    // A runner that did not wait for its render thread would have answered by now (it
    // looks at its token often) and been forgotten.
    std::thread::sleep(Duration::from_millis(300));
    // Its runner waits for the render thread, so the template is not started again
    // beside it: the request is refused until the stopped render has ended.
    render(&worker, 2, &stuck, "y");
    let reply = next(&worker);
    assert_eq!(reply.generation, 2);
    let refusal = reply.result.unwrap_err();
    assert!(refusal.message.contains("still running"), "{refusal}");
}

// A timed-out render in one builtin filter call (hashing ten thousand 10 MB strings,
// a minute of work) went on for that long after the worker had said it stopped: the
// filter walked its whole input without looking at the stop. Its walk now ends at
// the stop.
#[test]
fn a_timed_out_render_in_a_long_filter_call_stops_soon_after_its_reply() {
    let worker = Worker::spawn(Duration::from_millis(100)).unwrap();
    // No step budget to end it first: only the stop can.
    let unbounded = Limits::default().with_fuel(u64::MAX / 4);
    let stuck = Template::new(
        "{{ (['x' * 10000000] * 10000)|unique|list|length }}",
        unbounded,
    );
    render(&worker, 1, &stuck, "x");
    let timed_out = next(&worker);
    assert_eq!(timed_out.result.unwrap_err().kind, RenderErrorKind::Timeout);
    let answered = Instant::now();
    // The worker counts the stopped render as running until its thread has ended, and
    // refuses the same template meanwhile: the first request it does not refuse shows
    // the thread has ended. Minutes before; here a few milliseconds (the margin is
    // for a loaded machine).
    for generation in 2.. {
        render(&worker, generation, &stuck, "y");
        let reply = next(&worker);
        let refused = (reply.result.as_ref()).is_err_and(|e| e.message.contains("still running"));
        if !refused {
            break;
        }
        assert!(
            answered.elapsed() < Duration::from_secs(5),
            "the stopped render still runs {:?} after its timeout reply",
            answered.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The reply that settles `generation`: skips the "still running" refusal (the
/// request is retried when the abandoned render ends) and older generations' replies.
fn until_settled(worker: &Worker, generation: u64) -> Reply {
    let started = Instant::now();
    loop {
        let reply = next(worker);
        let refused = reply
            .result
            .as_ref()
            .is_err_and(|e| e.message.contains("still running"));
        if reply.generation == generation && !refused {
            return reply;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "generation {generation} never settled"
        );
    }
}

#[test]
fn a_panic_in_a_job_is_an_error_and_the_worker_lives_on() {
    // The marker only matters in debug builds (see runner::test_panic).
    if !cfg!(debug_assertions) {
        return;
    }
    std::env::set_var("CHATPLATE_TEST_PANIC", "please-panic-now");
    let worker = Worker::spawn(PATIENCE).unwrap();
    let template = Template::new("{{ messages[0].content }}", Limits::default());
    render(&worker, 1, &template, "please-panic-now");
    let err = next(&worker).result.unwrap_err();
    assert!(err.message.contains("engine crashed"), "{err}");
    render(&worker, 2, &template, "fine");
    assert_eq!(prompt(&next(&worker)), "fine");
}

#[test]
fn compile_errors_come_back_as_replies() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    let template = Template::new("{% if %}", Limits::default());
    render(&worker, 1, &template, "x");
    let err = next(&worker).result.unwrap_err();
    assert_eq!(err.kind, RenderErrorKind::Syntax);
}

fn probe_values(worker: &Worker, generation: u64, template: &Arc<Template>) {
    let job = Job::Values {
        template: Arc::clone(template),
        message: Some(0),
    };
    worker.submit(generation, job);
}

#[test]
fn value_probes_report_what_the_template_ignores() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    let template = Template::new("{{ messages[0].content }}", Limits::default());
    let mut start = conversation("hi");
    start.messages[0]["name"] = json!("bob");
    start.variables.insert("unread".into(), json!(true));
    worker.update(Update::all(start));
    probe_values(&worker, 1, &template);
    let reply = next(&worker);
    assert_eq!((reply.kind, reply.generation), (JobKind::Values, 1));
    let Ok(Output::Values(checks)) = reply.result else {
        panic!("no verdicts: {:?}", reply.result)
    };
    assert_eq!(checks.message, Some(0));
    let unused: Vec<String> = (checks.checks.unused().iter())
        .map(ToString::to_string)
        .collect();
    assert_eq!(unused, ["messages[0].name", "variables.unread"]);
}

#[test]
fn a_newer_render_supersedes_a_pending_value_probe() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    let fast = Template::new("{{ messages[0].content }}", Limits::default());
    // Keep the runner busy so the probe stays queued.
    render(&worker, 1, &slow_template(), "a");
    probe_values(&worker, 2, &fast);
    render(&worker, 3, &fast, "b");
    let mut replies: Vec<Reply> = (0..3).map(|_| next(&worker)).collect();
    replies.sort_by_key(|r| r.generation);
    let probe = &replies[1];
    assert_eq!(probe.kind, JobKind::Values);
    let err = probe.result.as_ref().expect_err("dropped, not run");
    assert_eq!(err.kind, RenderErrorKind::Cancelled);
    assert_eq!(prompt(&replies[2]), "b");
}

fn compare(worker: &Worker, id: u64, counterpart: super::comparing::Counterpart, against: &str) {
    worker.submit(
        id,
        Job::Compare {
            counterpart,
            against: against.into(),
        },
    );
}

#[test]
fn a_comparison_renders_the_other_side_and_diffs_it_from_the_callers_prompt() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    worker.update(Update::all(conversation("hi")));
    let other = Template::new("a\n[{{ messages[0].content }}]\nc", Limits::default());
    let counterpart = super::comparing::Counterpart::Template(other);
    compare(&worker, 3, counterpart, "a\n<hi>\nc");
    let reply = next(&worker);
    assert_eq!((reply.kind, reply.generation), (JobKind::Compare, 3));
    let Ok(Output::Compared(compared)) = reply.result else {
        panic!("not a comparison: {:?}", reply.result)
    };
    assert_eq!(compared.render.result.as_deref(), Ok("a\n[hi]\nc"));
    assert_eq!(compared.hunks(), 1);
    use crate::diff::DiffLine::{Added, Removed, Same};
    assert_eq!(
        compared.lines(),
        vec![Same("a\n"), Removed("<hi>\n"), Added("[hi]\n"), Same("c")]
    );
}

#[test]
fn a_failing_side_is_an_answer_and_a_queued_one_gives_way_to_a_render() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    worker.update(Update::all(conversation("hi")));
    let broken = Template::new("{{ raise_exception('no') }}", Limits::default());
    compare(
        &worker,
        1,
        super::comparing::Counterpart::Template(broken),
        "x",
    );
    let Ok(Output::Compared(compared)) = next(&worker).result else {
        panic!("a failed render is still an answer")
    };
    assert!(compared
        .render
        .result
        .as_ref()
        .is_err_and(|e| e.to_string().contains("no")));
    assert_eq!(compared.hunks(), 1, "all of the caller's prompt is missing");

    // A slow render holds the runner; the queued comparison answers an older
    // conversation once a render is asked for, so it is dropped as cancelled.
    let slow = slow_template();
    render(&worker, 2, &slow, "a");
    let text = super::comparing::Counterpart::Text {
        text: "t".into(),
        error: None,
    };
    compare(&worker, 5, text, "t");
    render(&worker, 3, &slow, "b");
    let cancelled = (0..3)
        .map(|_| next(&worker))
        .find(|reply| reply.kind == JobKind::Compare)
        .expect("the comparison's answer");
    assert_eq!(cancelled.generation, 5);
    let kind = cancelled.result.as_ref().err().map(|e| e.kind);
    assert_eq!(kind, Some(RenderErrorKind::Cancelled));
}
