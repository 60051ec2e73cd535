//! The globals transformers adds to the template environment: `raise_exception`,
//! `strftime_now`, plus the hidden helper behind `{% generation %}` blocks. MiniJinja's
//! own `debug()` (which prints the engine's internal state) is removed: a template sees
//! only what transformers' environment has.

use jiff::civil::DateTime;
use minijinja::value::{Kwargs, Value};
use minijinja::{Error, ErrorKind, State};

/// The error detail prefix that marks an error raised by the template itself.
pub const RAISED_PREFIX: &str = "raise_exception: ";

/// Registers the globals (the generation helper under this template's name).
pub fn register(env: &mut minijinja::Environment<'static>, helpers: &super::helpers::Helpers) {
    env.remove_global("debug");
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    env.add_function(helpers.generation(), generation);
}

/// `strftime_now(format)`: the render's clock, formatted like Python's `strftime`.
fn strftime_now(state: &State, format: String) -> Result<String, Error> {
    super::scope::tick(Some(state))?;
    let now = super::scope::clock().unwrap_or_else(|| jiff::Zoned::now().datetime());
    strftime(now, &format)
}

/// `raise_exception(message)`: fails the render with the template's own message.
fn raise_exception(state: &State, message: Value) -> Result<Value, Error> {
    let text = super::pyrepr::to_str_in(Some(state), &message)?;
    Err(Error::new(
        ErrorKind::InvalidOperation,
        format!("{RAISED_PREFIX}{text}"),
    ))
}

/// Python's `datetime.strftime` in the C locale.
pub fn strftime(now: DateTime, format: &str) -> Result<String, Error> {
    jiff::fmt::strtime::format(format, now).map_err(|err| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("strftime_now: invalid format {format:?}: {err}"),
        )
    })
}

/// Body of a `{% generation %}` block: transformers renders it as a call block whose
/// result is emitted unchanged (and whose `set`s stay inside it).
fn generation(state: &mut State, kwargs: Kwargs) -> Result<Value, Error> {
    super::scope::tick(Some(state))?;
    let caller: Value = kwargs.get("caller")?;
    kwargs.assert_all_used()?;
    caller.call(state, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    // CPython: datetime(2026, 1, 15).strftime("%d %b %Y %A %-d %B %H:%M") ==
    // "15 Jan 2026 Thursday 15 January 00:00"
    #[test]
    fn strftime_uses_c_locale_names() {
        let now = DateTime::constant(2026, 1, 15, 0, 0, 0, 0);
        assert_eq!(
            strftime(now, "%d %b %Y %A %-d %B %H:%M").unwrap(),
            "15 Jan 2026 Thursday 15 January 00:00"
        );
    }
}
