//! Exact attribution in the app: which message produced which prompt bytes.
//!
//! After every render of the current session the app asks the worker for an
//! attribution ([`chatplate_core::worker::Job::Attribute`]), handing back the previous
//! result so only the prefixes an edit touched are rendered again. The request
//! names the messages on screen: where the template's prefixes cannot be predicted from
//! one traced render (and rendering them all is quadratic), the worker renders only
//! theirs and answers with a partial attribution, exact on screen; the app then asks
//! for the whole one, and asks again on screen first when the view moves past what the
//! partial one covers. The worker cancels a running attribution as soon as a newer
//! render is asked for, so typing in a 10,000-message session never waits for it; the
//! result is used only when it explains the shown prompt. Until then (and off screen
//! while only a partial result is in) the selected-message highlight falls back to the
//! worker's quick content search ([`chatplate_core::worker::locate`]) and the prompt
//! title says so.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use chatplate_core::inspect::Source;
use chatplate_core::worker::inspection::Attributed;
use chatplate_core::worker::{Job, Output, Reply, Template};
use chatplate_render::{RenderError, RenderErrorKind};

use crate::tui::preview::Preview;
use chatplate_core::worker::JobKind;

use crate::tui::jobs::Background;

use crate::tui::jobs::JobView;

use crate::tui::jobs::Said;

/// What the user is looking at: a message, and how many either side of it are on screen
/// (the message list keeps the selection centred).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InView {
    /// The message.
    pub message: usize,
    /// How many messages either side are on screen.
    pub half: usize,
}

impl InView {
    /// Around `message`, on a terminal `height` rows tall: the message list has about
    /// that many rows less its borders, tabs and status line. Between 8 and 24 either
    /// side: each is one prefix render, as long as the prompt near the end of it.
    pub fn new(message: usize, height: u16) -> Self {
        let half = usize::from(height.saturating_sub(4) / 2 + 1).clamp(8, 24);
        InView { message, half }
    }

    /// The messages an on-screen-first request covers, of `count`.
    fn focus(self, count: usize) -> Range<usize> {
        let start = self.message.saturating_sub(self.half).min(count);
        start..(self.message + self.half + 1).min(count).max(start)
    }

    /// Whether `covered` still covers the messages near this one: the view may move
    /// half its height inside a partial attribution before the app asks again.
    fn within(self, covered: &Range<usize>, count: usize) -> bool {
        let margin = self.half / 2;
        let near =
            self.message.saturating_sub(margin).min(count)..(self.message + margin).min(count);
        covered.start <= near.start && near.end <= covered.end
    }
}

/// The longest a whole attribution after a partial one may be expected to take (the
/// worker's estimate) for the app to ask for it: beyond this, it would keep both cores
/// busy for minutes after every edit (Reka Edge at 10,000 messages: hours) and then
/// run out of time.
const WHOLE_BUDGET: Duration = Duration::from_secs(10);

/// The app's attribution state.
#[derive(Debug, Default)]
pub struct Explanation {
    /// The latest attribution received (possibly of an older prompt, possibly partial):
    /// shown when its generation is the preview's, and reused by the next request
    /// either way (a partial one's prefix renders as much as a whole one's).
    pub attributed: Option<Arc<Attributed>>,
    /// The generation `attributed` answers.
    pub generation: u64,
    /// The generation last asked for (0: none).
    pub requested: u64,
    /// Why the attribution of the shown prompt failed, if it did.
    pub error: Option<String>,
    /// The attribution job on its way, if any.
    asked: Option<Asked>,
    /// The template `attributed` comes from (a result is reused only with it).
    template: Option<Arc<Template>>,
    /// The status line was told why this template's whole attribution is not asked for.
    declined_told: bool,
    /// This template's whole attribution after a partial one ran past the app's budget
    /// ([`Explanation::rest_too_slow`]): not asked for again while the template stays.
    rest_too_slow: bool,
}

/// An attribution job on its way.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Asked {
    generation: u64,
    /// The messages on screen it was asked for; `None`: the whole attribution.
    focus: Option<Range<usize>>,
}

/// What the prompt pane says about attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributionState {
    /// Being computed (the highlight is the quick content search meanwhile).
    Pending,
    /// Exact on screen; the rest is being computed.
    OnScreen,
    /// Exact on screen; the rest failed, or is not asked for because it would take too
    /// long (why is in [`Explanation::error`]).
    OnScreenOnly,
    /// Exact, and the template is prefix-monotone.
    Exact,
    /// Exact where possible: the template rewrites earlier output.
    NotMonotone,
    /// Failed (the error is in [`Explanation::error`]).
    Failed,
    /// The user stopped it (`Ctrl+T`) before it arrived.
    Stopped,
}

