//! Reasoning probes: which field or content block a template reads reasoning from,
//! whether it needs tool calls for it, whether earlier turns keep it, and which
//! variables switch thinking on and off.
//!
//! transformers aliases `reasoning_content`, `thinking` and `reasoning` before the
//! template runs: a message with only one of them arrives with both `thinking` and
//! `reasoning_content` set. A message with *different* `reasoning_content` and
//! `thinking` keeps both values apart, which is how the field probe tells which one the
//! template itself reads.

use serde_json::{json, Value as Json};

use super::capabilities::{Decided, Entry, ReasoningFormat};
use super::content::{ContentCaps, SECOND_USER_NEEDLE, USER_NEEDLE};
use super::probe::{Probe, Prober, Shown};
use super::thinking::Switches;
use super::tools::{ToolCaps, CALL_ID};
use super::Cancelled;

const CONTENT_FIELD_NEEDLE: &str = "ReasoningContentNeedle";
const THINKING_FIELD_NEEDLE: &str = "ThinkingFieldNeedle";
const THOUGHT_NEEDLE: &str = "ThoughtFieldNeedle";
const PLAN_NEEDLE: &str = "ToolPlanNeedle";
const BLOCK_NEEDLE: &str = "ThinkingBlockNeedle";
const THOUGHTS_NEEDLE: &str = "ThoughtsBlockNeedle";
const PAST_NEEDLE: &str = "PastReasoningNeedle";
const REPLY: &str = "ReplyNeedle3390";

/// What the reasoning probes found.
#[derive(Debug, Clone, PartialEq)]
pub struct ReasoningCaps {
    /// minja's `supports_reasoning`: some form of reasoning appears in the prompt.
    pub supports_reasoning: Decided<bool>,
    /// minja's `reasoning_format`: the first form found, in minja's priority order.
    pub reasoning_format: Decided<ReasoningFormat>,
    /// Every form that rendered.
    pub(crate) reasoning_forms: Vec<ReasoningFormat>,
    /// Reasoning only shows on messages with tool calls.
    pub reasoning_requires_tools: Decided<bool>,
    /// An earlier turn's reasoning still shows once a new user turn follows (`None`
    /// without reasoning support).
    pub keeps_past_reasoning: Decided<Option<bool>>,
    /// Setting `enable_thinking` to false changes the prompt.
    pub honours_enable_thinking: Decided<bool>,
    /// Variables whose true/false toggle changes the generation prompt or the
    /// reasoning shown.
    pub thinking_switches: Decided<Vec<String>>,
}

impl ReasoningCaps {
    /// The report lines minja has no name for.
    pub fn entries(&self) -> Vec<Entry> {
        let forms: Vec<&str> = self
            .reasoning_forms
            .iter()
            .map(|f| f.minja_name())
            .collect();
        vec![
            Entry {
                key: "reasoning_forms".into(),
                value: json!(forms),
                probe: self.reasoning_format.probe.clone(),
                observed: self.reasoning_format.observed.clone(),
            },
            Entry::flag("reasoning_requires_tools", &self.reasoning_requires_tools),
            Entry {
                key: "keeps_past_reasoning".into(),
                value: json!(self.keeps_past_reasoning.value),
                probe: self.keeps_past_reasoning.probe.clone(),
                observed: self.keeps_past_reasoning.observed.clone(),
            },
            Entry::flag("honours_enable_thinking", &self.honours_enable_thinking),
            Entry {
                key: "thinking_switches".into(),
                value: json!(self.thinking_switches.value),
                probe: self.thinking_switches.probe.clone(),
                observed: self.thinking_switches.observed.clone(),
            },
        ]
    }
}

/// Runs the reasoning probes; `variables` are the template's own inputs (candidates
/// for thinking switches).
pub(crate) fn detect(
    prober: &Prober,
    content: &ContentCaps,
    tools: &ToolCaps,
    variables: &[String],
) -> Result<ReasoningCaps, Cancelled> {
    let found = Forms::probe(prober, content, tools)?;
    let format = found.format();
    let maker = Maker {
        content,
        tools,
        format: format.value,
        with_tools: found.requires_tools,
    };
    let keeps_past_reasoning = keeps_past(prober, &maker)?;
    let opening = maker.content.user(USER_NEEDLE);
    let history = (maker.format != ReasoningFormat::None)
        .then(|| (Probe::of(maker.exchange(PAST_NEEDLE)), PAST_NEEDLE));
    let switches = Switches::probe(prober, opening, USER_NEEDLE, history, variables)?;
    Ok(ReasoningCaps {
        supports_reasoning: Decided::new(
            format.value != ReasoningFormat::None,
            format.probe.clone(),
            format.observed.clone(),
        ),
        reasoning_requires_tools: Decided::new(
            found.requires_tools,
            format.probe.clone(),
            if found.requires_tools {
                "reasoning appears only on a message with tool calls".to_string()
            } else {
                format.observed.clone()
            },
        ),
        reasoning_forms: found.forms(),
        reasoning_format: format,
        keeps_past_reasoning,
        honours_enable_thinking: switches.honours_enable_thinking(),
        thinking_switches: switches.decided(),
    })
}

