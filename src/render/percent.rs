//! Python's `'format' % args` string formatting, reached through [`super::rewrite`]
//! (MiniJinja's `%` is numeric only). The printf-style work is MiniJinja's own `format`
//! filter; this layer spreads a tuple into arguments and gives non-numeric values their
//! Python `str()` first, so `'%s' % true` is `True` as in Python.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, State};

use super::pyrepr::to_str;

/// The helper rewritten `'...' % x` expressions call.
pub const PERCENT_FORMAT: &str = "__chatplate_percent_format";

/// Registers the runtime helper.
pub fn register(env: &mut minijinja::Environment<'static>) {
    env.add_function(PERCENT_FORMAT, percent_format);
}

fn percent_format(state: &mut State, format: Value, args: Value) -> Result<Value, Error> {
    let mut call = vec![format];
    if args.is_tuple() {
        call.extend(args.try_iter()?.map(python_arg));
    } else {
        call.push(python_arg(args));
    }
    state.apply_filter("format", &call)
}

/// Numbers and strings as they are; everything else as Python's `str()` would show it.
fn python_arg(value: Value) -> Value {
    match value.kind() {
        ValueKind::Number | ValueKind::String => value,
        _ => Value::from(to_str(&value)),
    }
}
