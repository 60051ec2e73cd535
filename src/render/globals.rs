//! The globals transformers adds to the template environment: `raise_exception`,
//! `strftime_now`, plus the hidden helper behind `{% generation %}` blocks.

use jiff::civil::DateTime;
use minijinja::value::{Kwargs, Value};
use minijinja::{Error, ErrorKind, State};

/// The error detail prefix that marks an error raised by the template itself.
pub const RAISED_PREFIX: &str = "raise_exception: ";

/// Name of the function `{% generation %}` blocks are rewritten to call.
pub const GENERATION_HELPER: &str = "__chatplate_generation";

/// Context variable carrying the render's clock (`YYYY-MM-DDTHH:MM:SS`) to `strftime_now`.
pub const CLOCK_VARIABLE: &str = "__chatplate_now";

/// Registers the globals.
pub fn register(env: &mut minijinja::Environment<'static>) {
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    env.add_function(GENERATION_HELPER, generation);
}

/// `strftime_now(format)`: the render's clock, formatted like Python's `strftime`.
fn strftime_now(state: &State, format: String) -> Result<String, Error> {
    let now = state
        .lookup(CLOCK_VARIABLE)
        .and_then(|v| v.as_str().and_then(|text| text.parse::<DateTime>().ok()))
        .unwrap_or_else(|| jiff::Zoned::now().datetime());
    strftime(now, &format)
}

/// `raise_exception(message)`: fails the render with the template's own message.
fn raise_exception(message: Value) -> Result<Value, Error> {
    Err(Error::new(
        ErrorKind::InvalidOperation,
        format!("{RAISED_PREFIX}{}", super::pyrepr::to_str(&message)),
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
