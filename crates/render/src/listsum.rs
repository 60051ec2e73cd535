//! The `sum` filter, with Python's list concatenation done in one list.
//!
//! `sum(start=[])` adds lists: Python's `start + a + b + ...`. MiniJinja's builtin adds
//! one list at a time and, past 32 of them, copies the whole result again for every
//! one, in one native call without a checkpoint: `([[1]*10**6]*100)|sum(start=[])`
//! copies billions of values, and a stopped render kept running and allocating until
//! the memory meter parked its thread. Here the lists are appended to one list, which
//! is charged to the render's byte budget before it grows, with a checkpoint for every
//! list and every 4,096 items. Numbers, and anything that does not start from a list,
//! keep MiniJinja's builtin.

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Error, State};

use super::filters::{iterate, ITEM_BYTES};
use super::generators::with_subject;
use super::none::is_python_none;
use super::pyerror::raise;
use super::pytype::type_name;
use super::scope;

/// Registers `sum`.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    let builtin = Value::from_function(minijinja::filters::sum);
    env.add_filter(
        "sum",
        move |state: &mut State, value: Value, args: Rest<Value>, kwargs: Kwargs| {
            scope::tick(Some(state))?;
            if let Some((attribute, start)) = list_start(&args, &kwargs)? {
                kwargs.assert_all_used()?;
                return concatenate(state, &value, attribute.as_deref(), &start);
            }
            scope::reserve_items(Some(state), value.len().unwrap_or(0), ITEM_BYTES)?;
            builtin.call(state, &with_subject(value, args, kwargs))
        },
    );
}

/// `(attribute, start)` when `start` is a list and `attribute` is absent or a string;
/// `None` leaves the call to the builtin (which also reports bad arguments).
fn list_start(args: &[Value], kwargs: &Kwargs) -> Result<Option<(Option<String>, Value)>, Error> {
    let start = match kwargs.peek::<Option<Value>>("start")? {
        Some(start) => start,
        None => match args.get(1) {
            Some(start) => start.clone(),
            None => return Ok(None),
        },
    };
    if !is_list(&start) {
        return Ok(None);
    }
    let attribute = kwargs
        .peek::<Option<Value>>("attribute")?
        .or_else(|| args.first().cloned())
        .filter(|a| !a.is_none() && !a.is_undefined() && !is_python_none(a));
    let attribute = match attribute {
        None => None,
        Some(a) if a.kind() == ValueKind::String => a.as_str().map(str::to_string),
        Some(_) => return Ok(None),
    };
    // Mark them used, so that only unknown keywords are left for the check.
    let _: Option<Value> = kwargs.get("start")?;
    let _: Option<Value> = kwargs.get("attribute")?;
    Ok(Some((attribute, start)))
}

/// A list in Python's eyes: a list or a lazy list, not a tuple or a generator.
fn is_list(value: &Value) -> bool {
    type_name(value) == "list"
}

/// `start + item + item + ...` for lists, skipping undefined items as MiniJinja does.
fn concatenate(
    state: &State,
    values: &Value,
    attribute: Option<&str>,
    start: &Value,
) -> Result<Value, Error> {
    let mut list = Vec::new();
    append(state, &mut list, start)?;
    for item in iterate(state, values)? {
        scope::tick(Some(state))?;
        let item = match attribute {
            Some(path) => lookup(&item, path),
            None => item,
        };
        if item.is_undefined() {
            continue;
        }
        if !is_list(&item) {
            return Err(raise(
                "TypeError",
                format!(
                    "can only concatenate list (not \"{}\") to list",
                    type_name(&item)
                ),
            ));
        }
        append(state, &mut list, &item)?;
    }
    Ok(Value::from(list))
}

/// Appends `items`' items to `list`, charging every growth of the list first.
fn append(state: &State, list: &mut Vec<Value>, items: &Value) -> Result<(), Error> {
    make_room(state, list, items.len().unwrap_or(0))?;
    for (index, item) in items.try_iter()?.enumerate() {
        if index % 4096 == 4095 {
            // A lazy list may hold more than it said.
            make_room(state, list, 4096)?;
        }
        list.push(item);
    }
    Ok(())
}

/// Checks, before `list` grows by `more` items, that the render may hold what it grows
/// to (a `Vec` that must grow at least doubles its capacity), then grows it.
pub(crate) fn make_room(state: &State, list: &mut Vec<Value>, more: usize) -> Result<(), Error> {
    let needed = list.len().saturating_add(more);
    let capacity = list.capacity();
    if needed > capacity {
        let grown = needed.max(capacity.saturating_mul(2));
        scope::reserve_items(Some(state), grown - capacity, ITEM_BYTES)?;
        list.reserve(more);
    }
    Ok(())
}

/// MiniJinja's attribute path (`a.b.0`): items by index, attributes by name; undefined
/// when a step is missing.
fn lookup(item: &Value, path: &str) -> Value {
    let mut value = item.clone();
    for part in path.split('.') {
        let next = match part.parse::<usize>() {
            Ok(index) => value.get_item_by_index(index),
            Err(_) => value.get_attr(part),
        };
        value = match next {
            Ok(found) => found,
            Err(_) => return Value::UNDEFINED,
        };
    }
    value
}
