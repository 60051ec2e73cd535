//! Python's `'format' % args` string formatting, reached through [`super::rewrite`]
//! (MiniJinja's `%` is numeric only). The printf-style work is MiniJinja's own `format`
//! filter; this layer spreads a tuple into arguments and gives non-numeric values their
//! Python `str()` first, so `'%s' % true` is `True` as in Python.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, State};

use super::pyrepr::to_str_in;

/// Registers the runtime helper under this template's name for it.
pub fn register(env: &mut minijinja::Environment<'static>, helpers: &super::helpers::Helpers) {
    env.add_function(helpers.percent_format(), percent_format);
}

fn percent_format(state: &mut State, format: Value, args: Value) -> Result<Value, Error> {
    super::scope::tick(Some(state))?;
    let mut call = vec![format];
    if args.is_tuple() {
        for arg in args.try_iter()? {
            call.push(python_arg(state, arg)?);
        }
    } else {
        call.push(python_arg(state, args)?);
    }
    super::sized::check_format(state, &call)?;
    state.apply_filter("format", &call)
}

/// Numbers and strings as they are; everything else as Python's `str()` would show it.
fn python_arg(state: &State, value: Value) -> Result<Value, Error> {
    Ok(match value.kind() {
        ValueKind::Number | ValueKind::String => value,
        _ => Value::from(to_str_in(Some(state), &value)?),
    })
}
