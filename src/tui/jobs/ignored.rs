//! Values the template ignores, marked in the message's field list and the settings
//! ("not used by this template").
//!
//! Found by perturbation on the worker ([`Job::Values`]): the selected message's values
//! (content and each part, reasoning, `name`, `tool_call_id`, each tool call's id, name
//! and arguments, extra keys) and the settings' values (each tool definition, document
//! and extra variable), one or two renders each. Only the selected message is probed,
//! so a 10,000-message session costs the same as a short one; moving the selection asks
//! again. Results are cached per generation (any change to the session or template
//! starts a new one) and message, so moving back and forth probes nothing twice. A
//! render request cancels a probe (running or queued); the next render asks again.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chatplate_core::inspect::{DroppedFields, FieldRef, PathStep};
use chatplate_core::session::Session;
use chatplate_core::worker::unused::{ValueChecks, PROBE_BUDGET};
use chatplate_core::worker::{Job, Output, Reply};
use chatplate_render::RenderErrorKind;

use crate::tui::panes::messages::fields::Field;
use crate::tui::panes::messages::fields::Row;
use crate::tui::preview::Preview;
use chatplate_core::worker::JobKind;

use crate::tui::jobs::Background;

use crate::tui::jobs::JobView;

use crate::tui::jobs::Said;

/// The app's verdicts on unused values.
#[derive(Debug, Default)]
pub struct IgnoredValues {
    /// The generation `cache` answers.
    generation: u64,
    /// Verdicts by probed message (`None`: the settings alone).
    cache: HashMap<Option<usize>, Arc<ValueChecks>>,
    /// The request on its way: its id, generation and message.
    in_flight: Option<(u64, u64, Option<usize>)>,
    /// The last request id (replies are matched by it: a replaced request may answer
    /// with the same generation).
    requests: u64,
}

impl IgnoredValues {
    /// The verdicts for `message` at `generation`, when known.
    fn get(&self, generation: u64, message: Option<usize>) -> Option<&ValueChecks> {
        (self.generation == generation)
            .then(|| self.cache.get(&message))
            .flatten()
            .map(Arc::as_ref)
    }

    /// Whether a probe for `message` at `generation` is known or on its way.
    fn asked(&self, generation: u64, message: Option<usize>) -> bool {
        self.get(generation, message).is_some()
            || (self.in_flight).is_some_and(|(_, g, m)| (g, m) == (generation, message))
    }
}

impl IgnoredValues {
    /// The job that asks which values of `message` (the selected one; `None`: the
    /// settings row) and of the settings the template ignores, with its request id, once
    /// the shown render is current (of `generation`) and not an error.
    pub fn request(
        &mut self,
        preview: &Preview,
        generation: u64,
        message: Option<usize>,
    ) -> Option<(u64, Job)> {
        if preview.generation < generation || preview.error().is_some() {
            return None;
        }
        if self.asked(generation, message) {
            return None;
        }
        let Ok(Job::Render { template }) = preview.render_job() else {
            return None;
        };
        self.requests += 1;
        self.in_flight = Some((self.requests, generation, message));
        Some((self.requests, Job::Values { template, message }))
    }

    /// Takes a value-probe reply in. `None`: not the answer awaited (or cancelled: asked
    /// again after the next render); else whether it is for the session state of
    /// `generation` (what is shown). Either way the selection is asked about next.
    pub fn receive(&mut self, reply: Reply, generation: u64) -> Option<bool> {
        let (id, asked_at, message) = self.in_flight?;
        if reply.generation != id {
            return None;
        }
        self.in_flight = None;
        let checks = match reply.result {
            Ok(Output::Values(checks)) if checks.message == message => checks,
            // Cancelled by a render: asked again once the new render arrives.
            Err(err) if err.kind == RenderErrorKind::Cancelled => return None,
            // Failed (a timeout): no marks for this version, and no retry loop.
            _ => Arc::new(ValueChecks {
                message,
                skipped: 0,
                unchecked: 0,
                render_time: Duration::ZERO,
                checks: DroppedFields { checks: Vec::new() },
            }),
        };
        if self.generation != asked_at {
            self.cache.clear();
            self.generation = asked_at;
        }
        self.cache.insert(message, checks);
        Some(asked_at == generation)
    }

