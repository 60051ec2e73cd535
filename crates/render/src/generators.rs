//! Filters that return Python generators in Jinja2: `map`, `select`, `reject`,
//! `selectattr`, `rejectattr`, `reverse` (on lists) and `items`.
//!
//! The difference shows: a generator is falsy-proof, single-use, has no `len()` and
//! `json.dumps` refuses it (`tools|map(attribute='function')|tojson` raises in
//! transformers). And the select/map family returns nothing for a falsy input instead of
//! failing, because Jinja2 guards those loops with `if value:`. Each wrapper delegates the
//! actual filtering to MiniJinja's built-in and only changes the shape of the result.

use std::fmt;
use std::sync::Arc;

use minijinja::value::{Enumerator, Kwargs, Object, ObjectRepr, Rest, Value, ValueKind};
use minijinja::{Error, State};

use super::none::is_python_none;

/// Registers the generator-returning filters on `env`.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    let guarded: [(&'static str, Value); 5] = [
        ("map", Value::from_function(minijinja::filters::map)),
        ("select", Value::from_function(minijinja::filters::select)),
        ("reject", Value::from_function(minijinja::filters::reject)),
        (
            "selectattr",
            Value::from_function(minijinja::filters::selectattr),
        ),
        (
            "rejectattr",
            Value::from_function(minijinja::filters::rejectattr),
        ),
    ];
    for (name, builtin) in guarded {
        env.add_filter(
            name,
            move |state: &mut State, value: Value, args: Rest<Value>, kwargs: Kwargs| {
                if !value.is_true() {
                    return Ok(generator(Vec::new()));
                }
                // The builtin collects up to `len` values into a list that grows by
                // doubling (up to twice that), then they are copied into the generator.
                let len = value.len().unwrap_or(0);
                super::scope::reserve_items(Some(state), len, 3 * super::filters::ITEM_BYTES)?;
                let result = builtin.call(state, &with_subject(value, args, kwargs))?;
                Ok(generator(super::filters::iterate(state, &result)?))
            },
        );
    }
    env.add_filter("reverse", reverse);
    env.add_filter("items", items);
}

/// The builtin's argument list: the filtered value, positional arguments, and the
/// keyword arguments (`map(attribute='name')`) passed on as keyword arguments.
pub(super) fn with_subject(value: Value, args: Rest<Value>, kwargs: Kwargs) -> Vec<Value> {
    let mut all = Vec::with_capacity(args.len() + 2);
    all.push(value);
    all.extend(args.0);
    if kwargs.args().next().is_some() {
        all.push(Value::from(kwargs));
    }
    all
}

/// A Python generator's stand-in: iterable (with a known length, so `loop.last` and
/// `loop.length` work as in Jinja2, which looks ahead), but not a list: no `len()`, no
/// indexing, not JSON-serializable.
#[derive(Debug)]
pub(crate) struct Generator(Vec<Value>);

impl Object for Generator {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.0.clone())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.0.len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        // A generator object is always truthy in Python.
        true
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<generator object>")
    }
}

/// Whether `value` is a [`Generator`] (as opposed to MiniJinja's lazy lists, such as
/// the result of `list + list` or a slice, which are lists in Python).
pub(crate) fn is_generator(value: &Value) -> bool {
    value.downcast_object_ref::<Generator>().is_some()
}

/// Wraps filter results as a [`Generator`].
pub(crate) fn generator(items: Vec<Value>) -> Value {
    Value::from_object(Generator(items))
}

/// Jinja2's `reverse`: a reversed string, or a reverse iterator over anything else.
fn reverse(state: &State, value: Value) -> Result<Value, Error> {
    if value.kind() == ValueKind::String {
        return minijinja::filters::reverse(&value);
    }
    let mut items = super::filters::iterate(state, &value)?;
    items.reverse();
    Ok(generator(items))
}

/// Jinja2's `items`: `(key, value)` pairs of a mapping; empty for undefined.
fn items(state: &State, value: Value) -> Result<Value, Error> {
    super::scope::reserve_items(
        Some(state),
        value.len().unwrap_or(0),
        3 * super::filters::ITEM_BYTES,
    )?;
    if value.is_undefined() {
        return Ok(generator(Vec::new()));
    }
    if value.kind() != ValueKind::Map || is_python_none(&value) {
        return Err(super::pyerror::raise(
            "TypeError",
            "Can only get item pairs from a mapping.",
        ));
    }
    let pairs = value
        .try_iter()?
        .map(|key| {
            let item = value.get_item(&key).unwrap_or_default();
            Value::from(minijinja::value::Tuple::from(vec![key, item]))
        })
        .collect();
    Ok(generator(pairs))
}
