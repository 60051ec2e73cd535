//! Tool probes: definitions, assistant tool calls (string and object arguments, parallel
//! calls, ids) and tool responses.

use serde_json::{json, Value as Json};

use super::capabilities::{Decided, Entry, RoleHandling, RoleSupport};
use super::content::{ContentCaps, USER_NEEDLE};
use super::probe::{Probe, Prober, Shown};
use super::roles::handling;
use super::Cancelled;

/// Name of the probe tool definition.
pub(crate) const TOOL_NEEDLE: &str = "probe_tool_fn";
const ARGUMENT_KEY: &str = "argument_needle";
const CALL_ONE: &str = "probe_call_one";
const CALL_TWO: &str = "probe_call_two";
/// The `id` of the probe tool call (9 alphanumerics, as Mistral templates demand).
pub(crate) const CALL_ID: &str = "CallIdA01";
const SECOND_CALL_ID: &str = "CallIdA02";
/// The `tool_call_id` of the probe tool response: different from the call's `id`, so
/// the two can be told apart.
pub(crate) const RESPONSE_ID: &str = "CallIdB02";
const RESULT_NEEDLE: &str = "ToolResultNeedle9021";

/// What the tool probes found.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCaps {
    /// minja's `supports_tools`: a tool definition's name appears.
    pub supports_tools: Decided<bool>,
    /// minja's `supports_tool_calls`: a call's arguments appear as arguments (string or
    /// object form).
    pub supports_tool_calls: Decided<bool>,
    /// minja's `requires_object_arguments`: only object arguments render as arguments.
    pub requires_object_arguments: Decided<bool>,
    /// Arguments given as a JSON string render as arguments (not double-encoded).
    pub accepts_string_arguments: Decided<bool>,
    /// minja's `supports_parallel_tool_calls`: two calls in one message both appear.
    pub supports_parallel_tool_calls: Decided<bool>,
    /// minja's `supports_tool_responses`: a tool message's content appears.
    pub supports_tool_responses: Decided<bool>,
    /// minja's `supports_tool_call_id`: the tool message's `tool_call_id` appears.
    pub supports_tool_call_id: Decided<bool>,
    /// The assistant tool call's own `id` appears.
    pub renders_tool_call_ids: Decided<bool>,
    /// The `tool` role's handling.
    pub tool_role: RoleSupport,
}

impl ToolCaps {
    /// The report lines minja has no name for.
    pub fn entries(&self) -> Vec<Entry> {
        vec![
            Entry::flag("accepts_string_arguments", &self.accepts_string_arguments),
            Entry::flag("renders_tool_call_ids", &self.renders_tool_call_ids),
            Entry::named(
                "roles.tool",
                &self.tool_role.handling,
                self.tool_role.handling.value.name(),
            ),
        ]
    }

    /// A tool call in the argument form this template renders.
    pub(crate) fn call(&self, id: &str, name: &str) -> Json {
        let arguments = json!({ ARGUMENT_KEY: "ArgValue" });
        if self.requires_object_arguments.value {
            tool_call(id, name, arguments)
        } else {
            tool_call(id, name, Json::from(arguments.to_string()))
        }
    }
}

