//! What each turn costs a server with a prefix cache (llama.cpp's `--cache-reuse`,
//! vLLM's prefix caching): how much of the next request it can take from what it
//! already holds, and how much it must process again.
//!
//! After turn `k` the server holds the conversation through turn `k`'s reply as the
//! model wrote it: the conversation up to that reply rendered with the reply last and no
//! generation prompt (`cached`). When the next user message arrives it is sent the
//! conversation through that message with the generation prompt (`next`). It keeps the
//! longest common prefix of the two (in tokens with a tokenizer, else in bytes) and
//! processes the rest again. A template that drops earlier turns' reasoning (Qwen3)
//! makes `next` part from `cached` where the reply's reasoning was, so the reply is
//! processed again; one that changes its preamble per turn makes the whole
//! conversation be processed again.
//!
//! Bounded: each turn costs two renders of a prefix of the conversation. Turns whose
//! messages and settings did not change since a previous answer are taken from it
//! (an edit to the last message recomputes the last turn only), and a run stops after
//! its time budget with the turns counted so far (`complete == false`): the caller asks
//! again with that answer as the previous one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use chatplate_render::{CancelToken, CompiledTemplate, ContinueFinal, Conversation};

use super::text::common_prefix_len;
use super::Cancelled;

/// What a cost is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostUnit {
    /// Model tokens (the session's tokenizer).
    Tokens,
    /// Bytes of the prompt (no tokenizer at hand).
    Bytes,
}

impl CostUnit {
    /// Its name in reports: `tokens` or `bytes`.
    pub fn name(self) -> &'static str {
        match self {
            CostUnit::Tokens => "tokens",
            CostUnit::Bytes => "bytes",
        }
    }

    /// The short suffix of a count in a narrow column: `t` or `B`.
    pub fn suffix(self) -> &'static str {
        match self {
            CostUnit::Tokens => "t",
            CostUnit::Bytes => "B",
        }
    }
}

/// One request's cost against what the cache holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// Processed again: the request past the common prefix.
    pub reprocessed: usize,
    /// The whole request, when it was counted (see [`TurnCounter::cost`]).
    pub prompt: Option<usize>,
}

/// Counts a request's cost in one [`CostUnit`].
pub trait TurnCounter: Send + Sync {
    /// The unit it counts in.
    fn unit(&self) -> CostUnit;

    /// The cost of `next` against `cached`; the whole of `next` is counted too when
    /// `whole` (a tokenizer then tokenizes all of it, not only what follows the common
    /// prefix).
    fn cost(&self, cached: &str, next: &str, whole: bool) -> Result<Counted, String>;
}

/// Counts bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct ByteCounter;

impl TurnCounter for ByteCounter {
    fn unit(&self) -> CostUnit {
        CostUnit::Bytes
    }

    fn cost(&self, cached: &str, next: &str, _whole: bool) -> Result<Counted, String> {
        Ok(Counted {
            reprocessed: next.len() - common_prefix_len(cached, next),
            prompt: Some(next.len()),
        })
    }
}

/// Counts tokens of the model's tokenizer.
///
/// Only what follows the last safe cut before the common prefix's end is tokenized:
/// the tokenizer splits a text at its added tokens before anything else, so the tokens
/// before such a token are the same in both texts (see `tokens::pieces`).
#[cfg(feature = "tokens")]
#[derive(Debug, Clone)]
pub struct TokenCounter(pub Arc<crate::tokens::ModelTokenizer>);

#[cfg(feature = "tokens")]
impl TurnCounter for TokenCounter {
    fn unit(&self) -> CostUnit {
        CostUnit::Tokens
    }

    fn cost(&self, cached: &str, next: &str, whole: bool) -> Result<Counted, String> {
        let tokenizer = &self.0;
        let common = common_prefix_len(cached, next);
        let cut = tokenizer.cut_within(next, common);
        let ids = |text: &str| -> Result<Vec<u32>, String> {
            Ok(tokenizer.tokenize(text).map_err(|e| e.to_string())?.ids())
        };
        let (before, after) = (ids(&cached[cut..])?, ids(&next[cut..])?);
        let kept = before
            .iter()
            .zip(&after)
            .take_while(|(a, b)| a == b)
            .count();
        let prompt = if whole { Some(ids(next)?.len()) } else { None };
        Ok(Counted {
            reprocessed: after.len() - kept,
            prompt,
        })
    }
}

/// One turn: the user message whose arrival sent the request, and its cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnCost {
    /// The index of the user message that arrived.
    pub user: usize,
    /// The cost, or why a render failed (the template may refuse a conversation that
    /// ends with the reply).
    pub cost: Result<Counted, String>,
}

