//! Attribution from one traced render (`inspect/one_render.rs`) against the
//! prefix-render method it replaces, on the conformance corpus: every case's
//! conversation, and 60-message conversations (with tool calls, and plain) on every corpus
//! template, long enough that the prediction is what answers most prefixes; each also
//! after an edit of its last message and of one in the middle, reusing the first
//! attribution (prefix outcomes and narrowed runs), and on screen first
//! (`inspect/focus.rs`).

use std::path::Path;

use chatplate_core::corpus;
use chatplate_core::inspect::{
    attribute, attribute_by_prefixes, attribute_focused, attribute_incremental, attribute_prepared,
    predicted_prefixes, Attribution, Previous, Source,
};
use chatplate_core::session::{Session, TemplateRef};
use chatplate_render::{CancelToken, CompiledTemplate, Conversation, Limits, PreparedMessages};
use serde_json::{json, Value as Json};

use crate::common;

/// What came of one conversation.
#[derive(Default)]
struct Tally {
    cases: usize,
    /// The traced render's looks were in order, and the raw prediction (before any
    /// check) was right for every prefix.
    predicted: usize,
    /// Out of order, or nothing written while the loop went through the messages: the
    /// prefixes were all rendered.
    declined: usize,
    /// In order but wrong somewhere: the checks must have caught it.
    caught: Vec<String>,
    /// The attribution differs from the prefix-render method's.
    different: Vec<String>,
    /// A focused attribution left prefixes out (see `compare_focused`).
    partial: usize,
}

impl Tally {
    fn compare(&mut self, name: &str, template: &CompiledTemplate, conversation: &Conversation) {
        let cancel = CancelToken::new();
        let Ok(reference) = attribute_by_prefixes(template, conversation, &cancel) else {
            // The prompt itself fails: nothing to attribute, either way.
            assert!(
                attribute(template, conversation, &cancel).is_err(),
                "{name}"
            );
            return;
        };
        self.cases += 1;
        let prompt = template.render(conversation).unwrap();
        match predicted_prefixes(template, conversation, &prompt, &cancel).unwrap() {
            None => self.declined += 1,
            Some(predicted) if predicted[..] == reference.prefixes[1..] => self.predicted += 1,
            Some(_) => self.caught.push(name.to_string()),
        }
        let fast = attribute(template, conversation, &cancel).unwrap();
        if fast != reference {
            self.different.push(name.to_string());
        }
        self.compare_focused(name, template, conversation, &prompt, &reference);
        self.compare_after_edit(name, template, conversation, &prompt, &fast);
    }

    /// The last message's content edited, then one in the middle: the attribution that
    /// reuses `before`'s (prefix outcomes, narrowed runs) equals the all-prefix method's.
    fn compare_after_edit(
        &mut self,
        name: &str,
        template: &CompiledTemplate,
        conversation: &Conversation,
        prompt: &str,
        before: &chatplate_core::inspect::Attribution,
    ) {
        let n = conversation.messages.len();
        for (index, which) in [(n.wrapping_sub(1), "last"), (n / 2, "middle")] {
            self.compare_after_editing(
                name,
                template,
                (conversation, prompt, before),
                index,
                which,
            );
        }
    }

    fn compare_after_editing(
        &mut self,
        name: &str,
        template: &CompiledTemplate,
        (conversation, prompt, before): (&Conversation, &str, &Attribution),
        index: usize,
        which: &str,
    ) {
        let mut edited = conversation.clone();
        let Some(Json::Object(last)) = edited.messages.get_mut(index) else {
            return;
        };
        let Some(Json::String(content)) = last.get_mut("content") else {
            return;
        };
        content.push_str(" (edited)");
        let cancel = CancelToken::new();
        let Ok(reference) = attribute_by_prefixes(template, &edited, &cancel) else {
            return;
        };
        let previous = Previous {
            conversation,
            prompt,
            attribution: before,
        };
        let incremental = attribute_incremental(template, &edited, Some(previous), &cancel);
        if incremental.ok() != Some(reference) {
            self.different
                .push(format!("{name} (after an edit of the {which} message)"));
        }
    }

    /// On screen first (`inspect/focus.rs`), with five messages a third of the way in
    /// in focus: either the whole attribution, or a partial one exact on the messages in
    /// focus and never naming another producer than the reference does, after which the
    /// whole one reusing it equals the reference.
    fn compare_focused(
        &mut self,
        name: &str,
        template: &CompiledTemplate,
        conversation: &Conversation,
        prompt: &str,
        reference: &Attribution,
    ) {
        let n = conversation.messages.len();
        let focus = n / 3..(n / 3 + 5).min(n);
        let prepared = PreparedMessages::new(conversation);
        let cancel = CancelToken::new();
        let focused = attribute_focused(
            template,
            conversation,
            &prepared,
            prompt,
            None,
            focus.clone(),
            &cancel,
        )
        .unwrap();
        if focused.partial.is_none() {
            if focused != *reference {
                self.different.push(format!("{name} (focused, whole)"));
            }
            return;
        }
        self.partial += 1;
        let same_in_focus = focus
            .clone()
            .all(|i| focused.ranges_of(i) == reference.ranges_of(i));
        let contradicts = focused.spans.iter().any(|span| {
            !matches!(span.source, Source::Ambiguous { .. } | Source::Unattributed)
                && span
                    .range
                    .clone()
                    .any(|offset| reference.source_at(offset) != Some(span.source))
        });
        let covered = focused.partial.as_ref().map(|p| p.focus.clone());
        if !same_in_focus || contradicts || covered != Some(focus) {
            self.different.push(format!("{name} (focused, partial)"));
        }
        // The whole attribution asked next, reusing the partial one's renders.
        let previous = Previous {
            conversation,
            prompt,
            attribution: &focused,
        };
        let whole = attribute_prepared(
            template,
            conversation,
            &prepared,
            prompt,
            Some(previous),
            &cancel,
        );
        if whole.ok().as_ref() != Some(reference) {
            self.different
                .push(format!("{name} (whole, after a partial one)"));
        }
    }