impl Explanation {
    /// The attribution of the shown prompt, when it has arrived (possibly partial).
    pub fn current(&self, preview: &Preview) -> Option<&Attributed> {
        let attributed = self.attributed.as_deref()?;
        // The generation names the session state; the length is a cheap sanity check
        // (comparing megabytes of prompt on every frame would not be).
        let current = self.generation == preview.generation
            && preview.error().is_none()
            && attributed.prompt.len() == preview.text().len();
        current.then_some(attributed)
    }

    /// Whether the shown prompt's attribution is partial (exact on screen only).
    pub fn partial(&self, preview: &Preview) -> bool {
        self.current(preview)
            .is_some_and(|a| a.attribution.partial.is_some())
    }

    /// How far attribution of the shown prompt has got.
    pub fn state(&self, preview: &Preview) -> AttributionState {
        // The view moved past a partial attribution: its new screen is on its way.
        let moved = (self.asked.as_ref()).is_some_and(|a| a.focus.is_some());
        match self.current(preview) {
            Some(a) if a.attribution.partial.is_some() && moved => AttributionState::Pending,
            Some(a) if a.attribution.partial.is_some() && self.error.is_some() => {
                AttributionState::OnScreenOnly
            }
            Some(a) if a.attribution.partial.is_some() => AttributionState::OnScreen,
            Some(a) if a.attribution.monotone() => AttributionState::Exact,
            Some(_) => AttributionState::NotMonotone,
            None if self.error.is_some() => AttributionState::Failed,
            None => AttributionState::Pending,
        }
    }

    /// The exact attribution of message `index`, when it has arrived: whole, or partial
    /// with the message in its focus.
    fn exact_for(&self, preview: &Preview, index: usize) -> Option<&Attributed> {
        self.current(preview)
            .filter(|a| (a.attribution.partial.as_ref()).is_none_or(|p| p.focus.contains(&index)))
    }

    /// The prompt byte ranges message `index` produced: exact when attributed, else the
    /// quick search's guess.
    pub fn ranges(&self, preview: &Preview, index: usize) -> Vec<Range<usize>> {
        match self.exact_for(preview, index) {
            Some(a) => merged(a.attribution.ranges_of(index)),
            None => preview.span(index).cloned().into_iter().collect(),
        }
    }

    /// The producer of prompt byte `offset`, when known exactly or as a range of
    /// producers (not where a partial attribution has not rendered yet).
    pub fn source_at(&self, preview: &Preview, offset: usize) -> Option<Source> {
        let attribution = &self.current(preview)?.attribution;
        let source = attribution.source_at(offset)?;
        let unknown = matches!(source, Source::Ambiguous { .. } | Source::Unattributed);
        (attribution.partial.is_none() || !unknown).then_some(source)
    }

    /// Bytes each message produced exactly, per message, once known (`None` for a
    /// message a partial attribution has not reached).
    pub fn message_bytes(&self, preview: &Preview) -> Option<Vec<Option<usize>>> {
        let attribution = &self.current(preview)?.attribution;
        let bytes = attribution.message_bytes().into_iter().enumerate();
        Some(
            bytes
                .map(|(i, b)| match &attribution.partial {
                    Some(partial) if !partial.focus.contains(&i) => None,
                    _ => Some(b),
                })
                .collect(),
        )
    }

    /// After a render of the current session arrived (not `stale`): the job that asks
    /// for its attribution on screen first (`in_view`: what the view shows),
    /// with its generation, unless asked already.
    pub fn request(
        &mut self,
        preview: &Preview,
        stale: bool,
        in_view: InView,
    ) -> Option<(u64, Job)> {
        let generation = preview.generation;
        if stale || preview.error().is_some() || self.requested >= generation {
            return None;
        }
        let Ok(Job::Render { template }) = preview.render_job() else {
            return None;
        };
        self.requested = generation;
        self.error = None;
        let same = (self.template.as_ref()).is_some_and(|t| Arc::ptr_eq(t, &template));
        if !same {
            self.attributed = None;
            self.generation = 0;
            self.declined_told = false;
            self.rest_too_slow = false;
        }
        let focus = Some(in_view.focus(preview.spans.len()));
        Some(self.ask(template, generation, focus))
    }

