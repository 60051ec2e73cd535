//! The helpers the source rewrite ([`super::rewrite`]) routes loops and assignments
//! through.
//!
//! * **Loop iterables**: every `for` loop iterates through [`LoopItems`], which gives a
//!   string its length (Jinja2 knows it, so `loop.length`, `loop.last` and
//!   `loop.revindex` work; MiniJinja's character iterator has none) and is a render
//!   checkpoint for every item, so a cancelled or timed-out render stops inside any
//!   loop, and one over its byte budget stops before it grows further.
//! * **Namespace assignments**: a namespace is the only mutable value, so it is the
//!   only way to build a value that contains itself, and the only way to carry a value
//!   across loop iterations. Every `{% set ns.attr = value %}` is checked: no namespace
//!   inside a namespace (it could contain itself, and comparing or printing a cycle
//!   recurses forever), no nesting deeper than [`MAX_NESTING`] and no list too large
//!   to ever materialise (doubling a list with `l + l` builds a lazy list of 2^60 items
//!   in 60 steps).
//! * **Other assignments**: `{% set x = value %}` refuses only a list too large to
//!   ever materialise (a length check, no walk).
//! * **Lazy lists become lists when stored**: MiniJinja's slices (`messages[1:]`) and
//!   list sums (`a + b`) are lazy iterables, and indexing one (`l[i]`) walks it from the
//!   start, charging fuel per step: a loop over `range(l|length)` is quadratic (it ran
//!   out of fuel at 8,000 messages). In Python both are lists, so every assignment
//!   stores them as one ([`materialize`]): one pass per `set`, as Python copies a slice,
//!   and O(1) indexing after it. Everything our layer does with them already treats them
//!   as lists, so the output is unchanged.

use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::helpers::Helpers;
use super::scope;

/// Deepest nesting of lists and dicts a namespace attribute may hold (Python's
/// recursion limit makes printing fail at about 1,000).
pub(crate) const MAX_NESTING: usize = 10_000;

/// Bytes one list slot is counted as (a MiniJinja value).
const SLOT_BYTES: usize = 24;

/// Most items one assignment may hold (a namespace's: all levels together). Real
/// templates keep flags, strings and short lists there; a list doubled in a loop
/// reaches this in about 20 steps and is refused here instead of being walked for
/// seconds or materialised all at once.
pub(crate) const MAX_STORED_ITEMS: usize = 1_000_000;

/// Registers both helpers under this template's names.
pub(crate) fn register(env: &mut minijinja::Environment<'static>, helpers: &Helpers) {
    env.add_filter(helpers.loop_iterable(), loop_iterable);
    env.add_filter(helpers.namespace_value(), namespace_value);
    env.add_filter(helpers.set_value(), set_value);
}

/// The value of a plain `{% set x = value %}`: a list doubled with `l + l` through a
/// chain of assignments is lazy until MiniJinja materialises it (after 32 levels), all
/// at once and beyond any check; refused here while it is still only a length.
fn set_value(state: &State, value: Value) -> Result<Value, Error> {
    scope::tick(Some(state))?;
    if is_container(&value) {
        if let Some(len) = value.len() {
            if len > MAX_STORED_ITEMS {
                return Err(too_many_items());
            }
        }
    }
    materialize(state, value)
}

/// Whether `value` is one of MiniJinja's own lazy iterables (a slice, a list sum,
/// `range`), known only by its type name (its types are private); never our
/// generators or loop iterables.
fn is_lazy_list(value: &Value) -> bool {
    value.kind() == ValueKind::Iterable
        && value
            .as_object()
            .is_some_and(|object| object.type_name().starts_with("minijinja::"))
}

