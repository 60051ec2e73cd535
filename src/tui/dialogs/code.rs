//! What "copy as code" (`X`) writes: the session as the code that gives the same prompt
//! elsewhere. Pure functions of the session and its template:
//!
//! * [`python`]: transformers' `tokenizer.apply_chat_template(...)` with this
//!   conversation and its keyword arguments (the model's tokenizer for a model id, else a
//!   bare tokenizer and the template's text inline);
//! * [`render_command`]: the `chatplate render` command line (the session file when it
//!   is saved as shown, else the session on standard input);
//! * [`curl`]: an OpenAI Chat Completions request body (`chatplate export --openai`'s)
//!   posted with `curl`.
//!
//! Texts go in as JSON (a JSON string is a Python string literal; JSON text sits in a
//! raw triple-quoted string, which valid JSON never closes early), so nothing the
//! conversation holds can break out of the snippet.

use std::path::Path;

use serde_json::{Map, Value as Json};

use chatplate_core::catalog::{self, TemplateSource};
use chatplate_core::request;
use chatplate_core::session::{ContinueSetting, Session, TemplateRef};

/// A value as JSON text (compact or indented).
fn json(value: &impl serde::Serialize, pretty: bool) -> String {
    let text = match pretty {
        true => serde_json::to_string_pretty(value),
        false => serde_json::to_string(value),
    };
    text.unwrap_or_default()
}