    /// Whether the verdicts for the selection are still on their way.
    pub fn pending(&self) -> bool {
        self.in_flight.is_some()
    }

    /// Why some values of `row` carry no mark at `generation`: they were not checked
    /// because a render takes longer than the probe's budget.
    pub fn unchecked_note(&self, generation: u64, row: Row) -> Option<String> {
        let message = match row {
            Row::Message(index) => Some(index),
            Row::Settings => None,
        };
        let checks = self.get(generation, message)?;
        if checks.unchecked == 0 {
            return None;
        }
        let took = checks.render_time.as_secs_f64();
        let values = if checks.unchecked == 1 {
            "value"
        } else {
            "values"
        };
        let budget = PROBE_BUDGET.as_secs_f64();
        Some(format!(
            "{} {values} not checked for use: the check stops at {budget:.1} s of renders and \
             one takes {took:.1} s (`chatplate inspect --fixture` checks them all)",
            checks.unchecked
        ))
    }

    /// Why `field` of `row` is marked "not used by this template" at `generation`, if it
    /// is: `Some("")` when the whole value is unused, else which parts of it (`"part 2"`,
    /// `"x, y"`).
    pub fn note(
        &self,
        session: &Session,
        generation: u64,
        row: Row,
        field: Field,
    ) -> Option<String> {
        let message = match row {
            Row::Message(index) => Some(index),
            Row::Settings => None,
        };
        let checks = self.get(generation, message)?;
        let unused = checks.checks.unused();
        match row {
            Row::Message(index) => {
                let role = (session.messages.get(index)).map(|m| m.role());
                message_note(&unused, index, field, own_fields(role.unwrap_or_default()))
            }
            Row::Settings => settings_note(&unused, field),
        }
    }
}

/// The keys a message of `role` shows as fields of their own (the rest are noted on
/// `raw JSON`), as [`crate::tui::panes::messages::fields::fields`] lists them.
fn own_fields(role: &str) -> &'static [&'static str] {
    match role {
        "assistant" => &["content", "reasoning_content", "tool_calls"],
        "tool" => &["content", "tool_call_id", "name"],
        _ => &["content"],
    }
}

/// The note for a message field: its value unused, or (content parts, extra keys)
/// which of its values are. `own` are the keys shown as fields of their own.
fn message_note(unused: &[&FieldRef], index: usize, field: Field, own: &[&str]) -> Option<String> {
    let paths: Vec<&[PathStep]> = (unused.iter())
        .filter_map(|f| match f {
            FieldRef::Message { index: i, path } if *i == index => Some(path.as_slice()),
            _ => None,
        })
        .collect();
    let key = |k: &str| PathStep::Key(k.to_string());
    let whole = |path: Vec<PathStep>| paths.contains(&path.as_slice()).then(String::new);
    let call = |i: usize, tail: &[&str]| {
        let mut path = vec![key("tool_calls"), PathStep::Index(i)];
        path.extend(tail.iter().map(|k| key(k)));
        whole(path)
    };
    match field {
        Field::Content => whole(vec![key("content")]).or_else(|| {
            let parts: Vec<String> = (paths.iter())
                .filter_map(|p| match p {
                    [PathStep::Key(k), PathStep::Index(i)] if k == "content" => {
                        Some(format!("part {}", i + 1))
                    }
                    _ => None,
                })
                .collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        }),
        Field::Reasoning => whole(vec![key("reasoning_content")]),
        Field::ToolCallId => whole(vec![key("tool_call_id")]),
        Field::Name => whole(vec![key("name")]),
        Field::CallName(i) => call(i, &["function", "name"]),
        Field::CallId(i) => call(i, &["id"]),
        Field::CallArguments(i) => call(i, &["function", "arguments"]),
        Field::Raw => {
            let extra: Vec<&str> = (paths.iter())
                .filter_map(|p| match p {
                    [PathStep::Key(k)] if !own.contains(&k.as_str()) => Some(k.as_str()),
                    _ => None,
                })
                .collect();
            (!extra.is_empty()).then(|| extra.join(", "))
        }
        _ => None,
    }
}

