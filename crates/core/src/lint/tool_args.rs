//! `tool-args-string`: the same tool call with its `arguments` as a JSON string (as the
//! OpenAI API sends them) and as an object (as transformers documents them). A template
//! that crashes on one form, encodes the string a second time (`"{\"city\": ...}"`) or
//! prints the two differently shows the model a call it never produced.

use serde_json::{json, Value as Json};

use super::crash::location_of;
use super::lab::{Lab, CALL_NAME};
use super::{Finding, Rule};
use crate::inspect::{call_message, failure_text, text_excerpt, tool_call, Cancelled, Probe};
use crate::inspect::{CALL_ID, USER_NEEDLE};

const KEY: &str = "argument_needle";

/// The finding, when the two forms do not render alike.
pub(crate) fn check(lab: &Lab) -> Result<Vec<Finding>, Cancelled> {
    if !lab.caps.tools.supports_tool_calls.value {
        return Ok(Vec::new());
    }
    let object = json!({ KEY: "ArgValue" });
    // Python's json.dumps spacing: what `tojson` prints for the object.
    let string = Json::from(format!("{{\"{KEY}\": \"ArgValue\"}}"));
    let probe = |arguments: Json| {
        let call = tool_call(CALL_ID, CALL_NAME, arguments);
        Probe::of(vec![
            lab.message("user", USER_NEEDLE),
            call_message(&lab.caps.content, vec![call]),
        ])
    };
    let (as_string, as_object) = (probe(string), probe(object));
    let scenario = format!(
        "{} (arguments as a JSON string, then as an object)",
        as_string.describe()
    );
    let finding = match (lab.render(&as_string)?, lab.render(&as_object)?) {
        (Err(err), Ok(_)) => Finding::new(
            Rule::ToolArgsString,
            format!("arguments given as a JSON string crash the template: {}", failure_text(&err)),
        )
        .at(location_of(&err)),
        (Ok(_), Err(err)) => Finding::new(
            Rule::ToolArgsString,
            format!(
                "arguments given as an object (transformers' documented form) crash the \
                 template, which only takes a JSON string: {}",
                failure_text(&err)
            ),
        )
        .at(location_of(&err))
        .fixed_by("accept both forms: {% if arguments is string %}{{ arguments }}{% else %}{{ arguments | tojson }}{% endif %}"),
        (Ok(text), Ok(reference)) if text != reference => differ(lab, &text, &reference),
        _ => return Ok(Vec::new()),
    };
    Ok(vec![finding.on(scenario)])
}

/// The string form renders, but not as the object does.
fn differ(lab: &Lab, text: &str, reference: &str) -> Finding {
    let at = crate::inspect::text::common_prefix_len(text, reference);
    let evidence = format!(
        "as a string: {}\nas an object: {}",
        text_excerpt(text, at.saturating_sub(30), 90),
        text_excerpt(reference, at.saturating_sub(30), 90)
    );
    let twice = text.contains(&format!("\\\"{KEY}\\\""));
    let message = if twice {
        "arguments given as a JSON string are JSON-encoded a second time (the model sees an \
         escaped string, not the arguments it wrote)"
    } else {
        "arguments given as a JSON string render differently from the same arguments as an \
         object"
    };
    Finding::new(Rule::ToolArgsString, message)
        .at(lab.scan.first_name("arguments"))
        .showing(evidence)
}