    /// While the shown attribution is partial: the job that asks for more, with its
    /// generation. Again on screen first when the message in view (`in_view`) has moved
    /// out of what it covers; else, once nothing is on its way, the whole attribution,
    /// unless that failed already or would take longer than [`WHOLE_BUDGET`] (then the
    /// reason, once, for the status line).
    pub fn request_more(&mut self, preview: &Preview, in_view: InView) -> Option<More> {
        let template = self.template.clone()?;
        let shown = self.current(preview)?;
        let covered = shown.attribution.partial.as_ref()?.focus.clone();
        let rest = shown.rest;
        let generation = preview.generation;
        let count = preview.spans.len();
        let seen = |on: &Range<usize>| in_view.within(on, count);
        let asked_focus = (self.asked.as_ref()).and_then(|a| a.focus.clone());
        if !seen(&covered) && !asked_focus.as_ref().is_some_and(seen) {
            let (generation, job) = self.ask(template, generation, Some(in_view.focus(count)));
            return Some(More::Ask(generation, job));
        }
        if self.asked.is_some() || self.error.is_some() {
            return None;
        }
        let too_slow = self
            .rest_too_slow
            .then(|| "took too long after an edit".to_string());
        let too_long = rest.filter(|&rest| rest > WHOLE_BUDGET);
        match too_slow.or_else(|| too_long.map(|rest| format!("would take about {}", about(rest))))
        {
            Some(why) => {
                let reason = format!("attribution: exact on screen only, the whole {why}");
                self.error = Some(reason.clone());
                // Said once per template, not after every edit.
                (!std::mem::replace(&mut self.declined_told, true))
                    .then_some(More::Declined(reason))
            }
            None => {
                let (generation, job) = self.ask(template, generation, None);
                Some(More::Ask(generation, job))
            }
        }
    }

    /// Whether the job on its way is the rest (the whole, after a partial attribution).
    pub fn asking_rest(&self) -> bool {
        self.asked
            .as_ref()
            .is_some_and(|asked| asked.focus.is_none())
    }

    /// The whole attribution after a partial one ran `ran` and the app cancelled it: exact
    /// on screen only, and not asked for again while the template stays (after every
    /// edit it would start over). Returns the reason, for the status line.
    pub fn rest_too_slow(&mut self, ran: Duration) -> String {
        self.rest_too_slow = true;
        self.declined_told = true;
        self.asked = None;
        let reason = format!(
            "attribution: exact on screen only, the whole took over {} s",
            ran.as_secs()
        );
        self.error = Some(reason.clone());
        reason
    }

    /// The attribution job of `generation` by `template` (whose results are kept), noted
    /// as on its way.
    fn ask(
        &mut self,
        template: Arc<Template>,
        generation: u64,
        focus: Option<Range<usize>>,
    ) -> (u64, Job) {
        self.template = Some(Arc::clone(&template));
        self.asked = Some(Asked {
            generation,
            focus: focus.clone(),
        });
        let previous = self.attributed.clone();
        (
            generation,
            Job::Attribute {
                template,
                previous,
                focus,
            },
        )
    }

    /// Takes an attribution reply in; returns whether anything shown changed (the
    /// shown render is of generation `shown`).
    pub fn receive(&mut self, reply: Reply, shown: u64) -> bool {
        let result = reply.result;
        // A cancelled job was replaced by a newer one, which is still on its way.
        if !matches!(&result, Err(e) if e.kind == RenderErrorKind::Cancelled) {
            self.asked.take_if(|a| a.generation <= reply.generation);
        }
        match result {
            Ok(Output::Attributed(attributed)) => {
                let partial = attributed.attribution.partial.is_some();
                // A partial result never replaces a whole one of the same state.
                let whole_already = reply.generation == self.generation
                    && (self.attributed.as_ref()).is_some_and(|a| a.attribution.partial.is_none());
                if reply.generation < self.generation || (partial && whole_already) {
                    return false;
                }
                self.attributed = Some(attributed);
                self.generation = reply.generation;
                reply.generation == shown
            }
            Ok(_) => false,
            Err(RenderError {
                kind: RenderErrorKind::Cancelled,
                ..
            }) => false,
            Err(err) => {
                let current = reply.generation == shown;
                if current {
                    self.error = Some(err.message);
                }
                current
            }
        }
    }

    /// Whether the whole attribution of the shown render (of generation `shown`) is
    /// still on its way.
    pub fn pending(&self, shown: u64) -> bool {
        let whole = self.generation == shown
            && (self.attributed.as_ref()).is_some_and(|a| a.attribution.partial.is_none());
        self.requested == shown && !whole && self.error.is_none()
    }
}