/// `{"id", "type": "function", "function": {"name", "arguments"}}`.
pub(crate) fn tool_call(id: &str, name: &str, arguments: Json) -> Json {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// An assistant message that only carries `calls`.
pub(crate) fn call_message(content: &ContentCaps, calls: Vec<Json>) -> Json {
    json!({"role": "assistant", "content": content.empty(), "tool_calls": calls})
}

/// The probe tool definition.
pub(crate) fn tool_definition() -> Json {
    json!({"type": "function", "function": {
        "name": TOOL_NEEDLE, "description": "A probe tool.",
        "parameters": {"type": "object",
            "properties": {"arg": {"type": "string", "description": "An argument."}},
            "required": ["arg"]}}})
}

/// Runs the tool probes.
pub(crate) fn detect(prober: &Prober, content: &ContentCaps) -> Result<ToolCaps, Cancelled> {
    let user = content.user(USER_NEEDLE);
    let defined = Probe::of(vec![user.clone()]).with_tools(vec![tool_definition()]);
    let defined_shown = prober.shows(&defined, &[TOOL_NEEDLE])?;
    let supports_tools = Decided::new(
        defined_shown.yes(),
        defined.describe(),
        defined_shown.verdict("the tool's name"),
    );
    let arguments = Arguments::probe(prober, content)?;
    let mut caps = ToolCaps {
        supports_tools,
        supports_tool_calls: arguments.supports(),
        requires_object_arguments: arguments.requires_object(),
        accepts_string_arguments: arguments.accepts_string(),
        renders_tool_call_ids: arguments.renders_ids(),
        supports_parallel_tool_calls: Decided::new(false, "", ""),
        supports_tool_responses: Decided::new(false, "", ""),
        supports_tool_call_id: Decided::new(false, "", ""),
        tool_role: RoleSupport {
            role: "tool".into(),
            handling: Decided::new(RoleHandling::Dropped, "", ""),
        },
    };
    caps.supports_parallel_tool_calls = parallel(prober, content, &caps)?;
    responses(prober, content, &mut caps)?;
    Ok(caps)
}

/// The two single-call probes: arguments as a JSON string and as an object.
struct Arguments {
    as_string: (Probe, Shown),
    as_object: (Probe, Shown),
}

impl Arguments {
    fn probe(prober: &Prober, content: &ContentCaps) -> Result<Self, Cancelled> {
        let object = json!({ ARGUMENT_KEY: "ArgValue" });
        let make = |arguments: Json| {
            Probe::of(vec![
                content.user(USER_NEEDLE),
                call_message(content, vec![tool_call(CALL_ID, CALL_ONE, arguments)]),
            ])
        };
        let string_probe = make(Json::from(object.to_string()));
        let object_probe = make(object);
        let render = |probe: Probe| -> Result<(Probe, Shown), Cancelled> {
            let shown = match prober.render(&probe)? {
                Ok(text) if shows_arguments(&text) => Shown::Yes(text),
                Ok(text) => Shown::No(text),
                Err(err) => Shown::Failed(err),
            };
            Ok((probe, shown))
        };
        Ok(Arguments {
            as_string: render(string_probe)?,
            as_object: render(object_probe)?,
        })
    }

    fn observed(&self) -> String {
        format!(
            "string arguments: {}; object arguments: {}",
            argument_verdict(&self.as_string.1),
            argument_verdict(&self.as_object.1)
        )
    }

    fn probes(&self) -> String {
        format!(
            "{} (arguments as a string, then as an object)",
            self.as_string.0.describe()
        )
    }

    fn supports(&self) -> Decided<bool> {
        let value = self.as_string.1.yes() || self.as_object.1.yes();
        Decided::new(value, self.probes(), self.observed())
    }

    fn requires_object(&self) -> Decided<bool> {
        let value = !self.as_string.1.yes() && self.as_object.1.yes();
        Decided::new(value, self.probes(), self.observed())
    }

    fn accepts_string(&self) -> Decided<bool> {
        Decided::new(self.as_string.1.yes(), self.probes(), self.observed())
    }

    fn renders_ids(&self) -> Decided<bool> {
        let shown_in = |shown: &Shown| shown.text().is_some_and(|t| t.contains(CALL_ID));
        let value = shown_in(&self.as_string.1) || shown_in(&self.as_object.1);
        let observed = if value {
            format!("the call's id {CALL_ID} appears in the prompt")
        } else {
            format!("the call's id {CALL_ID} does not appear in the prompt")
        };
        Decided::new(value, self.probes(), observed)
    }
}

/// Whether the argument shows up as a key (JSON, Python dict, XML parameter or
/// `key=value` form), not as an escaped string.
fn shows_arguments(text: &str) -> bool {
    [
        format!("\"{ARGUMENT_KEY}\""),
        format!("'{ARGUMENT_KEY}'"),
        format!("<parameter={ARGUMENT_KEY}>"),
        format!(">{ARGUMENT_KEY}<"),
        format!("{ARGUMENT_KEY}="),
        format!("{ARGUMENT_KEY}:"),
    ]
    .iter()
    .any(|marker| text.contains(marker.as_str()))
}

fn argument_verdict(shown: &Shown) -> String {
    match shown {
        Shown::Yes(_) => "rendered as arguments".into(),
        Shown::No(text) if text.contains(&format!("\\\"{ARGUMENT_KEY}\\\"")) => {
            "JSON-encoded a second time (escaped quotes)".into()
        }
        Shown::No(text) if text.contains(ARGUMENT_KEY) => "printed, but not as arguments".into(),
        Shown::No(_) => "not printed".into(),
        Shown::Failed(err) => super::probe::failure_text(err),
    }
}

fn parallel(
    prober: &Prober,
    content: &ContentCaps,
    caps: &ToolCaps,
) -> Result<Decided<bool>, Cancelled> {
    let probe = Probe::of(vec![
        content.user(USER_NEEDLE),
        call_message(
            content,
            vec![
                caps.call(CALL_ID, CALL_ONE),
                caps.call(SECOND_CALL_ID, CALL_TWO),
            ],
        ),
    ]);
    let shown = prober.shows(&probe, &[CALL_ONE, CALL_TWO])?;
    let observed = match &shown {
        Shown::Yes(_) => "both calls' names appear in the prompt".to_string(),
        Shown::No(_) => "not both calls' names appear in the prompt".to_string(),
        Shown::Failed(err) => super::probe::failure_text(err),
    };
    gated(caps, Decided::new(shown.yes(), probe.describe(), observed))
}

/// minja only counts these when tool calls render at all.
fn gated(caps: &ToolCaps, decided: Decided<bool>) -> Result<Decided<bool>, Cancelled> {
    if caps.supports_tool_calls.value || !decided.value {
        return Ok(decided);
    }
    Ok(Decided::new(
        false,
        decided.probe,
        format!(
            "{}, but tool calls do not render, so (as in minja) this does not count",
            decided.observed
        ),
    ))
}

fn responses(prober: &Prober, content: &ContentCaps, caps: &mut ToolCaps) -> Result<(), Cancelled> {
    let probe = Probe::of(vec![
        content.user(USER_NEEDLE),
        call_message(content, vec![caps.call(CALL_ID, CALL_ONE)]),
        json!({"role": "tool", "name": CALL_ONE, "content": RESULT_NEEDLE,
               "tool_call_id": RESPONSE_ID}),
    ]);
    let shown = prober.shows(&probe, &[RESULT_NEEDLE])?;
    let response = Decided::new(
        shown.yes(),
        probe.describe(),
        shown.verdict("the tool result"),
    );
    let id_shown = shown.text().is_some_and(|text| text.contains(RESPONSE_ID));
    let id = Decided::new(
        id_shown,
        probe.describe(),
        if id_shown {
            format!("the response's tool_call_id {RESPONSE_ID} appears in the prompt")
        } else {
            format!("the response's tool_call_id {RESPONSE_ID} does not appear in the prompt")
        },
    );
    caps.tool_role = RoleSupport {
        role: "tool".into(),
        handling: Decided::new(
            handling(&shown),
            probe.describe(),
            response.observed.clone(),
        ),
    };
    caps.supports_tool_responses = gated(caps, response)?;
    caps.supports_tool_call_id = gated(caps, id)?;
    Ok(())
}
