//! Inspection jobs on the worker: exact attribution of the prompt (see
//! [`crate::inspect`]), kept with what it was computed from so the next request after
//! an edit re-renders only the prefixes the edit touched.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::inspect::{
    attribute_focused, attribute_prepared, render_full, Attribution, InspectError, Previous,
};
use chatplate_render::{CancelToken, Conversation, PreparedMessages, RenderError, RenderErrorKind};

use super::last_render::EarlierPrompt;
use super::{Output, Template};

/// An attribution with the conversation and prompt it explains.
#[derive(Debug)]
pub struct Attributed {
    /// The conversation (a snapshot of the worker's).
    pub conversation: Arc<Conversation>,
    /// The prompt explained.
    pub prompt: Arc<str>,
    /// Which part produced each byte.
    pub attribution: Attribution,
    /// For a partial attribution, about how long the whole one would take: its
    /// left-out prefix renders, each taken as half the prompt's render, on every core.
    pub rest: Option<Duration>,
}

/// Attributes the worker's conversation (with its messages as the worker converted them
/// for its renders), reusing `previous` when it comes from the same template, and the
/// prompt when the latest render made it (`rendered`); with a `focus`, on screen first
/// (the result may be partial, see [`crate::inspect::attribute_focused`]).
pub(super) fn attribute(
    template: &Arc<Template>,
    (conversation, prepared): (&Arc<Conversation>, &PreparedMessages),
    previous: Option<&Attributed>,
    (rendered, focus): (Option<EarlierPrompt>, Option<Range<usize>>),
    token: &CancelToken,
) -> Result<Output, RenderError> {
    let compiled = template.compiled()?;
    let previous = previous.map(|p| Previous {
        conversation: &p.conversation,
        prompt: &p.prompt,
        attribution: &p.attribution,
    });
    let (prompt, took): (Arc<str>, Duration) = if let Some(rendered) = rendered {
        rendered
    } else {
        let started = Instant::now();
        let prompt = render_full(compiled, conversation, token).map_err(inspect_error)?;
        (prompt.into(), started.elapsed())
    };
    let attribution = match focus {
        Some(focus) => attribute_focused(
            compiled,
            conversation,
            prepared,
            &prompt,
            previous,
            focus,
            token,
        ),
        None => attribute_prepared(compiled, conversation, prepared, &prompt, previous, token),
    };
    let attribution = attribution.map_err(inspect_error)?;
    let rest = (attribution.partial.as_ref()).map(|p| rest_estimate(p.left_out, took));
    Ok(Output::Attributed(Arc::new(Attributed {
        conversation: Arc::clone(conversation),
        prompt,
        attribution,
        rest,
    })))
}

/// About how long `left_out` prefix renders take on every core, one render of the whole
/// prompt taking `took`: a prefix is half the prompt on average (a template whose work
/// grows faster than its output takes less, so this errs long).
fn rest_estimate(left_out: usize, took: Duration) -> Duration {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let renders = u32::try_from(left_out).unwrap_or(u32::MAX);
    (took / 2).saturating_mul(renders) / u32::try_from(cores).unwrap_or(1)
}

