//! Where undefined values came from, for Jinja2's `UndefinedError` hints.
//!
//! Jinja2 remembers, in each `Undefined`, the object and name of the failed lookup and
//! words the error after them: `'dict object' has no attribute 'content'`. MiniJinja's
//! undefined values only remember the expression that made them (`message.content`).
//! The dicts and `None`s that come from the conversation are this layer's own objects,
//! so they note each missing key here as it is looked up; when an error names the
//! expression, the key leads back to the kind of object that lacked it. Lookups on
//! other values (strings, lists, numbers, namespaces) are noted by the diagnosis render
//! a failed render gets ([`super::lookups`]).
//!
//! The notes are per thread and reset at the start of every render. Only the runs that
//! examine a failure take them ([`start_noting`]): a render's first run has MiniJinja's
//! debug mode off, so its errors name no expression to hint about, and a long
//! conversation misses keys on most messages (`message.tool_calls is defined`).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

use minijinja::value::Value;

use super::pyerror::repr;
use super::pytype::type_name;

/// How many recent misses are remembered; older ones are forgotten first.
const REMEMBERED: usize = 64;

thread_local! {
    static NOTING: Cell<bool> = const { Cell::new(false) };
    // A ring: a render of a long conversation misses keys on every message (`is defined`
    // tests), and dropping the oldest note must not shift the other 63.
    static MISSES: RefCell<VecDeque<(Value, Cow<'static, str>)>> = const { RefCell::new(VecDeque::new()) };
}

/// Forgets the misses of the previous render on this thread, and notes none until
/// [`start_noting`].
pub(crate) fn reset() {
    MISSES.with(|misses| misses.borrow_mut().clear());
    NOTING.with(|noting| noting.set(false));
}

/// Forgets the misses of the previous render and notes every miss from now on: for the
/// debug-mode runs that word a failed render's error (see `failure`).
pub(crate) fn start_noting() {
    MISSES.with(|misses| misses.borrow_mut().clear());
    NOTING.with(|noting| noting.set(true));
}

/// Whether misses are being noted on this thread (a caller can skip building the key).
pub(crate) fn noting() -> bool {
    NOTING.with(Cell::get)
}

/// Notes that `owner` (Python's `object_type_repr`, e.g. `dict object`) has no `key`.
pub(crate) fn note_miss(key: &Value, owner: impl Into<Cow<'static, str>>) {
    if !noting() {
        return;
    }
    let owner = owner.into();
    MISSES.with(|misses| {
        let mut misses = misses.borrow_mut();
        if misses
            .back()
            .is_some_and(|(last, known)| last == key && *known == owner)
        {
            return;
        }
        if misses.len() == REMEMBERED {
            misses.pop_front();
        }
        misses.push_back((key.clone(), owner));
    });
}

fn owner_of(key: &Value) -> Option<String> {
    MISSES.with(|misses| {
        misses
            .borrow()
            .iter()
            .rev()
            .find(|(missed, _)| missed == key)
            .map(|(_, owner)| owner.to_string())
    })
}

/// Jinja2's `object_type_repr`: `None`, `<type> object` for built-in types, the module
/// path too for others (`jinja2.runtime.LoopContext object`).
pub(crate) fn object_type_repr(value: &Value) -> String {
    if value.is_safe() {
        return "markupsafe.Markup object".into();
    }
    match type_name(value) {
        "NoneType" => "None".to_string(),
        "TemplateNamespace" => {
            "transformers.utils.chat_template_utils.TemplateNamespace object".into()
        }
        "LoopContext" => "jinja2.runtime.LoopContext object".into(),
        "Macro" => "jinja2.runtime.Macro object".into(),
        name => format!("{name} object"),
    }
}

/// [`object_type_repr`], where the value's Python type is known.
pub(crate) fn known_object_type_repr(value: &Value) -> Option<String> {
    (type_name(value) != "object").then(|| object_type_repr(value))
}

/// Jinja2's message for the undefined value MiniJinja describes as `expr`.
pub(crate) fn hint(expr: &str) -> String {
    let Some((_, key)) = split_lookup(expr) else {
        return format!("{} is undefined", repr(expr));
    };
    match (owner_of(&key), key.as_str()) {
        (Some(owner), Some(name)) => {
            format!("{} has no attribute {}", repr(&owner), repr(name))
        }
        (Some(owner), None) => format!("{owner} has no element {key}"),
        (None, _) => format!("{} is undefined", repr(expr)),
    }
}

/// Whether MiniJinja's description of an undefined value's origin is a lookup.
pub(crate) fn is_lookup(expr: &str) -> bool {
    split_lookup(expr).is_some()
}

/// `base.name`, `base["key"]` or `base[0]` as MiniJinja prints the expression: the base
/// and the key looked up.
fn split_lookup(expr: &str) -> Option<(&str, Value)> {
    for quote in ['"', '\''] {
        if let Some(inner) = expr.strip_suffix(&format!("{quote}]")) {
            let open = inner.rfind(&format!("[{quote}"))?;
            let key = inner[open + 2..].replace(&format!("\\{quote}"), &quote.to_string());
            return Some((&expr[..open], Value::from(key)));
        }
    }
    if let Some(inner) = expr.strip_suffix(']') {
        let open = inner.rfind('[')?;
        let index: i64 = inner[open + 1..].parse().ok()?;
        return Some((&expr[..open], Value::from(index)));
    }
    let dot = expr.rfind('.')?;
    let name = &expr[dot + 1..];
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    is_name.then(|| (&expr[..dot], Value::from(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Jinja2 3.1.6: {{ m.content + 'x' }} with m a dict without 'content' raises
    // UndefinedError("'dict object' has no attribute 'content'").
    #[test]
    fn names_the_object_that_lacked_the_key() {
        start_noting();
        note_miss(&Value::from("content"), "dict object");
        assert_eq!(
            hint("message.content"),
            "'dict object' has no attribute 'content'"
        );
        assert_eq!(
            hint("message['content']"),
            "'dict object' has no attribute 'content'"
        );
        assert_eq!(hint("functions"), "'functions' is undefined");
        assert_eq!(hint("x.other"), "'x.other' is undefined");
    }

    #[test]
    fn a_first_run_notes_nothing() {
        reset();
        note_miss(&Value::from("content"), "dict object");
        assert_eq!(hint("message.content"), "'message.content' is undefined");
    }
}
