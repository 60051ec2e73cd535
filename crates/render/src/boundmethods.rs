//! Dict methods looked up without being called, as Jinja2 finds them.
//!
//! In Jinja2, `d.items` is the bound method `dict.items` even when `d` has a key
//! `items` (attribute lookup comes first), and `d['items']` falls back to that method
//! when the key is missing. JSON schemas have `items`, `keys` and `values` properties,
//! so templates meet this: `{% if param['items'] is defined %}` is true for an array
//! schema without `items` in transformers. MiniJinja has one lookup for both forms and
//! answers with the key or undefined.
//!
//! The rewrite sends `x.<dict method>` (not called) and `x['<dict method>']` through
//! the helpers here. On a dict, safe methods come back as a [`BoundMethod`] (truthy,
//! defined, callable, printed like Python's); the methods the immutable sandbox refuses
//! (`pop`, `update`, ...) come back undefined. Anything that is not a dict (a
//! namespace, a loop, a string) is looked up as before. Calls (`d.items()`) are left
//! alone.

use std::fmt;
use std::sync::Arc;

use minijinja::machinery::ast::Expr;
use minijinja::value::{Object, ObjectRepr, Value};
use minijinja::{Error, ErrorKind, State};

/// Which lookup a dict-method rewrite replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// `x.name`, not called.
    Attr,
    /// `x['name']`.
    Item,
}

/// Dict methods the immutable sandbox lets templates use.
const SAFE: [&str; 6] = ["copy", "fromkeys", "get", "items", "keys", "values"];
/// Dict methods it refuses (they modify the dict).
const UNSAFE: [&str; 5] = ["clear", "pop", "popitem", "setdefault", "update"];

/// Registers the helpers under this template's names for them.
pub(crate) fn register(
    env: &mut minijinja::Environment<'static>,
    helpers: &super::helpers::Helpers,
) {
    env.add_filter(helpers.dict_attr(), |base: Value, name: String| {
        attr(base, &name)
    });
    env.add_filter(helpers.dict_item(), |base: Value, name: String| {
        item(base, &name)
    });
}

/// The lookup to rewrite: `(base, helper, method name)` for `x.items` (not called) and
/// `x['items']`.
pub(crate) fn dict_lookup<'e, 'a>(expr: &'e Expr<'a>) -> Option<(&'e Expr<'a>, Lookup, String)> {
    match expr {
        Expr::GetAttr(g) if SAFE.contains(&g.name) || UNSAFE.contains(&g.name) => {
            Some((&g.expr, Lookup::Attr, g.name.to_string()))
        }
        Expr::GetItem(g) => match &g.subscript_expr {
            Expr::Const(c) => {
                let name = c.value.as_str()?;
                SAFE.contains(&name)
                    .then(|| (&g.expr, Lookup::Item, name.to_string()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// A dict: the conversation's own dicts and the ones templates build.
fn is_dict(value: &Value) -> bool {
    value.downcast_object_ref::<super::data::PyDict>().is_some()
        || value
            .downcast_object_ref::<indexmap::IndexMap<Value, Value>>()
            .is_some()
}

fn method(base: &Value, name: &str) -> Value {
    match SAFE.iter().find(|safe| **safe == name) {
        Some(name) => Value::from_object(BoundMethod {
            receiver: base.clone(),
            name,
        }),
        None => Value::UNDEFINED,
    }
}

/// `x.name`: the method on a dict, the ordinary lookup elsewhere.
fn attr(base: Value, name: &str) -> Result<Value, Error> {
    if is_dict(&base) {
        return Ok(method(&base, name));
    }
    if base.is_undefined() {
        return Err(Error::from(ErrorKind::UndefinedError));
    }
    Ok(base.get_attr(name).unwrap_or(Value::UNDEFINED))
}

/// `x['name']`: the key, else (on a dict) the method.
fn item(base: Value, name: &str) -> Result<Value, Error> {
    if base.is_undefined() {
        return Err(Error::from(ErrorKind::UndefinedError));
    }
    let found = base
        .get_item(&Value::from(name))
        .unwrap_or(Value::UNDEFINED);
    Ok(if found.is_undefined() && is_dict(&base) {
        method(&base, name)
    } else {
        found
    })
}

/// A dict method bound to its dict.
#[derive(Debug)]
pub(crate) struct BoundMethod {
    receiver: Value,
    name: &'static str,
}

impl Object for BoundMethod {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn call(self: &Arc<Self>, state: &mut State<'_, '_>, args: &[Value]) -> Result<Value, Error> {
        super::methods::call_method(state, &self.receiver, self.name, args)
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let address = self
            .receiver
            .as_object()
            .map_or(0, |o| std::ptr::from_ref(o).cast::<()>() as usize);
        write!(
            f,
            "<built-in method {} of dict object at {address:#x}>",
            self.name
        )
    }
}

/// Whether `value` is a bound dict method (Python's `builtin_function_or_method`).
pub(crate) fn is_bound_method(value: &Value) -> bool {
    value.downcast_object_ref::<BoundMethod>().is_some()
}
