//! The rules: one id each, a default severity, a one-line summary and the general fix.
//! The command line's `--allow`/`--deny`, the SARIF rule list and the table in
//! docs/lint.md all read this one table.

use std::fmt;
use std::str::FromStr;

use super::Severity;

/// A lint rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The template raises or hits a bound on a conversation it claims to support.
    Crash,
    /// The template prints the BOS token and the tokenizer adds one too.
    DoubleBos,
    /// Tool-call arguments given as a JSON string crash, are encoded twice, or render
    /// differently from the same arguments as an object.
    ToolArgsString,
    /// A system message's text is missing from the prompt and nothing raised.
    SystemDropped,
    /// The next turn drops an earlier turn's reasoning, so the cached prompt is lost.
    ReasoningDropped,
    /// The next turn changes earlier bytes of the prompt for another reason.
    PrefixUnstable,
    /// A turn or block marker opened without its close, or closed without an open.
    MarkerBalance,
    /// The generation prompt is not how the template starts the assistant turn.
    GenerationPrompt,
    /// The model's `response_template` does not parse the template's own assistant turn
    /// back into the message.
    RoundTrip,
    /// `{% generation %}` missing, or an assistant turn outside it.
    ZeroMask,
    /// The training mask covers text the generation prompt supplies at inference.
    MaskUntrainedPrefix,
    /// User or tool text becomes special tokens in the prompt.
    Injection,
    /// Constructs other engines lack or render differently.
    Portability,
    /// Access to Python internals (the pattern of server-side template injection).
    SandboxEscape,
    /// The prompt depends on the date.
    Clock,
    /// A GGUF's embedded template differs from its model's current one.
    GgufDrift,
}

impl Rule {
    /// Every rule, in the order reports list them.
    pub const ALL: [Rule; 16] = [
        Rule::Crash,
        Rule::DoubleBos,
        Rule::ToolArgsString,
        Rule::SystemDropped,
        Rule::ReasoningDropped,
        Rule::PrefixUnstable,
        Rule::MarkerBalance,
        Rule::GenerationPrompt,
        Rule::RoundTrip,
        Rule::ZeroMask,
        Rule::MaskUntrainedPrefix,
        Rule::Injection,
        Rule::Portability,
        Rule::SandboxEscape,
        Rule::Clock,
        Rule::GgufDrift,
    ];