/// The note for a settings field: which tools, documents or variables are unused.
fn settings_note(unused: &[&FieldRef], field: Field) -> Option<String> {
    let names: Vec<String> = (unused.iter())
        .filter_map(|f| match (f, field) {
            (FieldRef::Tool(i), Field::Tools) | (FieldRef::Document(i), Field::Documents) => {
                Some(format!("#{}", i + 1))
            }
            (FieldRef::Variable(name), Field::Variables) => Some(name.clone()),
            _ => None,
        })
        .collect();
    (!names.is_empty()).then(|| names.join(", "))
}

impl Background for IgnoredValues {
    fn takes(&self, reply: &Reply, _view: &JobView) -> bool {
        reply.kind == JobKind::Values
    }

    /// The selection's values, once the shown render is current and not an error.
    fn request(&mut self, view: &JobView, _said: &mut Said) -> Option<(u64, Job)> {
        let message = match view.row {
            Row::Message(index) => Some(index),
            Row::Settings => None,
        };
        IgnoredValues::request(self, view.preview, view.generation, message)
    }

    fn receive(&mut self, reply: Reply, view: &JobView, _said: &mut Said) -> bool {
        IgnoredValues::receive(self, reply, view.generation).unwrap_or(false)
    }

    fn pending(&self, _view: &JobView) -> bool {
        IgnoredValues::pending(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(index: usize, path: &[&str]) -> FieldRef {
        let path = (path.iter())
            .map(|step| match step.parse::<usize>() {
                Ok(i) => PathStep::Index(i),
                Err(_) => PathStep::Key(step.to_string()),
            })
            .collect();
        FieldRef::Message { index, path }
    }

    #[test]
    fn notes_name_the_unused_values_of_each_field() {
        let fields = [
            at(2, &["tool_calls", "0", "id"]),
            at(2, &["content", "1"]),
            at(2, &["extra"]),
            at(3, &["name"]),
            FieldRef::Tool(1),
            FieldRef::Variable("x".into()),
        ];
        let unused: Vec<&FieldRef> = fields.iter().collect();
        let asst = own_fields("assistant");
        let note = |index, field| message_note(&unused, index, field, asst);
        assert_eq!(note(2, Field::CallId(0)), Some("".into()));
        assert_eq!(note(2, Field::CallId(1)), None);
        assert_eq!(note(2, Field::CallName(0)), None);
        assert_eq!(note(2, Field::Content), Some("part 2".into()));
        assert_eq!(note(2, Field::Raw), Some("extra".into()));
        assert_eq!(note(2, Field::Name), None);
        let tool = own_fields("tool");
        assert_eq!(message_note(&unused, 3, Field::Name, tool), Some("".into()));
        assert_eq!(message_note(&unused, 3, Field::Raw, tool), None);
        // A user message has no `name` field of its own: `raw JSON` names it.
        let user = own_fields("user");
        assert_eq!(
            message_note(&unused, 3, Field::Raw, user),
            Some("name".into())
        );
        assert_eq!(settings_note(&unused, Field::Tools), Some("#2".into()));
        assert_eq!(settings_note(&unused, Field::Variables), Some("x".into()));
        assert_eq!(settings_note(&unused, Field::Documents), None);
    }

    #[test]
    fn values_left_unchecked_are_named_with_the_render_time() {
        let mut ignored = IgnoredValues::default();
        let (generation, message) = (7, Some(4));
        let mut answer = |unchecked| {
            ignored.requests += 1;
            ignored.in_flight = Some((ignored.requests, generation, message));
            let checks = ValueChecks {
                message,
                skipped: 0,
                unchecked,
                render_time: Duration::from_millis(10_500),
                checks: DroppedFields { checks: Vec::new() },
            };
            let reply = Reply {
                kind: chatplate_core::worker::JobKind::Values,
                generation: ignored.requests,
                result: Ok(Output::Values(Arc::new(checks))),
            };
            assert_eq!(ignored.receive(reply, generation), Some(true));
            ignored.unchecked_note(generation, Row::Message(4))
        };
        assert_eq!(
            answer(3).as_deref(),
            Some(
                "3 values not checked for use: the check stops at 0.5 s of renders and one \
                 takes 10.5 s (`chatplate inspect --fixture` checks them all)"
            )
        );
        assert_eq!(answer(0), None);
        // Another row, or a newer session version, has no note.
        assert_eq!(ignored.unchecked_note(generation, Row::Settings), None);
        assert_eq!(
            ignored.unchecked_note(generation + 1, Row::Message(4)),
            None
        );
    }
}