/// Every turn's cost, in conversation order.
#[derive(Debug, Clone)]
pub struct TurnCosts {
    /// What the costs are counted in.
    pub unit: CostUnit,
    /// The turns counted, in order.
    pub turns: Vec<TurnCost>,
    /// Every turn was counted (false: the budget ran out; ask again with this answer).
    pub complete: bool,
    /// What the answer is of, to reuse its turns.
    key: Key,
}

/// What turns depend on: the template, the settings and each message.
#[derive(Debug, Clone)]
struct Key {
    template: Arc<str>,
    settings: Arc<Conversation>,
    messages: Vec<Arc<Json>>,
    whole: bool,
}

impl TurnCosts {
    /// The re-processed amounts summed over the turns counted.
    pub fn total(&self) -> usize {
        self.turns
            .iter()
            .filter_map(|t| t.cost.as_ref().ok())
            .map(|c| c.reprocessed)
            .sum()
    }

    /// The turn sent when message `index` arrived, if it is one.
    pub fn at(&self, index: usize) -> Option<&TurnCost> {
        let at = self.turns.binary_search_by_key(&index, |t| t.user).ok()?;
        self.turns.get(at)
    }

    /// The turns whose messages and settings `key` shares.
    fn reusable(&self, key: &Key, unit: CostUnit) -> &[TurnCost] {
        let old = &self.key;
        let same = self.unit == unit
            && old.whole == key.whole
            && old.template == key.template
            && old.settings == key.settings;
        if !same {
            return &[];
        }
        let unchanged = (old.messages.iter().zip(&key.messages))
            .take_while(|(a, b)| Arc::ptr_eq(a, b) || a == b)
            .count();
        let keep = self.turns.partition_point(|t| t.user < unchanged);
        &self.turns[..keep]
    }
}

/// What one run counts.
pub struct TurnCostRun<'a> {
    /// The template, compiled.
    pub template: &'a CompiledTemplate,
    /// Its source (what a previous answer is matched on).
    pub source: Arc<str>,
    /// Tools, documents, variables and clock (its messages are ignored).
    pub settings: Arc<Conversation>,
    /// The messages.
    pub messages: Vec<Arc<Json>>,
    /// Counts each request.
    pub counter: &'a dyn TurnCounter,
    /// Count each request whole too (`Counted::prompt`).
    pub whole: bool,
    /// Stop after this long with the turns counted so far (`None`: count them all).
    pub budget: Option<Duration>,
}

/// The user messages that start a new request after a reply: each one preceded (since
/// the user message before it) by an assistant message.
pub fn turn_starts(messages: &[Arc<Json>]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut replied = false;
    for (index, message) in messages.iter().enumerate() {
        match message.get("role").and_then(Json::as_str) {
            Some("user") if replied => {
                starts.push(index);
                replied = false;
            }
            Some("user") => replied = false,
            Some("assistant") => replied = true,
            _ => {}
        }
    }
    starts
}

/// Counts every turn of the run, reusing what `previous` counted on the same messages.
pub fn turn_costs(
    run: &TurnCostRun,
    previous: Option<&TurnCosts>,
    cancel: &CancelToken,
) -> Result<TurnCosts, Cancelled> {
    let started = Instant::now();
    let key = Key {
        template: Arc::clone(&run.source),
        settings: Arc::clone(&run.settings),
        messages: run.messages.clone(),
        whole: run.whole,
    };
    let unit = run.counter.unit();
    let mut turns = previous.map_or_else(Vec::new, |p| p.reusable(&key, unit).to_vec());
    let mut complete = true;
    for user in turn_starts(&run.messages) {
        if turns.last().is_some_and(|t| t.user >= user) {
            continue;
        }
        if run.budget.is_some_and(|b| started.elapsed() > b) {
            complete = false;
            break;
        }
        let cost = one_turn(run, user, cancel)?;
        turns.push(TurnCost { user, cost });
    }
    Ok(TurnCosts {
        unit,
        turns,
        complete,
        key,
    })
}