    /// The id users write (`--allow double-bos`) and reports print.
    pub fn id(self) -> &'static str {
        self.facts().0
    }

    /// The severity of its findings unless `--deny` raises it.
    pub fn default_severity(self) -> Severity {
        self.facts().1
    }

    /// What the rule checks, in one sentence.
    pub fn summary(self) -> &'static str {
        self.facts().2
    }

    /// The rule by id.
    pub fn parse(id: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|rule| rule.id() == id)
    }

    fn facts(self) -> (&'static str, Severity, &'static str) {
        use Severity::{Error, Info, Warning};
        match self {
            Rule::Crash => ("crash", Error, "The template raises or hits a bound on a conversation it claims to support."),
            Rule::DoubleBos => ("double-bos", Warning, "The template prints the BOS token and the tokenizer config or GGUF says the tokenizer adds one too."),
            Rule::ToolArgsString => ("tool-args-string", Warning, "Tool-call arguments given as a JSON string crash, are JSON-encoded a second time, or render differently from the same arguments as an object."),
            Rule::SystemDropped => ("system-dropped", Error, "A system message's text does not appear in the prompt and nothing raised."),
            Rule::ReasoningDropped => ("reasoning-dropped", Warning, "Appending the next turn drops an earlier turn's reasoning, so the earlier prompt is not a prefix of the next request and a server's KV cache is lost every turn."),
            Rule::PrefixUnstable => ("prefix-unstable", Warning, "Appending the next turn changes earlier bytes of the prompt, so a server's KV cache is lost every turn."),
            Rule::MarkerBalance => ("marker-balance", Error, "A marker that opens a turn or block has no matching close in the render (or a close comes without an open)."),
            Rule::GenerationPrompt => ("generation-prompt", Warning, "The generation prompt is not a prefix of how the template renders the assistant turn it asks for."),
            Rule::RoundTrip => ("round-trip", Error, "With the model's response_template, parsing the template's own rendering of an assistant turn does not give the message back."),
            Rule::ZeroMask => ("zero-mask", Info, "No {% generation %} block marks the assistant's output (transformers' assistant mask is all zero), or an assistant turn lies outside it."),
            Rule::MaskUntrainedPrefix => ("mask-untrained-prefix", Warning, "The training mask covers text the generation prompt supplies at inference (an empty <think></think>, the turn header)."),
            Rule::Injection => ("injection", Warning, "User or tool text becomes special tokens in the prompt (needs the model's tokenizer)."),
            Rule::Portability => ("portability", Warning, "Constructs that fail or render differently in bare MiniJinja, @huggingface/jinja or llama.cpp's engine."),
            Rule::SandboxEscape => ("sandbox-escape", Error, "Access to Python internals (dunder attributes, mro, globals' internals): the pattern of server-side template injection; found without rendering."),
            Rule::Clock => ("clock", Info, "The prompt depends on the date (strftime_now): fixtures must pin the clock."),
            Rule::GgufDrift => ("gguf-drift", Warning, "A GGUF's embedded template differs from the model folder's or the Hugging Face cache's current one."),
        }
    }

    /// The general fix, when a finding has no more specific one.
    pub fn fix(self) -> &'static str {
        match self {
            Rule::Crash => "make the template accept the conversation (guard the failing expression), or raise a clear error only for inputs it really cannot render",
            Rule::DoubleBos => "print bos_token in the template or let the tokenizer add it, not both: drop {{ bos_token }} or set add_bos_token to false",
            Rule::ToolArgsString => "accept both forms: {% if arguments is string %}{{ arguments }}{% else %}{{ arguments | tojson }}{% endif %}",
            Rule::SystemDropped => "print the system message's content (or raise an error saying the role is not supported)",
            Rule::ReasoningDropped => "keep earlier turns' reasoning in the history (as the model saw it while generating), or accept one full prefill per turn",
            Rule::PrefixUnstable => "render each turn the same whatever follows it (no loop.last or last-user special cases on earlier turns)",
            Rule::MarkerBalance => "close every turn and block the template opens",
            Rule::GenerationPrompt => "make the generation prompt exactly the text the template writes before an assistant message's content",
            Rule::RoundTrip => "make the response_template's anchors and fields match what the template writes for an assistant turn",
            Rule::ZeroMask => "wrap each assistant turn's output and its end-of-turn marker in {% generation %}...{% endgeneration %} (only needed for assistant-only training)",
            Rule::MaskUntrainedPrefix => "move what the generation prompt supplies (the turn header, an empty <think></think>) outside {% generation %}",
            Rule::Injection => "set \"split_special_tokens\": true in tokenizer_config.json, or strip the special tokens from user and tool text before rendering",
            Rule::Portability => "use constructs every engine implements the same way, or test the template on the engines that serve it",
            Rule::SandboxEscape => "remove the access to Python internals: no chat template needs it; treat the file as hostile",
            Rule::Clock => "pin the clock in fixtures (\"clock\" in the session, --clock) so the expected prompt does not change every day",
            Rule::GgufDrift => "convert the GGUF again from the current model, or set its template with llama.cpp's gguf_new_metadata.py --chat-template",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Rule {
    type Err = String;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        Rule::parse(id).ok_or_else(|| {
            let known: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
            format!("no rule {id:?} (rules: {})", known.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_back_and_are_unique() {
        for rule in Rule::ALL {
            assert_eq!(Rule::parse(rule.id()), Some(rule));
            assert!(!rule.summary().is_empty() && !rule.fix().is_empty());
        }
        let mut ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Rule::ALL.len());
        assert!("nope".parse::<Rule>().unwrap_err().contains("crash"));
    }
}
