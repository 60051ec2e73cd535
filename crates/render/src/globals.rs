//! The globals transformers adds to the template environment: `raise_exception`,
//! `strftime_now`, Jinja2's `cycler` and `joiner`, plus the hidden helper behind
//! `{% generation %}` blocks. MiniJinja's
//! own `debug()` (which prints the engine's internal state) is removed: a template sees
//! only what transformers' environment has.

use jiff::civil::DateTime;
use minijinja::value::{Kwargs, Value};
use minijinja::{Error, ErrorKind, State};

/// The error detail prefix that marks an error raised by the template itself.
pub(crate) const RAISED_PREFIX: &str = "raise_exception: ";

/// Registers the globals (the generation helper under this template's name).
pub(crate) fn register(
    env: &mut minijinja::Environment<'static>,
    helpers: &super::helpers::Helpers,
) {
    env.remove_global("debug");
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    env.add_function(helpers.generation(), generation);
    // Jinja2's own globals (transformers adds none of these, Jinja2 has them all).
    env.add_function("cycler", cycler);
    env.add_function("joiner", minijinja_contrib::globals::joiner);
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

/// Python's `datetime.strftime` in the C locale, for a naive datetime: glibc's
/// directives, `%c`/`%x` in the C locale's layout, `%f` as microseconds, `%z`/`%Z` empty
/// (no time zone), unknown directives kept as written.
pub(crate) fn strftime(now: DateTime, format: &str) -> Result<String, Error> {
    let translated = c_locale_format(now, format);
    jiff::fmt::strtime::format(&translated, now).map_err(|err| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("strftime_now: invalid format {format:?}: {err}"),
        )
    })
}

/// The directives jiff formats as glibc does.
const JIFF_DIRECTIVES: &str = "aAbBCdDeGgHhIjklmMnpPrRSTtuUVwWXyY%";

/// `format` rewritten for jiff.
fn c_locale_format(now: DateTime, format: &str) -> String {
    let mut out = String::with_capacity(format.len() + 16);
    let mut chars = format.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let mut flags = String::new();
        while let Some(flag) = chars.next_if(|c| "-_0^#".contains(*c)) {
            flags.push(flag);
        }
        match chars.next() {
            Some('c') => out.push_str("%a %b %e %H:%M:%S %Y"),
            Some('x') => out.push_str("%m/%d/%y"),
            Some('f') => out.push_str(&format!("{:06}", now.subsec_nanosecond() / 1000)),
            Some('z' | 'Z') => {}
            Some(directive) if JIFF_DIRECTIVES.contains(directive) => {
                out.push('%');
                out.push_str(&flags);
                out.push(directive);
            }
            Some(other) => {
                out.push_str("%%");
                out.push_str(&flags);
                out.push(other);
            }
            None => out.push_str("%%"),
        }
    }
    out
}

/// Body of a `{% generation %}` block: transformers renders it as a call block whose
/// result is emitted unchanged (and whose `set`s stay inside it).
fn generation(state: &mut State, kwargs: Kwargs) -> Result<Value, Error> {
    super::scope::tick(Some(state))?;
    let caller: Value = kwargs.get("caller")?;
    kwargs.assert_all_used()?;
    let body = caller.call(state, &[])?;
    if let Some(text) = body.as_str() {
        super::generation::record(text);
    } else {
        super::generation::record(&body.to_string());
    }
    Ok(body)
}

/// Jinja2's `cycler(*items)`: `next()` returns the items in turn, `reset()` starts
/// over, `current` is the item `next()` returns next.
fn cycler(items: minijinja::value::Rest<Value>) -> Result<Value, Error> {
    if items.is_empty() {
        return Err(super::pyerror::raise(
            "RuntimeError",
            "at least one item has to be provided",
        ));
    }
    Ok(Value::from_object(Cycler {
        items: items.0,
        position: std::sync::atomic::AtomicUsize::new(0),
    }))
}

#[derive(Debug)]
struct Cycler {
    items: Vec<Value>,
    position: std::sync::atomic::AtomicUsize,
}

impl minijinja::value::Object for Cycler {
    fn repr(self: &std::sync::Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Plain
    }

    fn get_value(self: &std::sync::Arc<Self>, key: &Value) -> Option<Value> {
        let at = self.position.load(std::sync::atomic::Ordering::Relaxed);
        (key.as_str() == Some("current")).then(|| self.items[at].clone())
    }

    fn call_method(
        self: &std::sync::Arc<Self>,
        _state: &mut State<'_, '_>,
        method: &str,
        _args: &[Value],
    ) -> Result<Value, Error> {
        use std::sync::atomic::Ordering::Relaxed;
        let at = self.position.load(Relaxed);
        match method {
            "next" => {
                self.position.store((at + 1) % self.items.len(), Relaxed);
                Ok(self.items[at].clone())
            }
            "reset" => {
                self.position.store(0, Relaxed);
                Ok(Value::from(()))
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // CPython: datetime(2026, 1, 15).strftime("%d %b %Y %A %-d %B %H:%M") ==
    // "15 Jan 2026 Thursday 15 January 00:00"
    // CPython 3.11: datetime(2026, 1, 5).strftime("%c|%x|%f|%Z%z|%E|%-d") ==
    // "Mon Jan  5 00:00:00 2026|01/05/26|000000||%E|5"
    #[test]
    fn strftime_follows_the_c_locale() {
        let now = DateTime::constant(2026, 1, 5, 0, 0, 0, 0);
        assert_eq!(
            strftime(now, "%c|%x|%f|%Z%z|%E|%-d").unwrap(),
            "Mon Jan  5 00:00:00 2026|01/05/26|000000||%E|5"
        );
    }

    #[test]
    fn strftime_uses_c_locale_names() {
        let now = DateTime::constant(2026, 1, 15, 0, 0, 0, 0);
        assert_eq!(
            strftime(now, "%d %b %Y %A %-d %B %H:%M").unwrap(),
            "15 Jan 2026 Thursday 15 January 00:00"
        );
    }
}