    fn report(&self, what: &str) {
        eprintln!(
            "{what}: {} attributed; every prefix predicted exactly {}, declined (looks \
             out of order, or nothing written in the loop) {}, some prefix mispredicted (its kind rendered) {}; partial \
             when focused {}",
            self.cases,
            self.predicted,
            self.declined,
            self.caught.len(),
            self.partial,
        );
        assert!(
            self.different.is_empty(),
            "{what}: attribution differs from the prefix-render method's: {:?}",
            self.different
        );
    }
}

#[test]
fn every_corpus_case_is_attributed_as_by_prefix_renders() {
    let Some(dir) = common::corpus_dir("attribution_corpus") else {
        return;
    };
    let out = tempfile::tempdir().expect("temp dir");
    let fixtures = corpus::import(&dir, out.path()).expect("corpus converts to fixtures");
    let mut tally = Tally::default();
    for path in &fixtures {
        let session = Session::load(path).expect("a corpus fixture loads");
        let source = match &session.template {
            TemplateRef::Source(source) => source.clone(),
            TemplateRef::Path(relative) => {
                std::fs::read_to_string(path.parent().unwrap().join(relative)).unwrap()
            }
            other => panic!("{}: unexpected template {other:?}", path.display()),
        };
        let Ok(template) = CompiledTemplate::compile(&source, Limits::default()) else {
            continue;
        };
        let Ok(conversation) = session.conversation() else {
            continue;
        };
        tally.compare(&path.display().to_string(), &template, &conversation);
    }
    tally.report("corpus cases");
    assert!(tally.cases > 600, "most corpus cases render");
}

#[test]
fn a_long_conversation_on_every_corpus_template_is_attributed_as_by_prefix_renders() {
    let Some(dir) = common::corpus_dir("attribution_corpus") else {
        return;
    };
    let mut tally = Tally::default();
    let mut stems: Vec<_> = std::fs::read_dir(dir.join("templates"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    stems.sort();
    for path in stems {
        let (template, conversation) = long_case(&path, Turns::WithToolCalls);
        tally.compare(&path.display().to_string(), &template, &conversation);
    }
    tally.report("60 messages on every template");
    assert!(
        tally.predicted > 0,
        "the prediction answers for some templates"
    );
    assert!(
        tally.partial > 0,
        "some templates are attributed in part first"
    );
}

/// Questions and answers only, long enough that the prefixes of a kind the traced render
/// mispredicts are predicted by their shift (`inspect/shifted.rs`), and the ambiguous
/// runs are narrowed together (`inspect/narrow_batch.rs`): Qwen3 leaves a run at every
/// answer, and refuses the tool calls of the other conversation (they have no content).
#[test]
fn a_long_plain_conversation_on_every_corpus_template_is_attributed_as_by_prefix_renders() {
    let Some(dir) = common::corpus_dir("attribution_corpus") else {
        return;
    };
    let mut tally = Tally::default();
    let mut stems: Vec<_> = std::fs::read_dir(dir.join("templates"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    stems.sort();
    for path in stems {
        let (template, conversation) = long_case(&path, Turns::Plain);
        tally.compare(&path.display().to_string(), &template, &conversation);
    }
    tally.report("60 plain messages on every template");
    assert!(
        tally.predicted > 0,
        "the prediction answers for some templates"
    );
}

/// Whether every third turn calls a tool.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Turns {
    WithToolCalls,
    Plain,
}

/// The template at `path` with its corpus variables, and a conversation like
/// `scripts/long_conversation.py`'s: a system prompt, then questions and answers.
fn long_case(path: &Path, turns: Turns) -> (CompiledTemplate, Conversation) {
    let source = std::fs::read_to_string(path).unwrap();
    let meta: Json =
        serde_json::from_str(&std::fs::read_to_string(path.with_extension("json")).unwrap())
            .unwrap();
    let template = CompiledTemplate::compile(&source, Limits::default()).unwrap();
    let mut messages = vec![json!({"role": "system", "content": "You are a helpful assistant."})];
    let mut turn = 0;
    while messages.len() < 60 {
        turn += 1;
        messages.push(json!({"role": "user", "content": format!("Question {turn}?")}));
        if turns == Turns::WithToolCalls && turn % 3 == 0 {
            messages.push(json!({"role": "assistant", "tool_calls": [{"type": "function",
                "function": {"name": "get_weather", "arguments": {"city": format!("City {turn}")}}}]}));
            messages
                .push(json!({"role": "tool", "content": format!("{{\"temperature_c\": {turn}}}")}));
        }
        messages.push(json!({"role": "assistant", "content": format!("Answer {turn}.")}));
    }
    let mut conversation = Conversation::new(messages).with_tools(Some(vec![json!({
        "type": "function", "function": {"name": "get_weather", "description": "Get the weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
    })]));
    conversation.add_generation_prompt = true;
    for key in ["bos_token", "eos_token"] {
        conversation.variables.insert(key.into(), meta[key].clone());
    }
    if let Some(extra) = meta["extra"].as_object() {
        conversation.variables.extend(extra.clone());
    }
    conversation.clock = Some("2026-01-15T00:00:00".parse().unwrap());
    (template, conversation)
}