/// A lazy list as a real list (O(1) to index, see the module docs); anything else
/// unchanged. The copy is charged to the byte budget and the fuel like a `|list`.
pub(crate) fn materialize(state: &State, value: Value) -> Result<Value, Error> {
    if !is_lazy_list(&value) {
        return Ok(value);
    }
    let len = value.len().unwrap_or(0);
    if len > MAX_STORED_ITEMS {
        return Err(too_many_items());
    }
    scope::reserve_items(Some(state), len, SLOT_BYTES)?;
    state.consume_fuel(1 + len as u64 / 2)?;
    let mut items = Vec::with_capacity(len);
    for item in value.try_iter()? {
        if items.len() >= MAX_STORED_ITEMS {
            return Err(too_many_items());
        }
        items.push(item);
    }
    Ok(Value::from(items))
}

/// `None` and numbers fail with Python's message; undefined iterates as nothing (as
/// lenient undefined does); anything else is iterated through [`LoopItems`].
fn loop_iterable(state: &State, value: Value) -> Result<Value, Error> {
    scope::tick(Some(state))?;
    if value.is_undefined() {
        return Ok(value);
    }
    super::filters::ensure_iterable(&value)?;
    let len = match value.as_str() {
        Some(text) if value.kind() == ValueKind::String => Some(text.chars().count()),
        _ => value.len(),
    };
    Ok(Value::from_object(LoopItems {
        items: value,
        len,
        traced: scope::traced(),
    }))
}

/// A loop's iterable: the same items, with a known length for strings, checking at
/// every item whether the render must stop.
#[derive(Debug)]
struct LoopItems {
    items: Value,
    len: Option<usize>,
    /// Made in a traced render: tell each message dict the loop reaches it.
    traced: bool,
}

impl Object for LoopItems {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Iterable
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        match self.items.try_iter() {
            Ok(items) => Enumerator::Iter(Box::new(Checked {
                items,
                len: self.len,
                stopped: false,
                traced: self.traced,
                over_messages: false,
            })),
            Err(_) => Enumerator::Empty,
        }
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        self.len
    }
}

/// Walks `value` as a `for` loop over it would, doing nothing with the items: a traced
/// render's messages note that a loop reached them, for a loop whose body a flag scan
/// runs on only some of its items ([`super::scans`]).
pub(crate) fn reach_all(state: &State, value: Value) -> Result<(), Error> {
    for _ in loop_iterable(state, value)?.try_iter()? {}
    scope::tick(Some(state))
}

/// Yields the items until the render must stop, then one invalid value carrying the
/// error (which ends the loop with it), then nothing.
struct Checked<I> {
    items: I,
    len: Option<usize>,
    stopped: bool,
    traced: bool,
    /// It has reached a message of a traced render, and counts among the loops over
    /// messages running on this thread (see [`MESSAGE_LOOPS`]) until it is dropped.
    over_messages: bool,
}

thread_local! {
    /// How many loops that reached a message of a traced render are running on this
    /// thread: a loop's reach is noted with how many enclose it, so that a scan of the
    /// messages from inside the main loop (a tool turn looking up its call) does not
    /// hide where the main loop reached them (see `traced`).
    static MESSAGE_LOOPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl<I: Iterator<Item = Value>> Iterator for Checked<I> {
    type Item = Value;

    fn next(&mut self) -> Option<Value> {
        if self.stopped {
            return None;
        }
        if let Err(err) = scope::tick(None) {
            self.stopped = true;
            return Some(Value::from(err));
        }
        let item = self.items.next();
        if let Some(item) = &item {
            self.len = self.len.map(|n| n.saturating_sub(1));
            // A traced render notes where loops reach each message.
            if self.traced {
                if let Some(dict) = item.downcast_object_ref::<super::data::PyDict>() {
                    let running = MESSAGE_LOOPS.get();
                    let enclosing = running.saturating_sub(usize::from(self.over_messages));
                    if dict.reached(enclosing) && !self.over_messages {
                        self.over_messages = true;
                        MESSAGE_LOOPS.set(running + 1);
                    }
                }
            }
        }
        item
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.len {
            Some(n) => (n, Some(n)),
            None => self.items.size_hint(),
        }
    }
}

impl<I> Drop for Checked<I> {
    fn drop(&mut self) {
        if self.over_messages {
            MESSAGE_LOOPS.set(MESSAGE_LOOPS.get().saturating_sub(1));
        }
    }
}

/// The value of `{% set ns.attr = value %}`, unchanged once it is known to be safe to
/// keep (see the module docs).
fn namespace_value(state: &State, value: Value) -> Result<Value, Error> {
    scope::tick(Some(state))?;
    // Most namespace values are strings, numbers and flags: nothing to walk.
    if is_container(&value) {
        check_storable(state, &value)?;
    }
    materialize(state, value)
}

/// Whether `value` is a namespace (MiniJinja's own type, known here only by name).
pub(crate) fn is_namespace(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|object| object.type_name().ends_with("::Namespace"))
}