/// What [`Explanation::request_more`] decided.
#[derive(Debug)]
pub enum More {
    /// Submit this job, of this generation.
    Ask(u64, Job),
    /// The whole attribution is not asked for: why.
    Declined(String),
}

/// A duration for the status line: `40 s`, `25 min`, `3 h`.
fn about(duration: Duration) -> String {
    match duration.as_secs() {
        s @ 0..120 => format!("{s} s"),
        s @ 120..7200 => format!("{} min", s / 60),
        s => format!("{} h", s / 3600),
    }
}

/// Adjacent ranges joined, so a message's turn markers and text highlight as one run.
fn merged(ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match out.last_mut() {
            Some(last) if last.end == range.start => last.end = range.end,
            _ => out.push(range),
        }
    }
    out
}

/// A short description of a prompt byte's producer, for the status line.
pub fn describe(source: Source) -> String {
    use chatplate_core::inspect::Part;
    let part = |p: Part| match p {
        Part::Preamble => "the preamble".to_string(),
        Part::Message(i) => format!("message {}", i + 1),
        Part::End => "the end".to_string(),
    };
    match source {
        Source::Preamble => "the template's preamble (before the first message)".into(),
        Source::Tools => "the tool definitions block".into(),
        Source::Message(i) => format!("message {}", i + 1),
        Source::Continuation(i) => format!("message {} (continued)", i + 1),
        Source::GenerationPrompt => "the generation prompt".into(),
        Source::Ambiguous { from, to } => format!(
            "one of {} … {} (the template is not prefix-monotone here)",
            part(from),
            part(to)
        ),
        Source::Unattributed => "nothing exactly (the prefix renders contradict)".into(),
    }
}