/// The cost of the request sent when message `user` arrived.
fn one_turn(
    run: &TurnCostRun,
    user: usize,
    cancel: &CancelToken,
) -> Result<Result<Counted, String>, Cancelled> {
    let render = |count: usize, generation_prompt: bool| {
        let mut conversation = Conversation::clone(&run.settings);
        conversation.messages = run.messages[..count]
            .iter()
            .map(|m| Json::clone(m))
            .collect();
        conversation.add_generation_prompt = generation_prompt;
        conversation.continue_final_message = ContinueFinal::Off;
        let rendered = run.template.render_cancellable(conversation, cancel);
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        Ok(rendered.map_err(|e| e.message))
    };
    let cached = render(user, false)?;
    let next = render(user + 1, true)?;
    Ok(match (cached, next) {
        (Ok(cached), Ok(next)) => run.counter.cost(&cached, &next, run.whole),
        (Err(err), _) => Err(format!("the conversation before it does not render: {err}")),
        (_, Err(err)) => Err(format!("the request does not render: {err}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatplate_render::Limits;
    use serde_json::json;

    fn messages(list: &[(&str, &str)]) -> Vec<Arc<Json>> {
        list.iter()
            .map(|(role, content)| Arc::new(json!({"role": role, "content": content})))
            .collect()
    }

    fn run_on(template: &CompiledTemplate, messages: Vec<Arc<Json>>) -> TurnCostRun<'_> {
        TurnCostRun {
            template,
            source: "t".into(),
            settings: Arc::new(Conversation::default()),
            messages,
            counter: &ByteCounter,
            whole: true,
            budget: None,
        }
    }

    #[test]
    fn turns_start_at_user_messages_after_a_reply() {
        let list = messages(&[
            ("system", "s"),
            ("user", "a"),
            ("user", "b"),
            ("assistant", "c"),
            ("tool", "d"),
            ("user", "e"),
            ("assistant", "f"),
        ]);
        assert_eq!(turn_starts(&list), vec![5]);
    }

    #[test]
    fn a_template_that_drops_past_reasoning_reprocesses_the_reply() {
        // The reply shows its reasoning while it is last, and loses it once a user
        // message follows (as Qwen3 does).
        let source = "{% for m in messages %}<{{ m.role }}>\
            {% if m.role == 'assistant' and loop.last %}[{{ m.reasoning_content }}]{% endif %}\
            {{ m.content }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}";
        let template = CompiledTemplate::compile(source, Limits::default()).unwrap();
        let mut list = messages(&[("user", "q1")]);
        list.push(Arc::new(
            json!({"role": "assistant", "content": "a1", "reasoning_content": "think"}),
        ));
        list.extend(messages(&[("user", "q2")]));
        let costs = turn_costs(&run_on(&template, list), None, &CancelToken::new()).unwrap();
        // cached: <user>q1<assistant>[think]a1 ; next: <user>q1<assistant>a1<user>q2<assistant>
        let next = "<user>q1<assistant>a1<user>q2<assistant>";
        let kept = "<user>q1<assistant>".len();
        assert_eq!(costs.turns.len(), 1);
        let cost = costs.turns[0].cost.clone().unwrap();
        assert_eq!(cost.reprocessed, next.len() - kept);
        assert_eq!(cost.prompt, Some(next.len()));
        assert_eq!(costs.total(), next.len() - kept);
        assert!(costs.complete);
    }

    #[test]
    fn unchanged_turns_are_reused_and_an_edit_recounts_from_there() {
        let template = CompiledTemplate::compile(
            "{% for m in messages %}{{ m.content }};{% endfor %}",
            Limits::default(),
        )
        .unwrap();
        let list = messages(&[
            ("user", "a"),
            ("assistant", "b"),
            ("user", "c"),
            ("assistant", "d"),
            ("user", "e"),
        ]);
        let first =
            turn_costs(&run_on(&template, list.clone()), None, &CancelToken::new()).unwrap();
        assert_eq!(
            first.turns.iter().map(|t| t.user).collect::<Vec<_>>(),
            [2, 4]
        );
        let mut edited = list.clone();
        edited[3] = Arc::new(json!({"role": "assistant", "content": "D"}));
        let key = Key {
            template: "t".into(),
            settings: Arc::new(Conversation::default()),
            messages: edited,
            whole: true,
        };
        // Turn 2 depends on messages 0..=2 only: kept; turn 4 is counted again.
        assert_eq!(first.reusable(&key, CostUnit::Bytes).len(), 1);
        assert!(first.reusable(&key, CostUnit::Tokens).is_empty());
    }

    #[test]
    fn a_spent_budget_returns_the_turns_counted_so_far() {
        let template = CompiledTemplate::compile(
            "{% for m in messages %}{{ m.content }}{% endfor %}",
            Limits::default(),
        )
        .unwrap();
        let list = messages(&[("user", "a"), ("assistant", "b"), ("user", "c")]);
        let mut run = run_on(&template, list);
        run.budget = Some(Duration::ZERO);
        std::thread::sleep(Duration::from_millis(1));
        let costs = turn_costs(&run, None, &CancelToken::new()).unwrap();
        assert!(!costs.complete);
        assert!(costs.turns.is_empty());
        // Asked again without a budget, it finishes.
        run.budget = None;
        let costs = turn_costs(&run, Some(&costs), &CancelToken::new()).unwrap();
        assert!(costs.complete);
        assert_eq!(costs.turns.len(), 1);
    }
}