/// Walks the containers inside `value` (without recursion, so depth costs no stack).
/// The walk is template work: it is charged to the step budget (so a template that
/// re-stores a deep value in a loop pays for it) and it counts the items it visits
/// against the byte budget (a lazy list of 2^40 items is refused long before the end).
fn check_storable(state: &State, value: &Value) -> Result<(), Error> {
    let mut pending = vec![(value.clone(), 0usize)];
    let mut visited = 0usize;
    while let Some((current, depth)) = pending.pop() {
        if !is_container(&current) {
            continue;
        }
        if is_namespace(&current) {
            return Err(refused(
                "a namespace cannot be stored inside a namespace in chatplate (it could \
                 end up containing itself)",
            ));
        }
        if depth >= MAX_NESTING {
            return Err(refused(&format!(
                "RecursionError: value nested deeper than {MAX_NESTING} levels"
            )));
        }
        if let Some(len) = current.len() {
            // Known up front (a lazy list knows its length): refuse before walking.
            if visited.saturating_add(len) > MAX_STORED_ITEMS {
                return Err(too_many_items());
            }
            scope::reserve_items(Some(state), visited.saturating_add(len), SLOT_BYTES)?;
        }
        let count = push_children(state, &current, depth, visited, &mut pending)?;
        visited += count;
        if visited > MAX_STORED_ITEMS {
            return Err(too_many_items());
        }
        state.consume_fuel(1 + count as u64 / 2)?;
        scope::reserve_items(Some(state), visited, SLOT_BYTES)?;
    }
    Ok(())
}

/// Lists, tuples, dicts, namespaces and iterables; not strings, numbers or the dicts
/// made from JSON input (which hold only JSON data).
fn is_container(value: &Value) -> bool {
    matches!(
        value.kind(),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
    ) && value.downcast_object_ref::<super::data::PyDict>().is_none()
}

/// Queues the containers among `value`'s items; returns how many items it has.
fn push_children(
    state: &State,
    value: &Value,
    depth: usize,
    visited: usize,
    pending: &mut Vec<(Value, usize)>,
) -> Result<usize, Error> {
    let Ok(items) = value.try_iter() else {
        return Ok(0);
    };
    let is_map = value.kind() == ValueKind::Map;
    let mut count = 0;
    for item in items {
        count += 1;
        if count % 4096 == 0 {
            state.consume_fuel(2048)?;
            scope::reserve_items(Some(state), visited + count, SLOT_BYTES)?;
            if visited + count > MAX_STORED_ITEMS {
                return Err(too_many_items());
            }
        }
        // A map's keys can be containers too (`{[ns]: 1}` is a valid MiniJinja dict).
        if is_map {
            let child = value.get_item(&item).unwrap_or_default();
            if is_container(&child) {
                pending.push((child, depth + 1));
            }
        }
        if is_container(&item) {
            pending.push((item, depth + 1));
        }
    }
    Ok(count)
}

fn too_many_items() -> Error {
    refused(&format!(
        "value too large to keep in a variable (more than {MAX_STORED_ITEMS} items)"
    ))
}

fn refused(message: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, message.to_string())
}
