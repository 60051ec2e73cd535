//! The MiniJinja environment a template is compiled into: transformers' settings
//! (trim_blocks, lstrip_blocks, lenient undefined, no autoescape), Python's printing,
//! chatplate's filters, tests, methods and helpers, and none of MiniJinja's extras that
//! Jinja2 lacks. Also the output writer with its size cap.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use minijinja::{Environment, UndefinedBehavior};

use super::{
    appends, boundmethods, concat, equality, filters, generators, globals, groups, helpers,
    htmlfilters, humanize, listsum, loops, markup, membership, methods, percent, predicates,
    pyrepr, repeat, scans, scope, sized, slices, strmethods, textfilters, wordwrap, Limits,
};

/// MiniJinja's filters that Jinja2 does not have: a template must not see them.
const FILTERS_NOT_IN_JINJA2: [&str; 5] = ["split", "lines", "bool", "chain", "zip"];

/// A fresh environment for one template, its helpers registered under `helpers`.
pub(crate) fn build(limits: Limits, helpers: &helpers::Helpers) -> Environment<'static> {
    // Nearly every template gets the default helper names: its environment is a copy of
    // one built once (registering every function anew was a twentieth of a compile).
    static DEFAULT: OnceLock<Environment<'static>> = OnceLock::new();
    let default = helpers::Helpers::default();
    let mut env = if *helpers == default {
        DEFAULT.get_or_init(|| configured(&default)).clone()
    } else {
        configured(helpers)
    };
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env
}

/// Everything but the limits: transformers' settings, Python's printing, the filters,
/// tests, methods and helpers.
fn configured(helpers: &helpers::Helpers) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(super::syntax_config());
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    // Off even in debug builds (MiniJinja's default follows them): it records output
    // spans and undefined origins on every render. Failed renders turn it on for a
    // second run (see `CompiledTemplate::render_error`).
    env.set_debug(false);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_formatter(|out, state, value| {
        // Strings are written as they are; everything else the way Python's str() prints.
        // Every `{{ }}` is a checkpoint where a stopped render ends: a string's is the
        // write itself (`LimitedWriter` checks), anything else checks before printing.
        match value.as_str() {
            Some(text) if value.kind() == minijinja::value::ValueKind::String => {
                out.write_str(text)?;
            }
            _ if value.is_undefined() => scope::tick(Some(state))?,
            _ => {
                scope::tick(Some(state))?;
                out.write_str(&pyrepr::to_str_in(Some(state), value)?)?;
            }
        }
        Ok(())
    });
    env.set_unknown_method_callback(methods::call_method);
    for name in FILTERS_NOT_IN_JINJA2 {
        env.remove_filter(name);
    }
    filters::register(&mut env);
    generators::register(&mut env);
    textfilters::register(&mut env);
    sized::register(&mut env);
    listsum::register(&mut env);
    predicates::register(&mut env);
    globals::register(&mut env, helpers);
    markup::register(&mut env, helpers);
    percent::register(&mut env, helpers);
    loops::register(&mut env, helpers);
    slices::register(&mut env, helpers);
    scans::register(&mut env, helpers);
    membership::register(&mut env, helpers);
    concat::register(&mut env, helpers);
    appends::register(&mut env, helpers);
    equality::register(&mut env, helpers);
    repeat::register(&mut env, helpers);
    strmethods::register(&mut env);
    groups::register(&mut env);
    htmlfilters::register(&mut env);
    humanize::register(&mut env);
    wordwrap::register(&mut env);
    boundmethods::register(&mut env, helpers);
    env
}

/// An `io::Write` that refuses to grow past a byte budget.
pub(crate) struct LimitedWriter {
    /// What was written.
    pub buffer: Vec<u8>,
    budget: usize,
    /// A traced render's output length, published after every write.
    written: Option<Arc<AtomicUsize>>,
}

impl LimitedWriter {
    /// A writer refusing to grow past `budget` bytes.
    pub(crate) fn new(budget: usize) -> Self {
        LimitedWriter {
            buffer: Vec::new(),
            budget,
            written: None,
        }
    }

    /// The same writer, with room for `bytes` of output to start with (no more than
    /// the budget).
    pub(crate) fn with_room(mut self, bytes: usize) -> Self {
        self.buffer.reserve_exact(bytes.min(self.budget));
        self
    }

    /// The same writer, publishing its length to `written` (a traced render's).
    pub(crate) fn publishing(mut self, written: Option<Arc<AtomicUsize>>) -> Self {
        self.written = written;
        self
    }
}

impl io::Write for LimitedWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.buffer.len() + bytes.len() > self.budget {
            return Err(io::Error::other("output limit"));
        }
        // A checkpoint: a stopped render ends at its next output.
        scope::tick(None).map_err(|_| io::Error::other("render stopped"))?;
        self.buffer.extend_from_slice(bytes);
        if let Some(written) = &self.written {
            written.store(self.buffer.len(), Ordering::Relaxed);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_of_the_shared_environment_keep_their_own_limits() {
        let default = helpers::Helpers::default();
        let small = build(Limits::default().with_fuel(10).with_recursion(3), &default);
        let large = build(Limits::default().with_fuel(99).with_recursion(7), &default);
        assert_eq!((small.fuel(), small.recursion_limit()), (Some(10), 3));
        assert_eq!((large.fuel(), large.recursion_limit()), (Some(99), 7));
    }

    #[test]
    fn other_helper_names_get_an_environment_of_their_own() {
        let globals = |env: &Environment| -> Vec<String> {
            let mut names: Vec<String> = env.globals().map(|(name, _)| name.into()).collect();
            names.sort();
            names
        };
        let shared = build(Limits::default(), &helpers::Helpers::default());
        let crafted = helpers::Helpers::for_source("{{ __c_x }}");
        let own = build(Limits::default(), &crafted);
        let generation = crafted.generation();
        assert!(globals(&own).contains(&generation), "{generation}");
        assert!(!globals(&shared).contains(&generation));
        assert_eq!(globals(&shared).len(), globals(&own).len());
    }
}