/// The forms that rendered, each with the probe that showed it.
struct Forms {
    found: Vec<(ReasoningFormat, String)>,
    requires_tools: bool,
}

impl Forms {
    fn probe(prober: &Prober, content: &ContentCaps, tools: &ToolCaps) -> Result<Self, Cancelled> {
        let mut forms = Forms {
            found: Vec::new(),
            requires_tools: false,
        };
        let user = content.user(USER_NEEDLE);
        let fields = json!({"role": "assistant", "content": REPLY,
            "reasoning_content": CONTENT_FIELD_NEEDLE, "thinking": THINKING_FIELD_NEEDLE});
        let mut shown = render(prober, vec![user.clone(), fields])?;
        if !has_field(&shown.1) && tools.supports_tool_calls.value {
            let with_call = json!({"role": "assistant", "content": content.empty(),
                "reasoning_content": CONTENT_FIELD_NEEDLE, "thinking": THINKING_FIELD_NEEDLE,
                "tool_calls": [tools.call(CALL_ID, "probe_call_one")]});
            shown = render(prober, vec![user.clone(), with_call])?;
            forms.requires_tools = has_field(&shown.1);
        }
        forms.note(
            &shown,
            CONTENT_FIELD_NEEDLE,
            ReasoningFormat::ReasoningContentField,
        );
        let thought = json!({"role": "assistant", "content": REPLY, "thought": THOUGHT_NEEDLE});
        let shown_thought = render(prober, vec![user.clone(), thought])?;
        forms.note(
            &shown_thought,
            THOUGHT_NEEDLE,
            ReasoningFormat::ThoughtField,
        );
        forms.note(
            &shown,
            THINKING_FIELD_NEEDLE,
            ReasoningFormat::ThinkingField,
        );
        if tools.supports_tool_calls.value {
            let plan = json!({"role": "assistant", "content": content.empty(),
                "tool_plan": PLAN_NEEDLE, "tool_calls": [tools.call(CALL_ID, "probe_call_one")]});
            let shown_plan = render(prober, vec![user.clone(), plan])?;
            forms.note(&shown_plan, PLAN_NEEDLE, ReasoningFormat::ToolPlanField);
        }
        forms.blocks(prober, user)?;
        // tool_plan only exists next to tool calls.
        if forms.first() == ReasoningFormat::ToolPlanField {
            forms.requires_tools = true;
        }
        Ok(forms)
    }

    fn blocks(&mut self, prober: &Prober, user: Json) -> Result<(), Cancelled> {
        let block = |part: Json| json!({"role": "assistant", "content": [part, {"type": "text", "text": REPLY}]});
        let thinking = block(json!({"type": "thinking", "thinking": BLOCK_NEEDLE}));
        let shown = render(prober, vec![user.clone(), thinking])?;
        self.note_block(&shown, BLOCK_NEEDLE, ReasoningFormat::ThinkingContentBlock);
        let thoughts = block(json!({"type": "thoughts", "text": THOUGHTS_NEEDLE}));
        let shown = render(prober, vec![user, thoughts])?;
        self.note_block(
            &shown,
            THOUGHTS_NEEDLE,
            ReasoningFormat::ThoughtsContentBlock,
        );
        Ok(())
    }

    /// A content block counts only when read as text, not printed as data.
    fn note_block(&mut self, shown: &(Probe, Shown), needle: &str, format: ReasoningFormat) {
        if !shown.1.text().is_some_and(super::content::is_stringified) {
            self.note(shown, needle, format);
        }
    }

    /// Records `format` when `needle` shows in the probe's output.
    fn note(&mut self, (probe, shown): &(Probe, Shown), needle: &str, format: ReasoningFormat) {
        if shown.text().is_some_and(|text| text.contains(needle)) {
            self.found.push((format, probe.describe()));
        }
    }

    fn first(&self) -> ReasoningFormat {
        self.found
            .first()
            .map_or(ReasoningFormat::None, |(f, _)| *f)
    }

    fn forms(&self) -> Vec<ReasoningFormat> {
        self.found.iter().map(|(f, _)| *f).collect()
    }

