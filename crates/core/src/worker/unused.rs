//! Unused-value jobs on the worker: which values of the selected message and of the
//! settings the template ignores ([`crate::inspect::check_values`], by perturbation).
//!
//! Bounded for long sessions: only the selected message's values and the settings'
//! tools, documents and variables are probed (one or two renders each, at most
//! [`MAX_VALUES`]), not every message; the app asks again when the selection moves.
//! And bounded by time: the probe runs after every edit, so on a template whose render
//! takes seconds it would keep a core busy for a minute per keystroke. It checks values
//! only while the renders it expects to need fit in [`PROBE_BUDGET`]; the rest are
//! reported as not checked, with the render time that kept them out.
//! The job is low priority: a render request cancels it when running and drops it
//! when still queued, since it answers an older conversation.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::inspect::{check_values, message_fields, settings_fields, DroppedFields, FieldRef};
use chatplate_render::{
    CancelToken, CompiledTemplate, Conversation, PreparedMessages, RenderError,
};

use super::inspection::inspect_error;
use super::{Output, Template};

/// Most values probed by one job (a message with hundreds of tool calls is cut here).
pub(crate) const MAX_VALUES: usize = 64;

/// The render time one probe may expect to spend: about what the app may take to go
/// idle after an edit at 1,000 messages, less the render and its attribution.
pub const PROBE_BUDGET: Duration = Duration::from_millis(500);

/// The verdicts for one message's values and the settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueChecks {
    /// The message probed, if any.
    pub message: Option<usize>,
    /// Values left out because of [`MAX_VALUES`].
    pub skipped: usize,
    /// Values not checked because their renders would not fit in [`PROBE_BUDGET`].
    pub unchecked: usize,
    /// What one render of the conversation took (what kept those values out).
    pub render_time: Duration,
    /// The verdicts, message values first.
    pub checks: DroppedFields,
}

/// Probes message `message`'s values (when given) and the settings' values, within
/// [`PROBE_BUDGET`]; `rendered` is the conversation's prompt and how long it took, when
/// the latest render made it.
pub(super) fn probe(
    template: &Template,
    message: Option<usize>,
    conversation: &Conversation,
    prepared: &PreparedMessages,
    rendered: Option<(&str, Duration)>,
    token: &CancelToken,
) -> Result<Output, RenderError> {
    let compiled = template.compiled()?;
    let mut fields = message.map_or_else(Vec::new, |i| message_fields(conversation, i));
    fields.extend(settings_fields(conversation));
    let skipped = fields.len().saturating_sub(MAX_VALUES);
    fields.truncate(MAX_VALUES);
    let (prompt, render_time) = if let Some((prompt, took)) = rendered {
        (Cow::Borrowed(prompt), took)
    } else {
        let started = Instant::now();
        let prompt = compiled.render_prepared(conversation, prepared, token)?;
        (Cow::Owned(prompt), started.elapsed())
    };
    let subject = Subject {
        compiled,
        conversation,
        prepared,
        prompt: &prompt,
    };
    let checks = subject.within_budget(fields, render_time, PROBE_BUDGET, token)?;
    Ok(Output::Values(Arc::new(ValueChecks {
        message,
        skipped,
        unchecked: checks.unchecked,
        render_time,
        checks: checks.checked,
    })))
}

/// What [`Subject::within_budget`] found.
struct Budgeted {
    checked: DroppedFields,
    /// Fields left unchecked at the end of the list.
    unchecked: usize,
}

/// What the values are checked against: the template, the conversation (with its
/// messages as template values) and its prompt.
struct Subject<'a> {
    compiled: &'a CompiledTemplate,
    conversation: &'a Conversation,
    prepared: &'a PreparedMessages,
    prompt: &'a str,
}

impl Subject<'_> {
    /// Checks `fields` in order while the time spent plus one more render
    /// (`render_time`) stays within `budget`; a value takes one render (two when unused).
    fn within_budget(
        &self,
        fields: Vec<FieldRef>,
        render_time: Duration,
        budget: Duration,
        token: &CancelToken,
    ) -> Result<Budgeted, RenderError> {
        let started = Instant::now();
        let total = fields.len();
        let mut checked = DroppedFields { checks: Vec::new() };
        for field in fields {
            if started.elapsed() + render_time > budget {
                break;
            }
            let one = self.check(vec![field], token)?;
            checked.checks.extend(one.checks);
        }
        Ok(Budgeted {
            unchecked: total - checked.checks.len(),
            checked,
        })
    }

    fn check(
        &self,
        fields: Vec<FieldRef>,
        token: &CancelToken,
    ) -> Result<DroppedFields, RenderError> {
        let (compiled, conversation, prepared) = (self.compiled, self.conversation, self.prepared);
        check_values(
            compiled,
            conversation,
            prepared,
            Some(self.prompt),
            fields,
            token,
        )
        .map_err(inspect_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::Verdict;
    use chatplate_render::Limits;
    use serde_json::json;

    /// Runs `test` on a template that prints each message's content and counts the tools.
    fn with_subject(test: impl FnOnce(&Subject, Vec<FieldRef>)) {
        let source = "{% for m in messages %}{{ m.content }}{% endfor %}{{ tools | length }}";
        let compiled = CompiledTemplate::compile(source, Limits::default()).unwrap();
        let conversation =
            Conversation::new(vec![json!({"role": "user", "content": "hi", "name": "x"})])
                .with_tools(Some(vec![json!({"name": "a"})]));
        let prepared = PreparedMessages::new(&conversation);
        let prompt = compiled.render(&conversation).unwrap();
        let mut fields = message_fields(&conversation, 0);
        fields.extend(settings_fields(&conversation));
        let subject = Subject {
            compiled: &compiled,
            conversation: &conversation,
            prepared: &prepared,
            prompt: &prompt,
        };
        test(&subject, fields);
    }

    #[test]
    fn a_generous_budget_checks_every_value() {
        with_subject(|subject, fields| {
            let token = CancelToken::new();
            let all = subject.check(fields.clone(), &token).unwrap();
            let budget = Duration::from_secs(600);
            let budgeted = subject.within_budget(fields, Duration::ZERO, budget, &token);
            let budgeted = budgeted.unwrap();
            assert_eq!(budgeted.unchecked, 0);
            assert_eq!(budgeted.checked, all);
            let verdicts: Vec<_> = all.checks.iter().map(|c| c.verdict.clone()).collect();
            // content used, `name` ignored, the tool's presence counted but its text ignored.
            assert_eq!(verdicts, [Verdict::Used, Verdict::Unused, Verdict::Unused]);
        });
    }

    #[test]
    fn renders_slower_than_the_budget_check_nothing() {
        with_subject(|subject, fields| {
            let count = fields.len();
            let slow = Duration::from_secs(10);
            let budgeted = subject.within_budget(fields, slow, PROBE_BUDGET, &CancelToken::new());
            let budgeted = budgeted.unwrap();
            assert_eq!(budgeted.unchecked, count);
            assert!(budgeted.checked.checks.is_empty());
        });
    }
}
