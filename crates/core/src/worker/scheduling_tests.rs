//! An attribution never holds up a render: a queued one waits for a queued render, and
//! a running one gives way to a newly asked render.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{Job, JobKind, Output, Reply, Template, Update, Worker};
use chatplate_render::{Conversation, Limits, RenderErrorKind};

const PATIENCE: Duration = Duration::from_secs(60);

fn next(worker: &Worker) -> Reply {
    worker.recv_timeout(PATIENCE).expect("a reply")
}

fn attribute(worker: &Worker, generation: u64, template: &Arc<Template>) {
    worker.submit(
        generation,
        Job::Attribute {
            template: Arc::clone(template),
            previous: None,
            focus: None,
        },
    );
}

fn render(worker: &Worker, generation: u64, template: &Arc<Template>) {
    worker.submit(
        generation,
        Job::Render {
            template: Arc::clone(template),
        },
    );
}

fn messages(count: usize) -> Conversation {
    Conversation::new(
        (0..count)
            .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("m{i}")}))
            .collect(),
    )
}

#[test]
fn a_queued_attribution_waits_for_a_queued_render() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    worker.update(Update::all(messages(4)));
    // Holds the runner while both requests queue.
    let slow = Template::new(
        "{% set ns = namespace(l=[1]) %}{% for i in range(23) %}{% set ns.l = ns.l + ns.l %}\
         {% endfor %}{{ ns.l|last }}",
        Limits::default(),
    );
    let fast = Template::new(
        "{% for m in messages %}{{ m.content }}\n{% endfor %}",
        Limits::default(),
    );
    render(&worker, 1, &slow);
    attribute(&worker, 2, &fast);
    render(&worker, 3, &fast);
    let order: Vec<(JobKind, u64)> = (0..3)
        .map(|_| next(&worker))
        .map(|reply| {
            // The slow render's own outcome does not matter, only its place.
            assert!(reply.generation == 1 || reply.result.is_ok(), "{reply:?}");
            (reply.kind, reply.generation)
        })
        .collect();
    assert_eq!(
        order,
        [
            (JobKind::Render, 1),
            (JobKind::Render, 3),
            (JobKind::Attribute, 2)
        ]
    );
}

#[test]
fn a_running_attribution_gives_way_to_a_render() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    worker.update(Update::all(messages(1000)));
    // Every render of 1,000 messages loops thousands of times per message (printing little,
    // so no output limit ends it early): the attribution, a few such renders since it
    // became about one render, is still running when the render is asked for.
    let heavy = Template::new(
        "{% for m in messages %}{% for i in range(1000) %}{% if m.content == i %}x\
         {% endif %}{% endfor %}{{ m.content }}{% endfor %}",
        Limits::default(),
    );
    attribute(&worker, 1, &heavy);
    std::thread::sleep(Duration::from_millis(300));
    render(&worker, 2, &heavy);
    let mut replies: Vec<Reply> = (0..2).map(|_| next(&worker)).collect();
    replies.sort_by_key(|reply| reply.generation);
    let kind = replies[0].result.as_ref().err().map(|err| err.kind);
    assert_eq!(
        kind,
        Some(RenderErrorKind::Cancelled),
        "{:?}",
        replies[0].result
    );
    assert!(
        matches!(replies[1].result, Ok(Output::Rendered(_))),
        "{:?}",
        replies[1].result.as_ref().err()
    );
}

/// The app's compare view and engine matrix ask at the same time: a matrix row waits in
/// a slot of its own, so neither request replaces the other and both are answered.
#[test]
fn a_matrix_row_and_a_comparison_queue_side_by_side() {
    use super::comparing::Counterpart;
    use crate::compare::{Engine, EngineSetup};
    let worker = Worker::spawn(PATIENCE).unwrap();
    worker.update(Update::all(messages(2)));
    // Holds the runner while both requests queue.
    let slow = Template::new(
        "{% set ns = namespace(l=[1]) %}{% for i in range(23) %}{% set ns.l = ns.l + ns.l %}\
         {% endfor %}{{ ns.l|last }}",
        Limits::default(),
    );
    render(&worker, 1, &slow);
    let engine = |id| Counterpart::Engine {
        engine: Engine::MiniJinja,
        source: format!("{id}:{{{{ messages[0].content }}}}").into(),
        setup: Arc::new(EngineSetup::default()),
    };
    let against: Arc<str> = "m0".into();
    let compare = Job::Compare {
        counterpart: engine(2),
        against: Arc::clone(&against),
    };
    worker.submit(2, compare);
    let row = Job::Matrix {
        counterpart: engine(3),
        against,
    };
    worker.submit(3, row);
    let mut replies: Vec<Reply> = (0..3).map(|_| next(&worker)).collect();
    replies.sort_by_key(|reply| reply.generation);
    let kinds: Vec<JobKind> = replies.iter().map(|reply| reply.kind).collect();
    assert_eq!(kinds, [JobKind::Render, JobKind::Compare, JobKind::Matrix]);
    for (reply, want) in replies[1..].iter().zip(["2:m0", "3:m0"]) {
        let Ok(Output::Compared(compared)) = &reply.result else {
            panic!("not a comparison: {:?}", reply.result)
        };
        assert_eq!(compared.render.result.as_deref(), Ok(want));
    }
}

/// The user stops the background work: the running attribution is answered as cancelled
/// at once, the worker no longer reports it as busy, and renders go on.
#[test]
fn stopping_the_background_work_cancels_the_running_job() {
    let worker = Worker::spawn(PATIENCE).unwrap();
    worker.update(Update::all(messages(1000)));
    // As above, with ten times the loop: an attribution of seconds.
    let heavy = Template::new(
        "{% for m in messages %}{% for i in range(10000) %}{% if m.content == i %}x\
         {% endif %}{% endfor %}{{ m.content }}{% endfor %}",
        Limits::default(),
    );
    attribute(&worker, 1, &heavy);
    let until = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + PATIENCE;
        while !done() {
            assert!(std::time::Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let attributing = || worker.busy().map(|busy| busy.kind) == Some(JobKind::Attribute);
    until("the attribution did not start", &attributing);
    worker.stop_background();
    let reply = next(&worker);
    assert_eq!(reply.kind, JobKind::Attribute);
    let kind = reply.result.as_ref().err().map(|err| err.kind);
    assert_eq!(kind, Some(RenderErrorKind::Cancelled), "{:?}", reply.result);
    until("still busy after the stop", &|| worker.busy().is_none());
    let fast = Template::new("{{ messages|length }}", Limits::default());
    render(&worker, 2, &fast);
    let reply = next(&worker);
    assert!(
        matches!(&reply.result, Ok(Output::Rendered(_))),
        "{:?}",
        reply.result.as_ref().err()
    );
}
