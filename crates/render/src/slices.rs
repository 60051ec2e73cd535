//! Indexing a slice in place: `messages[1:][i]`.
//!
//! MiniJinja slices a list lazily (an iterable that skips `start` items and takes the
//! rest), and indexing that iterable walks it from the start, so `messages[1:][i]` in a
//! loop over `i` is quadratic. Stored slices are lists already ([`super::loops`]); a
//! slice indexed where it is written is rewritten ([`super::rewrite`]) into a call to
//! [`slice_of`], whose result the template then indexes as before. For a list with a
//! positive (or no) step it is a view that finds item `i` at `start + i × step` in O(1);
//! for anything else it is MiniJinja's own slice, so the output never changes.

use std::sync::{Arc, LazyLock};

use minijinja::value::{Enumerator, Object, ObjectRepr, Value};
use minijinja::{Environment, Error};

use super::helpers::Helpers;

/// Registers the helper under this template's name.
pub(crate) fn register(env: &mut Environment<'static>, helpers: &Helpers) {
    env.add_function(helpers.slice_of(), slice_of);
}

/// `base[start:stop:step]`, to be indexed (missing bounds are `none`).
fn slice_of(base: Value, start: Value, stop: Value, step: Value) -> Result<Value, Error> {
    if let Some(view) = SliceView::of(&base, &start, &stop, &step) {
        return Ok(Value::from_object(view));
    }
    minijinja_slice(base, start, stop, step)
}

/// A bound as MiniJinja reads it: `none` is absent, anything else must be an integer.
fn bound(value: &Value) -> Option<Option<i64>> {
    if value.is_none() {
        return Some(None);
    }
    i64::try_from(value.clone()).ok().map(Some)
}

/// The items of a list slice with a positive step, indexed in O(1). It answers exactly
/// the lookups MiniJinja's lazy slice answers: the same items, the same length.
#[derive(Debug)]
struct SliceView {
    items: Arc<Vec<Value>>,
    start: usize,
    step: usize,
    len: usize,
}

impl SliceView {
    fn of(base: &Value, start: &Value, stop: &Value, step: &Value) -> Option<Self> {
        let items = base.downcast_object::<Vec<Value>>()?;
        let (start, stop, step) = (bound(start)?, bound(stop)?, bound(step)?);
        let step = usize::try_from(step.unwrap_or(1)).ok().filter(|&s| s > 0)?;
        let (start, taken) = offset_and_len(start, stop, items.len());
        // The lazy slice takes `taken` items from `start`, as many as there are, and
        // keeps every `step`th.
        let available = taken.min(items.len().saturating_sub(start));
        Some(SliceView {
            len: available.div_ceil(step),
            items,
            start,
            step,
        })
    }
}

/// MiniJinja's slice bounds for a positive step: where the slice starts and how many
/// items it may take. Negative bounds count from the end (clamped at 0); positive
/// ones are not clamped (taking stops where the items end).
fn offset_and_len(start: Option<i64>, stop: Option<i64>, len: usize) -> (usize, usize) {
    let from_end = |bound: i64| (len as i64).saturating_add(bound).max(0) as usize;
    let start = match start.unwrap_or(0) {
        s if s < 0 => from_end(s),
        s => s as usize,
    };
    let stop = match stop {
        None => len,
        Some(s) if s < 0 => from_end(s),
        Some(s) => s as usize,
    };
    (start, stop.saturating_sub(start))
}

impl Object for SliceView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let index = key.as_usize().filter(|&i| i < self.len)?;
        self.items.get(self.start + index * self.step).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.len)
    }
}

/// An environment only for evaluating MiniJinja's own slice expression.
static SLICER: LazyLock<Environment<'static>> = LazyLock::new(Environment::new);

/// `base[start:stop:step]` exactly as MiniJinja computes it (strings, tuples, negative
/// steps, undefined, errors).
fn minijinja_slice(base: Value, start: Value, stop: Value, step: Value) -> Result<Value, Error> {
    let expression = SLICER.compile_expression("base[start:stop:step]")?;
    expression.eval(minijinja::context! { base, start, stop, step })
}

#[cfg(test)]
mod tests {
    use crate::{CompiledTemplate, Conversation, Limits};

    /// The same expression through chatplate (rewritten) and plain MiniJinja.
    fn both(expression: &str) -> (String, String) {
        let source = format!("{{% set l = [10, 11, 12, 13, 14, 15, 16] %}}{{{{ {expression} }}}}");
        let conversation = Conversation {
            messages: vec![serde_json::json!({"role": "user", "content": "x"})],
            ..Conversation::default()
        };
        let ours = CompiledTemplate::compile(&source, Limits::default())
            .and_then(|t| t.render(&conversation))
            .map_err(|e| e.message.clone());
        let mut env = minijinja::Environment::new();
        env.add_template("t", &source).unwrap();
        let plain = env
            .get_template("t")
            .unwrap()
            .render(())
            .map_err(|e| e.to_string());
        (
            ours.unwrap_or_else(|e| format!("error {e}")),
            plain.unwrap_or_else(|_| "error".into()),
        )
    }

    #[test]
    fn indexing_a_slice_in_place_gives_minijinja_s_items() {
        let bounds = ["", "0", "1", "3", "-2", "-9", "9", "none"];
        let steps = ["", "1", "2", "3", "-1", "-2"];
        let indexes = ["0", "1", "2", "-1", "-3", "5", "9", "'a'", "1.0", "true"];
        let mut checked = 0;
        for start in bounds {
            for stop in bounds {
                for step in steps {
                    for index in indexes {
                        let slice = match step {
                            "" => format!("l[{start}:{stop}]"),
                            step => format!("l[{start}:{stop}:{step}]"),
                        };
                        let expression = format!("{slice}[{index}]");
                        let (ours, plain) = both(&expression);
                        if !plain.starts_with("error") {
                            assert_eq!(ours, plain, "{expression}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn strings_and_tuples_keep_minijinja_s_slices() {
        for expression in [
            "'hello'[1:][0]",
            "'hello'[::-1][0]",
            "(1, 2, 3)[1:][0]",
            "none[1:][0] is undefined",
            "(l[1:] | list)[0]",
            "l[1:][0:2]",
            "l[1:][l[2:][0] - 11]",
        ] {
            let (ours, plain) = both(expression);
            assert_eq!(ours, plain, "{expression}");
        }
    }
}