/// An inspection failure as the worker reports errors.
pub(super) fn inspect_error(error: InspectError) -> RenderError {
    match error {
        InspectError::Render(error) => error,
        InspectError::Cancelled(_) => RenderError::new(
            RenderErrorKind::Cancelled,
            "cancelled: a newer request replaced it",
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use crate::inspect::Source;
    use crate::worker::{Job, JobKind, Output, Template, Update, Worker};
    use chatplate_render::{Conversation, Limits, RenderErrorKind};

    const PATIENCE: Duration = Duration::from_secs(60);

    fn conversation(count: usize) -> Conversation {
        Conversation::new(
            (0..count)
                .map(|i| json!({"role": "user", "content": format!("m{i}")}))
                .collect(),
        )
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

    #[test]
    fn attributes_each_byte_to_its_message() {
        let worker = Worker::spawn(PATIENCE).unwrap();
        let template = Template::new(
            "[{% for m in messages %}<{{ m.content }}>{% endfor %}",
            Limits::default(),
        );
        worker.update(Update::all(conversation(2)));
        attribute(&worker, 3, &template);
        let reply = worker.recv_timeout(PATIENCE).expect("a reply");
        assert_eq!((reply.kind, reply.generation), (JobKind::Attribute, 3));
        let Ok(Output::Attributed(attributed)) = reply.result else {
            panic!("not attributed: {:?}", reply.result)
        };
        assert_eq!(&*attributed.prompt, "[<m0><m1>");
        assert!(attributed.attribution.monotone());
        let a = &attributed.attribution;
        assert_eq!(a.source_at(0), Some(Source::Preamble));
        assert_eq!(a.source_at(2), Some(Source::Message(0)));
        assert_eq!(a.source_at(6), Some(Source::Message(1)));
        assert_eq!(a.message_bytes(), vec![4, 4]);
    }

    fn attributed(worker: &Worker) -> Arc<super::Attributed> {
        match worker.recv_timeout(PATIENCE).expect("a reply").result {
            Ok(Output::Attributed(attributed)) => attributed,
            other => panic!("not attributed: {other:?}"),
        }
    }

    #[test]
    fn an_attribution_after_a_render_of_the_same_conversation_takes_its_prompt() {
        let worker = Worker::spawn(PATIENCE).unwrap();
        let template = Template::new(
            "{% for m in messages %}<{{ m.content }}>{% endfor %}",
            Limits::default(),
        );
        worker.update(Update::all(conversation(3)));
        let render = Job::Render {
            template: Arc::clone(&template),
        };
        worker.submit(1, render.clone());
        let Some(Ok(Output::Rendered(rendered))) = worker.recv_timeout(PATIENCE).map(|r| r.result)
        else {
            panic!("not rendered")
        };
        attribute(&worker, 1, &template);
        let first = attributed(&worker);
        // The very prompt the render made, not a second render of it.
        assert!(Arc::ptr_eq(&first.prompt, &rendered.prompt));
        let cancel = chatplate_render::CancelToken::new();
        let compiled = template.compiled().unwrap();
        let fresh = crate::inspect::attribute(compiled, &conversation(3), &cancel).unwrap();
        assert_eq!(first.attribution, fresh);
        // Once the conversation changed, the old prompt no longer applies: rendered anew.
        worker.update(Update::all(conversation(4)));
        attribute(&worker, 2, &template);
        let second = attributed(&worker);
        assert_eq!(&*second.prompt, "<m0><m1><m2><m3>");
        // Nor does another template's render.
        let other = Template::new(
            "{% for m in messages %}[{{ m.content }}]{% endfor %}",
            Limits::default(),
        );
        worker.submit(3, render);
        let _ = worker.recv_timeout(PATIENCE).expect("the render");
        attribute(&worker, 3, &other);
        assert_eq!(&*attributed(&worker).prompt, "[m0][m1][m2][m3]");
    }

    #[test]
    fn a_focused_attribution_of_an_untraceable_template_is_partial_then_whole() {
        let worker = Worker::spawn(PATIENCE).unwrap();
        // Built in a namespace string: the prefixes cannot be predicted.
        let template = Template::new(
            "{%- set ns = namespace(out='') -%}{%- for m in messages -%}\
             {%- set ns.out = ns.out ~ '<' ~ m.content ~ '>' -%}{%- endfor -%}{{ ns.out }}",
            Limits::default(),
        );
        worker.update(Update::all(conversation(200)));
        let job = |focus| Job::Attribute {
            template: Arc::clone(&template),
            previous: None,
            focus,
        };
        worker.submit(1, job(Some(100..110)));
        let partial = attributed(&worker);
        let covered = partial.attribution.partial.as_ref().expect("partial");
        assert_eq!(covered.focus, 100..110);
        assert!(partial.rest.is_some(), "the rest's cost is estimated");
        let offset = "<m0>".len() * 10 + "<m10>".len() * 90;
        assert_eq!(partial.attribution.ranges_of(100), vec![offset..offset + 6]);
        assert!(
            partial.attribution.ranges_of(150).is_empty(),
            "not rendered yet"
        );
        worker.submit(1, job(None));
        let whole = attributed(&worker);
        assert_eq!((&whole.attribution.partial, whole.rest), (&None, None));
        assert_eq!(
            whole.attribution.ranges_of(150),
            vec![offset + 300..offset + 306]
        );
    }

    #[test]
    fn a_render_request_cancels_a_running_attribution() {
        let worker = Worker::spawn(PATIENCE).unwrap();
        // Cubic per prefix: attributing 400 messages takes minutes. The limits are lifted
        // so the step budget cannot end the job first (it did, within the wait below, in an
        // optimised build), which would make this a race instead of a cancellation.
        let unbounded = Limits::default()
            .with_fuel(u64::MAX / 4)
            .with_deadline(Duration::from_secs(3600));
        let template = Template::new(
            "{% for m in messages %}{% for n in messages %}{% for o in messages %}\
             {% endfor %}{% endfor %}{{ m.content }}{% endfor %}",
            unbounded,
        );
        worker.update(Update::all(conversation(400)));
        attribute(&worker, 1, &template);
        // Let the attribution start, then ask for a render of a newer state.
        std::thread::sleep(Duration::from_millis(200));
        worker.update(Update::all(conversation(1)));
        worker.submit(
            2,
            Job::Render {
                template: Arc::clone(&template),
            },
        );
        let first = worker.recv_timeout(PATIENCE).expect("a reply");
        assert_eq!(first.kind, JobKind::Attribute);
        let err = first.result.expect_err("cancelled, not finished");
        assert_eq!(err.kind, RenderErrorKind::Cancelled);
        let second = worker.recv_timeout(PATIENCE).expect("the render");
        assert_eq!((second.kind, second.generation), (JobKind::Render, 2));
        assert!(second.result.is_ok());
    }
}
