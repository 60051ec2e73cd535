//! The MiniJinja 2.x engines: `minijinja@2`, bare MiniJinja 2.14 with minijinja-contrib's
//! pycompat set up as [`super::bare`] sets up 3.1 (what a Rust server on the 2.x line
//! renders), and `mistralrs`, MiniJinja 2.14 with everything mistral.rs adds around it
//! ([`super::mistralrs`]). 2.x differs from 3.x in its defaults: it prints `true` and
//! `none` (3.x: `True`, `None`), sequences and maps as JSON-like text (3.x: Python's
//! repr), `tojson` without spaces, and rounds halves away from zero (3.x: to even).

use chatplate_render::{cut_at_tag, effective_messages, tag_final_message, Conversation};
use minijinja2::{Environment, Error, ErrorKind, Value};
use serde_json::Value as Json;

use super::bare::{value, TemplateValue};
use super::{mistralrs, EngineError};

/// The versions these engines are built from (Cargo.lock).
pub(super) const VERSION: &str = "minijinja 2.14.0, minijinja-contrib 2.14.0 (pycompat)";

/// Fuel for one render, as [`super::bare`]'s.
const FUEL: u64 = 50_000_000;

/// Renders with bare MiniJinja 2.14, set up as [`super::bare`] sets up 3.1.
pub(super) fn render(template: &str, conversation: &Conversation) -> Result<String, EngineError> {
    let mut messages = effective_messages(&conversation.messages);
    let continued = match conversation.continue_final_message.field() {
        Some(field) => Some(tag_final_message(&mut messages, field, template).map_err(failed)?),
        None => None,
    };
    let env = environment(conversation);
    let compiled = env.template_from_str(template).map_err(failed)?;
    let mut context = conversation.variables.clone();
    context.insert("messages".into(), messages.into());
    context.insert("tools".into(), conversation.tools.clone().into());
    context.insert("documents".into(), conversation.documents.clone().into());
    let generation = conversation.add_generation_prompt.into();
    context.insert("add_generation_prompt".into(), generation);
    let rendered = compiled
        .render(value::<Value>(&Json::Object(context)))
        .map_err(failed)?;
    match continued {
        Some(final_text) => cut_at_tag(rendered, &final_text).map_err(failed),
        None => Ok(rendered),
    }
}

/// MiniJinja 2.14 as mistral.rs and [`super::bare`] set it up: `trim_blocks`,
/// `lstrip_blocks`, pycompat, `raise_exception` and `strftime_now` on the session's clock.
pub(super) fn environment(conversation: &Conversation) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_unknown_method_callback(minijinja_contrib2::pycompat::unknown_method_callback);
    env.set_fuel(Some(FUEL));
    env.add_function("raise_exception", |message: String| -> Result<(), Error> {
        Err(Error::new(ErrorKind::InvalidOperation, message))
    });
    let clock = conversation.clock;
    env.add_function(
        "strftime_now",
        move |format: String| -> Result<String, Error> { strftime(clock, &format) },
    );
    env
}

/// `format` of the session's clock (else now), as `strftime_now` prints it.
pub(super) fn strftime(
    clock: Option<jiff::civil::DateTime>,
    format: &str,
) -> Result<String, Error> {
    let now = clock.unwrap_or_else(|| jiff::Zoned::now().datetime());
    jiff::fmt::strtime::format(format, now)
        .map_err(|err| Error::new(ErrorKind::InvalidOperation, err.to_string()))
}

/// Renders as mistral.rs does (see [`mistralrs`]).
pub(super) fn render_mistralrs(
    template: &str,
    conversation: &Conversation,
) -> Result<String, EngineError> {
    let template = mistralrs::rewrite(template);
    let mut env = environment(conversation);
    env.add_filter("tojson", mistralrs::tojson);
    let compiled = env.template_from_str(&template).map_err(failed)?;
    let context = mistralrs::context(conversation);
    compiled
        .render(value::<Value>(&Json::Object(context)))
        .map_err(failed)
}

impl TemplateValue for Value {
    fn map<'a>(pairs: impl Iterator<Item = (&'a str, Self)>) -> Self {
        pairs.collect()
    }
}

fn failed(err: impl std::fmt::Display) -> EngineError {
    EngineError::Render(err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn conversation() -> Conversation {
        Conversation::new(vec![json!({"role": "user", "content": "Hi"})])
    }

    // Each expected text is minijinja-py 2.14.0's (`Environment(trim_blocks=True,
    // lstrip_blocks=True).render_str(...)`), run while writing these tests; 3.1's
    // differs for each (see bare.rs).
    #[test]
    fn prints_as_minijinja_2_does() {
        let source = "{{ true }} {{ none }} {{ [1, 'a'] }} {{ {'a': 1} | tojson }} {{ 2.5 | round }} {{ 1.25 | round(1) }}";
        let out = render(source, &conversation()).unwrap();
        assert_eq!(out, r#"true none [1, "a"] {"a":1} 3.0 1.3"#);
    }

    #[test]
    fn python_methods_and_numbers_from_the_data() {
        let conversation = conversation().with_variables(
            serde_json::from_str(r#"{"n": 2, "big": 12345678901234567890}"#).unwrap(),
        );
        let out = render(
            "{{ messages[0].content.upper() }} {{ n + 1 }} {{ big }}",
            &conversation,
        )
        .unwrap();
        assert_eq!(out, "HI 3 12345678901234567890");
    }
}