    fn format(&self) -> Decided<ReasoningFormat> {
        let Some((format, probe)) = self.found.first() else {
            return Decided::new(
                ReasoningFormat::None,
                "user → assistant with reasoning as reasoning_content, thinking, thought, \
                 tool_plan, a thinking block, a thoughts block",
                "no probe's reasoning text appears in the prompt",
            );
        };
        let names: Vec<&str> = self.found.iter().map(|(f, _)| f.minja_name()).collect();
        Decided::new(
            *format,
            probe.clone(),
            format!("reasoning appears when given as: {}", names.join(", ")),
        )
    }
}

/// Renders a probe of `messages`; the text is kept whether or not a needle shows.
fn render(prober: &Prober, messages: Vec<Json>) -> Result<(Probe, Shown), Cancelled> {
    let probe = Probe::of(messages);
    let shown = match prober.render(&probe)? {
        Ok(text) => Shown::Yes(text),
        Err(err) => Shown::Failed(err),
    };
    Ok((probe, shown))
}

fn has_field(shown: &Shown) -> bool {
    shown
        .text()
        .is_some_and(|t| t.contains(CONTENT_FIELD_NEEDLE) || t.contains(THINKING_FIELD_NEEDLE))
}

/// Builds assistant messages with reasoning in the template's own format.
pub(crate) struct Maker<'a> {
    content: &'a ContentCaps,
    tools: &'a ToolCaps,
    format: ReasoningFormat,
    with_tools: bool,
}

impl<'a> Maker<'a> {
    /// A maker for the template whose probes found `content`, `tools` and `reasoning`.
    pub(crate) fn new(
        content: &'a ContentCaps,
        tools: &'a ToolCaps,
        reasoning: &ReasoningCaps,
    ) -> Self {
        Maker {
            content,
            tools,
            format: reasoning.reasoning_format.value,
            with_tools: reasoning.reasoning_requires_tools.value,
        }
    }

    /// An assistant turn carrying `reasoning` and `text` (or a tool call, when the
    /// format needs one).
    pub(crate) fn reply(&self, reasoning: &str, text: &str) -> Json {
        let call = || json!([self.tools.call(CALL_ID, "probe_call_one")]);
        match self.format {
            ReasoningFormat::ThinkingContentBlock => json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": reasoning}, {"type": "text", "text": text}]}),
            ReasoningFormat::ThoughtsContentBlock => json!({"role": "assistant", "content": [
                {"type": "thoughts", "text": reasoning}, {"type": "text", "text": text}]}),
            ReasoningFormat::ToolPlanField => json!({"role": "assistant",
                "content": self.content.empty(), "tool_plan": reasoning, "tool_calls": call()}),
            ReasoningFormat::ThoughtField => {
                json!({"role": "assistant", "content": text, "thought": reasoning})
            }
            _ if self.with_tools => json!({"role": "assistant", "content": self.content.empty(),
                "reasoning_content": reasoning, "tool_calls": call()}),
            _ => json!({"role": "assistant", "content": text, "reasoning_content": reasoning}),
        }
    }

    /// The messages that close a reply with tool calls before the next user turn.
    pub(crate) fn after_reply(&self) -> Vec<Json> {
        if self.format == ReasoningFormat::ToolPlanField || self.with_tools {
            vec![
                json!({"role": "tool", "tool_call_id": CALL_ID, "content": "ok"}),
                json!({"role": "assistant", "content": REPLY}),
            ]
        } else {
            Vec::new()
        }
    }

    /// `[user, reply with reasoning]`.
    fn exchange(&self, reasoning: &str) -> Vec<Json> {
        vec![self.content.user(USER_NEEDLE), self.reply(reasoning, REPLY)]
    }
}

fn keeps_past(prober: &Prober, maker: &Maker) -> Result<Decided<Option<bool>>, Cancelled> {
    if maker.format == ReasoningFormat::None {
        return Ok(Decided::new(
            None,
            "not probed",
            "the template renders no reasoning",
        ));
    }
    let mut messages = maker.exchange(PAST_NEEDLE);
    messages.extend(maker.after_reply());
    messages.push(maker.content.user(SECOND_USER_NEEDLE));
    let probe = Probe::of(messages).with_generation_prompt();
    let shown = prober.shows(&probe, &[PAST_NEEDLE])?;
    let value = match &shown {
        Shown::Failed(_) => None,
        _ => Some(shown.yes()),
    };
    let observed = match shown {
        Shown::No(_) => "the earlier turn's reasoning is stripped once a user turn follows".into(),
        _ => shown.verdict("the earlier turn's reasoning"),
    };
    Ok(Decided::new(value, probe.describe(), observed))
}