impl Background for Explanation {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::Attribute
    }

    fn after_render(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        Explanation::request(self, view.preview, view.stale(), view.in_view())
    }

    /// While the shown attribution is partial: more of it.
    fn request(&mut self, view: &JobView, said: &mut Said) -> Option<(u64, Job)> {
        // Asked after every action: finding the message in view scans the messages.
        if view.stale() || !self.partial(view.preview) {
            return None;
        }
        match self.request_more(view.preview, view.in_view())? {
            More::Ask(generation, job) => Some((generation, job)),
            More::Declined(reason) => {
                said.notify(reason);
                None
            }
        }
    }

    fn receive(&mut self, reply: Reply, view: &JobView, _said: &mut Said) -> bool {
        Explanation::receive(self, reply, view.preview.generation)
    }

    fn pending(&self, view: &JobView) -> bool {
        Explanation::pending(self, view.preview.generation)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chatplate_core::worker::{Update, Worker};
    use chatplate_render::Conversation;
    use serde_json::json;

    use super::*;

    const PATIENCE: Duration = Duration::from_secs(60);

    /// Builds the prompt in a namespace string, as Reka Edge does: its prefixes cannot
    /// be predicted, so a focused attribution is partial.
    const UNTRACEABLE: &str = "{%- set ns = namespace(out='') -%}{%- for m in messages -%}\
        {%- set ns.out = ns.out ~ '<' ~ m.content ~ '>\n' -%}{%- endfor -%}{{ ns.out }}";

    fn take(explanation: &mut Explanation, worker: &Worker, (generation, job): (u64, Job)) {
        worker.submit(generation, job);
        let reply = worker.recv_timeout(PATIENCE).expect("a reply");
        assert!(explanation.receive(reply, generation), "shown");
    }

    fn asked(more: Option<More>) -> (u64, Job) {
        match more {
            Some(More::Ask(generation, job)) => (generation, job),
            other => panic!("not asked: {other:?}"),
        }
    }

    /// A worker holding `count` messages, and the preview of its render of them.
    fn rendered(count: usize) -> (Worker, Preview) {
        let worker = Worker::spawn(PATIENCE).unwrap();
        let messages = (0..count).map(|i| json!({"role": "user", "content": format!("m{i}")}));
        worker.update(Update::all(Conversation::new(messages.collect())));
        let mut preview = Preview::new(UNTRACEABLE);
        worker.submit(1, preview.render_job().unwrap());
        assert!(preview.accept(worker.recv_timeout(PATIENCE).expect("the render")));
        (worker, preview)
    }

    fn focus(job: &Job) -> Option<Range<usize>> {
        match job {
            Job::Attribute { focus, .. } => focus.clone(),
            other => panic!("not an attribution: {other:?}"),
        }
    }

    #[test]
    fn an_untraceable_template_is_exact_on_screen_first_then_whole() {
        let (worker, preview) = rendered(300);
        let mut explanation = Explanation::default();

        let first = explanation
            .request(&preview, false, InView::new(150, 40))
            .expect("asked");
        assert_eq!(focus(&first.1), Some(131..170), "19 either side at 40 rows");
        take(&mut explanation, &worker, first);
        assert_eq!(explanation.state(&preview), AttributionState::OnScreen);
        assert!(explanation.pending(1), "the whole is still to come");
        let line = |i: usize| {
            let start = preview.text().find(&format!("<m{i}>")).unwrap();
            start..start + format!("<m{i}>\n").len()
        };
        assert_eq!(explanation.ranges(&preview, 150), vec![line(150)]);
        let bytes = explanation.message_bytes(&preview).expect("in part");
        assert_eq!((bytes[150], bytes[10]), (Some(7), None));
        assert_eq!(explanation.source_at(&preview, line(10).start), None);

        // The view moved far away: on screen first again, then the whole.
        let again = asked(explanation.request_more(&preview, InView::new(20, 40)));
        assert_eq!(explanation.state(&preview), AttributionState::Pending);
        assert_eq!(focus(&again.1), Some(1..40));
        take(&mut explanation, &worker, again);
        assert_eq!(explanation.ranges(&preview, 20), vec![line(20)]);
        let whole = asked(explanation.request_more(&preview, InView::new(20, 40)));
        assert_eq!(focus(&whole.1), None);
        assert!(
            explanation
                .request_more(&preview, InView::new(20, 40))
                .is_none(),
            "on its way"
        );
        take(&mut explanation, &worker, whole);
        assert_eq!(explanation.state(&preview), AttributionState::Exact);
        assert!(!explanation.pending(1));
        assert_eq!(explanation.ranges(&preview, 250), vec![line(250)]);
        assert!(
            explanation
                .request_more(&preview, InView::new(250, 40))
                .is_none(),
            "nothing more"
        );
    }

    #[test]
    fn a_whole_attribution_expected_to_take_too_long_is_not_asked_for() {
        let (worker, preview) = rendered(300);
        let mut explanation = Explanation::default();
        let (generation, job) = explanation
            .request(&preview, false, InView::new(150, 40))
            .expect("asked");
        worker.submit(generation, job);
        let mut reply = worker.recv_timeout(PATIENCE).expect("a reply");
        // As the worker would estimate for a template a thousand times slower.
        if let Ok(Output::Attributed(attributed)) = &mut reply.result {
            Arc::get_mut(attributed).expect("only here").rest = Some(Duration::from_secs(7200));
        }
        assert!(explanation.receive(reply, 1));
        let Some(More::Declined(reason)) = explanation.request_more(&preview, InView::new(150, 40))
        else {
            panic!("the whole attribution was asked for");
        };
        assert!(reason.contains("about 2 h"), "{reason}");
        assert_eq!(explanation.state(&preview), AttributionState::OnScreenOnly);
        assert!(!explanation.pending(1), "the app may go idle");
        assert!(
            explanation
                .request_more(&preview, InView::new(150, 40))
                .is_none(),
            "said once"
        );
        // Elsewhere, still on screen first.
        let (_, job) = asked(explanation.request_more(&preview, InView::new(20, 40)));
        assert_eq!(focus(&job), Some(1..40));
    }

    /// A rest cancelled past the app's budget: after the next render, the screen only.
    #[test]
    fn a_rest_that_ran_too_long_is_not_asked_for_again() {
        let (worker, mut preview) = rendered(300);
        let mut explanation = Explanation::default();
        let first = explanation.request(&preview, false, InView::new(150, 40));
        take(&mut explanation, &worker, first.expect("asked"));
        let _whole = asked(explanation.request_more(&preview, InView::new(150, 40)));
        assert!(explanation.asking_rest());
        assert!(explanation
            .rest_too_slow(Duration::from_secs(3))
            .contains("over 3 s"));
        assert_eq!(explanation.state(&preview), AttributionState::OnScreenOnly);
        assert!(!explanation.pending(1), "the app may go idle");
        worker.submit(2, preview.render_job().unwrap());
        assert!(preview.accept(worker.recv_timeout(PATIENCE).expect("the render")));
        let again = explanation.request(&preview, false, InView::new(150, 40));
        take(&mut explanation, &worker, again.expect("the screen again"));
        assert!(explanation
            .request_more(&preview, InView::new(150, 40))
            .is_none());
        assert_eq!(explanation.state(&preview), AttributionState::OnScreenOnly);
    }
}
