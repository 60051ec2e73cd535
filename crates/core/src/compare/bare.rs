//! The `minijinja` engine: MiniJinja with minijinja-contrib's pycompat and none of
//! chatplate's Python layer, set up as mistral.rs sets up its chat templates:
//! `trim_blocks`, `lstrip_blocks`, pycompat's unknown-method callback for `str`/`dict`
//! methods, a `raise_exception` global, `strftime_now`, and MiniJinja's own `tojson`
//! (text-generation-inference is the same but leaves `trim_blocks` and `lstrip_blocks`
//! off; docs/compare.md compares the two).

use chatplate_render::{cut_at_tag, effective_messages, tag_final_message, Conversation};
use minijinja::syntax::SyntaxConfig;
use minijinja::{Environment, Error, ErrorKind, Value};
use serde_json::Value as Json;

use super::EngineError;

/// The versions this engine is built from (Cargo.lock).
pub(super) const VERSION: &str = "minijinja 3.1.0, minijinja-contrib 3.0.5 (pycompat)";

/// Fuel for one render: generous, but a runaway template stops.
const FUEL: u64 = 50_000_000;

/// Renders as a Rust server embedding MiniJinja would.
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

fn environment(conversation: &Conversation) -> Environment<'static> {
    let mut env = Environment::new();
    let syntax = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build();
    env.set_syntax(syntax.expect("default delimiters are valid"));
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.set_fuel(Some(FUEL));
    env.add_function("raise_exception", |message: String| -> Result<(), Error> {
        Err(Error::new(ErrorKind::InvalidOperation, message))
    });
    let clock = conversation.clock;
    env.add_function(
        "strftime_now",
        move |format: String| -> Result<String, Error> {
            let now = clock.unwrap_or_else(|| jiff::Zoned::now().datetime());
            jiff::fmt::strtime::format(format.as_str(), now)
                .map_err(|err| Error::new(ErrorKind::InvalidOperation, err.to_string()))
        },
    );
    env
}

/// A JSON value as a template value, the way a server's serde-deserialised request
/// reaches MiniJinja. Done by hand because chatplate keeps numbers as written
/// (serde_json's `arbitrary_precision`), which MiniJinja's serde bridge would see as maps.
/// Generic over the value type, so MiniJinja 3.1 here and 2.x ([`super::bare2`]) build
/// theirs the same way.
pub(super) fn value<V: TemplateValue>(json: &Json) -> V {
    match json {
        Json::Null => V::from(()),
        Json::Bool(b) => V::from(*b),
        Json::Number(n) => number(n),
        Json::String(s) => V::from(s.as_str()),
        Json::Array(items) => V::from(items.iter().map(value::<V>).collect::<Vec<_>>()),
        Json::Object(fields) => V::map(
            fields
                .iter()
                .map(|(key, item)| (key.as_str(), value::<V>(item))),
        ),
    }
}

/// A MiniJinja version's value type, as [`value`] builds it.
pub(super) trait TemplateValue:
    Sized
    + From<()>
    + From<bool>
    + From<i64>
    + From<u64>
    + From<i128>
    + From<f64>
    + for<'a> From<&'a str>
    + From<Vec<Self>>
{
    /// A map of `pairs`, in their order. (Collecting pairs is not it everywhere: 3.1
    /// collects them as a list of two-item lists.)
    fn map<'a>(pairs: impl Iterator<Item = (&'a str, Self)>) -> Self;
}

impl TemplateValue for Value {
    fn map<'a>(pairs: impl Iterator<Item = (&'a str, Self)>) -> Self {
        Value::from_pairs(pairs)
    }
}

fn number<V>(n: &serde_json::Number) -> V
where
    V: From<i64> + From<u64> + From<i128> + From<f64>,
{
    if let Some(i) = n.as_i64() {
        return V::from(i);
    }
    if let Some(u) = n.as_u64() {
        return V::from(u);
    }
    match n.to_string().parse::<i128>() {
        Ok(big) => V::from(big),
        Err(_) => V::from(n.as_f64().unwrap_or(f64::NAN)),
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

    #[test]
    fn renders_python_methods_through_pycompat() {
        let source = "{% for m in messages %}{{ m.content.upper() }}{% endfor %}";
        assert_eq!(render(source, &conversation()).unwrap(), "HI");
    }

    #[test]
    fn raise_exception_fails_the_render() {
        let err = render("{{ raise_exception('no') }}", &conversation()).unwrap_err();
        assert!(err.to_string().contains("no"), "{err}");
    }

    #[test]
    fn prints_like_python_where_minijinja_does() {
        let out = render("{{ true }} {{ 1/3 }} {{ {'a': 1} }}", &conversation()).unwrap();
        assert_eq!(out, "True 0.3333333333333333 {'a': 1}");
    }

    // minijinja-py 3.1.0 prints the same (`Environment(trim_blocks=True,
    // lstrip_blocks=True).render_str(...)`, run while writing this test); 2.14 prints
    // each of them otherwise (see bare2.rs).
    #[test]
    fn prints_as_minijinja_3_does() {
        let source = "{{ true }} {{ none }} {{ [1, 'a'] }} {{ {'a': 1} | tojson }} {{ 2.5 | round }} {{ 1.25 | round(1) }}";
        let out = render(source, &conversation()).unwrap();
        assert_eq!(out, r#"True None [1, 'a'] {"a": 1} 2.0 1.2"#);
    }

    #[test]
    fn numbers_from_the_data_stay_numbers() {
        let conversation = conversation().with_variables(
            serde_json::from_str(r#"{"n": 2, "x": 1.5, "big": 12345678901234567890}"#).unwrap(),
        );
        let out = render("{{ n + 1 }} {{ x * 2 }} {{ big }}", &conversation).unwrap();
        assert_eq!(out, "3 3.0 12345678901234567890");
    }
}