/// `text` as a shell word: single-quoted, its own single quotes closed and escaped.
fn shell_word(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A heredoc delimiter that no line of `text` equals.
fn delimiter(text: &str, base: &str) -> String {
    let mut word = base.to_string();
    while text.lines().any(|line| line == word) {
        word.push('_');
    }
    word
}

/// The Python that loads the tokenizer: the model's for a model id, else a bare one
/// (the template is passed inline); the keyword arguments that go with it.
fn python_tokenizer(session: &Session, template: &TemplateSource) -> (String, Map<String, Json>) {
    let conversation = catalog::conversation_for(session, template).unwrap_or_default();
    if let TemplateRef::Model {
        id, revision, name, ..
    } = &session.template
    {
        let revision = revision
            .as_ref()
            .map(|r| format!(", revision={}", json(r, false)))
            .unwrap_or_default();
        let load = format!(
            "from transformers import AutoTokenizer\n\n\
             tokenizer = AutoTokenizer.from_pretrained({}{revision})\n",
            json(id, false)
        );
        // The model's tokenizer has its own special tokens: only the session's overrides.
        let mut kwargs = session.settings().map(|c| c.variables).unwrap_or_default();
        if let Some(name) = name {
            kwargs.insert("chat_template".into(), Json::from(name.as_str()));
        }
        return (load, kwargs);
    }
    let load = "from tokenizers import Tokenizer\n\
                from tokenizers.models import WordLevel\n\
                from transformers import PreTrainedTokenizerFast\n\n\
                # No model: a bare tokenizer carries the template; its special tokens are\n\
                # passed below.\n\
                tokenizer = PreTrainedTokenizerFast(\n    \
                tokenizer_object=Tokenizer(WordLevel({\"<unk>\": 0}, unk_token=\"<unk>\"))\n)\n"
        .to_string();
    let mut kwargs = Map::new();
    kwargs.insert("chat_template".into(), Json::from(template.source.as_str()));
    kwargs.extend(conversation.variables);
    (load, kwargs)
}

/// One `name=value` argument line; a value that is JSON text goes through `json.loads`.
fn argument(name: &str, value: &Json) -> String {
    match value {
        Json::String(_) | Json::Number(_) => format!("    {name}={},\n", json(value, false)),
        Json::Bool(flag) => format!("    {name}={},\n", if *flag { "True" } else { "False" }),
        Json::Null => format!("    {name}=None,\n"),
        _ => format!(
            "    {name}=json.loads(r\"\"\"{}\"\"\"),\n",
            json(value, false)
        ),
    }
}

/// Whether `name` can be a Python keyword argument.
fn identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The session as transformers' `apply_chat_template` call, printing the prompt.
pub fn python(session: &Session, template: &TemplateSource) -> String {
    let (load, kwargs) = python_tokenizer(session, template);
    let mut out = format!("import json\n\n{load}\n");
    if let Some(clock) = &session.clock {
        out.push_str(&format!(
            "# The session fixes the clock for strftime_now at {clock}.\n\
             import datetime\nimport transformers.utils.chat_template_utils as ctu\n\n\n\
             class FixedClock(datetime.datetime):\n    \
             @classmethod\n    def now(cls, tz=None):\n        \
             return datetime.datetime.fromisoformat({})\n\n\n\
             ctu.datetime = FixedClock\n",
            json(clock, false)
        ));
    }
    out.push_str(&format!(
        "messages = json.loads(r\"\"\"{}\"\"\")\n",
        json(&session.messages, true)
    ));
    out.push_str("prompt = tokenizer.apply_chat_template(\n    messages,\n");
    if let Some(tools) = &session.tools {
        out.push_str(&argument("tools", &Json::from(tools.clone())));
    }
    if let Some(documents) = &session.documents {
        out.push_str(&argument("documents", &Json::from(documents.clone())));
    }
    if session.add_generation_prompt {
        out.push_str("    add_generation_prompt=True,\n");
    }
    if session.continue_final_message != ContinueSetting::Flag(false) {
        out.push_str("    continue_final_message=True,\n");
    }
    out.push_str("    tokenize=False,\n");
    let (plain, odd): (Vec<_>, Vec<_>) = kwargs.iter().partition(|(k, _)| identifier(k));
    for (name, value) in plain {
        out.push_str(&argument(name, value));
    }
    if !odd.is_empty() {
        let odd: Map<String, Json> = odd
            .into_iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.push_str(&format!(
            "    **json.loads(r\"\"\"{}\"\"\"),\n",
            json(&odd, false)
        ));
    }
    out.push_str(")\nprint(prompt, end=\"\")\n");
    out
}

/// The `chatplate render` command line: the session file itself when `saved` (it holds
/// what is shown), else the session on standard input, from the folder its relative
/// template path starts at.
pub fn render_command(session: &Session, file: Option<&Path>, saved: bool, dir: &Path) -> String {
    if let (Some(file), true) = (file, saved) {
        return format!(
            "chatplate render {}\n",
            shell_word(&file.display().to_string())
        );
    }
    let text = session.to_json();
    let end = delimiter(&text, "SESSION");
    // Absolute, so the line works from any folder (no disk access: lexical).
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let cd = shell_word(&dir.display().to_string());
    format!(
        "cd {cd} && chatplate render - <<'{end}'\n{}\n{end}\n",
        text.trim_end()
    )
}

/// The session as an OpenAI Chat Completions request body, posted with `curl` to
/// `$OPENAI_BASE_URL` (a local server by default).
pub fn curl(session: &Session, template: &TemplateSource) -> String {
    let exported = request::export(session, template);
    let body = json(&exported.body, true);
    let end = delimiter(&body, "BODY");
    let notes: String = (exported.notes.iter())
        .map(|note| format!("# {note}\n"))
        .collect();
    format!(
        "{notes}curl -sS \"${{OPENAI_BASE_URL:-http://localhost:8080/v1}}/chat/completions\" \\\n  \
         -H 'Content-Type: application/json' \\\n  \
         -H \"Authorization: Bearer ${{OPENAI_API_KEY:-none}}\" \\\n  \
         -d @- <<'{end}'\n{body}\n{end}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_and_delimiters_hold_any_text() {
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(delimiter("a\nSESSION\nb", "SESSION"), "SESSION_");
    }

    #[test]
    fn a_model_session_loads_the_models_tokenizer() {
        let mut session = Session::new(TemplateRef::Model {
            id: "Qwen/Qwen3-0.6B".into(),
            revision: Some("main".into()),
            snapshot: None,
            name: Some("tool_use".into()),
        });
        session.messages = vec![chatplate_core::session::Message::new("user", "hi")];
        session
            .variables
            .insert("enable_thinking".into(), Json::Bool(false));
        let code = python(&session, &catalog::default_template());
        assert!(
            code.contains("AutoTokenizer.from_pretrained(\"Qwen/Qwen3-0.6B\", revision=\"main\")")
        );
        assert!(code.contains("    chat_template=\"tool_use\",\n"), "{code}");
        assert!(code.contains("    enable_thinking=False,\n"), "{code}");
        assert!(!code.contains("WordLevel"), "{code}");
    }

    #[test]
    fn odd_variable_names_go_through_a_dict() {
        assert!(identifier("enable_thinking") && !identifier("my-flag") && !identifier("2x"));
        assert_eq!(argument("flag", &Json::Bool(false)), "    flag=False,\n");
        let list = argument("tools", &serde_json::json!([{"a": "\"\"\""}]));
        assert_eq!(
            list,
            "    tools=json.loads(r\"\"\"[{\"a\":\"\\\"\\\"\\\"\"}]\"\"\"),\n"
        );
    }
}
