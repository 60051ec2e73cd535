//! Content probes: plain strings or typed parts, and `null` content.
//!
//! Their answers shape every later probe, as in minja: a template that only prints typed
//! parts gets its probe messages as parts, and one that fails on `null` content gets `""`.

use serde_json::{json, Value as Json};

use super::capabilities::{Decided, Entry};
use super::probe::{message, text_parts, Probe, Prober, Shown};
use super::Cancelled;

/// Text of the probe user message.
pub(crate) const USER_NEEDLE: &str = "UserNeedle4831";
/// Text of a second user message.
pub(crate) const SECOND_USER_NEEDLE: &str = "UserNeedle5902";

/// What the content probes found.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentCaps {
    /// A single user message renders (possibly only with a tools list).
    pub renders_user_message: Decided<bool>,
    /// The template fails on `tools=None` and needs a (possibly empty) list.
    pub requires_tools_list: Decided<bool>,
    /// minja's `requires_typed_content`: plain string content is not printed, typed
    /// parts are.
    pub requires_typed_content: Decided<bool>,
    /// Typed text parts are printed as text (not as a stringified list).
    pub accepts_content_parts: Decided<bool>,
    /// minja's `requires_non_null_content`: `""` content renders, `null` does not.
    pub requires_non_null_content: Decided<bool>,
}

impl ContentCaps {
    /// A user message with `text`, shaped as the template wants it.
    pub(crate) fn user(&self, text: &str) -> Json {
        self.message("user", text)
    }

    /// A message of `role` with `text`, as parts when the template requires them.
    pub fn message(&self, role: &str, text: &str) -> Json {
        if self.requires_typed_content.value {
            json!({"role": role, "content": text_parts(text)})
        } else {
            message(role, text)
        }
    }

    /// The content of a message that only carries tool calls: `""` or `null`.
    pub(crate) fn empty(&self) -> Json {
        if self.requires_non_null_content.value {
            json!("")
        } else {
            Json::Null
        }
    }

    /// The report lines about whether probing works at all: they come first.
    pub(crate) fn baseline_entries(&self) -> Vec<Entry> {
        vec![
            Entry::flag("renders_user_message", &self.renders_user_message),
            Entry::flag("requires_tools_list", &self.requires_tools_list),
        ]
    }

    /// The report lines of this group that minja has no name for.
    pub fn entries(&self) -> Vec<Entry> {
        vec![Entry::flag(
            "accepts_content_parts",
            &self.accepts_content_parts,
        )]
    }
}

/// Runs the content probes.
pub(crate) fn detect(prober: &Prober) -> Result<ContentCaps, Cancelled> {
    let (renders_user_message, requires_tools_list) =
        prober.calibrate(&message("user", USER_NEEDLE))?;
    let as_string = Probe::of(vec![message("user", USER_NEEDLE)]);
    let as_parts = Probe::of(vec![
        json!({"role": "user", "content": text_parts(USER_NEEDLE)}),
    ]);
    let string_shown = prober.shows(&as_string, &[USER_NEEDLE])?;
    let parts_shown = prober.shows(&as_parts, &[USER_NEEDLE])?;
    let requires_typed = Decided::new(
        !string_shown.yes() && parts_shown.yes(),
        format!("{} / the same as typed parts", as_string.describe()),
        format!(
            "as a string, {}; as [{{type: text}}] parts, {}",
            string_shown.verdict("the text"),
            parts_shown.verdict("the text")
        ),
    );
    let stringified = parts_shown.text().is_some_and(is_stringified);
    let accepts_parts = Decided::new(
        parts_shown.yes() && !stringified,
        as_parts.describe(),
        if stringified {
            "the parts are printed as data (a `type` key shows), not as text".to_string()
        } else {
            parts_shown.verdict("the part's text")
        },
    );
    let requires_typed_content = requires_typed;
    let shape = ContentCaps {
        renders_user_message,
        requires_tools_list,
        requires_typed_content,
        accepts_content_parts: accepts_parts,
        requires_non_null_content: Decided::new(false, "", ""),
    };
    let requires_non_null_content = non_null(prober, &shape)?;
    Ok(ContentCaps {
        requires_non_null_content,
        ..shape
    })
}

/// A list printed as data rather than read: its keys show.
pub(crate) fn is_stringified(text: &str) -> bool {
    text.contains("'type'") || text.contains("\"type\"")
}

/// Two exchanges whose assistant content is `""`, then `null` (two, because some
/// templates treat the last assistant message differently).
fn non_null(prober: &Prober, shape: &ContentCaps) -> Result<Decided<bool>, Cancelled> {
    let exchange = |content: Json| {
        let user = shape.user(USER_NEEDLE);
        let reply = json!({"role": "assistant", "content": content});
        Probe::of(vec![user.clone(), reply.clone(), user, reply])
    };
    let empty = exchange(json!(""));
    let null = exchange(Json::Null);
    let empty_shown = prober.shows(&empty, &[USER_NEEDLE])?;
    let null_shown = prober.shows(&null, &[USER_NEEDLE])?;
    let observed = format!(
        "with \"\" content: {}; with null content: {}",
        rendered(&empty_shown),
        rendered(&null_shown)
    );
    Ok(Decided::new(
        empty_shown.yes() && !null_shown.yes(),
        format!("{} / the same with null content", empty.describe()),
        observed,
    ))
}

fn rendered(shown: &Shown) -> String {
    match shown {
        Shown::Yes(_) => "it renders".into(),
        Shown::No(_) => "it renders without the user text".into(),
        Shown::Failed(err) => super::probe::failure_text(err),
    }
}
