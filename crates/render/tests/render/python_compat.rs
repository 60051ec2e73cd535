//! Python-compatibility rules, one small case each, with expectations recorded from
//! transformers 5.23.0's own `render_jinja_template` by
//! `scripts/python_compat_cases.py --write` (and verifiable with its `--check`).
//!
//! Where transformers raised, chatplate must raise the same exception class with the same
//! message (`python_error`, "Class: message").

use chatplate_render::{CompiledTemplate, ContinueFinal, Conversation, Limits};
use serde_json::{json, Value as Json};

fn conversation(case: &Json) -> Conversation {
    let messages = case
        .get("messages")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_else(|| vec![json!({"role": "user", "content": "hi"})]);
    let continuing = case["continue_final_message"].as_bool().unwrap_or(false);
    Conversation::new(messages)
        .with_tools(case["tools"].as_array().cloned())
        .with_documents(None)
        .with_generation_prompt(case["add_generation_prompt"].as_bool().unwrap_or(false))
        .with_continue_final(if continuing {
            ContinueFinal::content()
        } else {
            ContinueFinal::Off
        })
        .with_variables(case["variables"].as_object().cloned().unwrap_or_default())
        .with_clock(Some("2026-01-15T00:00:00".parse().expect("valid clock")))
}

/// The last line of Python's traceback for this error: `TypeError: ...`.
fn python_style(err: &chatplate_render::RenderError) -> String {
    format!("{}: {}", err.exception.unwrap_or("?"), err.message)
}

#[test]
fn every_python_compat_case_matches_transformers() {
    let text = include_str!("../../../../tests/python_compat/cases.json");
    let cases: Vec<Json> = serde_json::from_str(text).expect("cases.json parses");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap_or("?");
        let template = case["template"].as_str().expect("template");
        let result = CompiledTemplate::compile(template, Limits::default())
            .and_then(|compiled| compiled.render(&conversation(case)));
        let python_error = case["python_error"].as_str().unwrap_or_default();
        match (case.get("expected").and_then(Json::as_str), result) {
            (Some(want), Ok(got)) if want == got => {}
            (None, Err(err)) if python_error == python_style(&err) => {}
            (want, got) => failures.push(format!(
                "{name}\n  transformers: {}\n  chatplate:    {:?}",
                want.map_or_else(
                    || format!("error ({})", case["python_error"]),
                    |w| format!("{w:?}")
                ),
                got.map_err(|err| python_style(&err))
            )),
        }
    }
    eprintln!(
        "python compat: {} of {} cases match",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Numbers beyond a float's range: Python's `json.loads("1e400")` and Jinja2's literal
/// `1e400` are `inf`. Expectations from transformers 5.23.0 with the conversation
/// `json.loads`-ed from this same text (cases.json cannot hold them: Python writes
/// `Infinity`, which is not JSON).
#[test]
fn numbers_beyond_the_float_range_are_infinite() {
    let input: Json = serde_json::from_str(
        r#"{"messages": [{"role": "user", "content": 1e400}], "x": 1e400, "y": -1e400}"#,
    )
    .expect("serde_json reads 1e400 with arbitrary_precision");
    let messages = input["messages"].as_array().cloned().expect("messages");
    let mut variables = input.as_object().cloned().expect("object");
    variables.remove("messages");
    let conversation = Conversation::new(messages).with_variables(variables);
    for (template, python) in [
        ("{{ x }}", "inf"),
        ("{{ y }}", "-inf"),
        ("{{ [x, y] }}", "[inf, -inf]"),
        ("{{ x|tojson }}", "Infinity"),
        ("{{ x > 1 }}", "True"),
        ("{{ x - x }}", "nan"),
        ("{{ messages[0].content }}", "inf"),
        (
            "{{ messages|tojson }}",
            r#"[{"role": "user", "content": Infinity}]"#,
        ),
        ("{{ 1e400 }}", "inf"),
        ("{{ -1e400 }}", "-inf"),
        ("{{ 1e400|tojson }}", "Infinity"),
    ] {
        let rendered = CompiledTemplate::compile(template, Limits::default())
            .and_then(|compiled| compiled.render(&conversation))
            .map_err(|err| python_style(&err));
        assert_eq!(rendered.as_deref(), Ok(python), "{template}");
    }
}
