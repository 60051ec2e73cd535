//! How a user changes what a message tells them to change: a bound that stopped a render,
//! or an option of the front end. The engine names the setting ([`Knob`]) and words the
//! rest of the message; the front end, which knows its own flags and settings, words how
//! the user reaches it ([`set_wording`]). A library user who installs nothing reads the
//! library's own names (`Limits::deadline`, ...).

use std::sync::OnceLock;

/// A setting a message may tell the user to change. More may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Knob {
    /// The base step budget ([`Limits::fuel`](crate::Limits::fuel)).
    Fuel,
    /// The largest prompt ([`Limits::max_output_bytes`](crate::Limits::max_output_bytes)).
    MaxOutput,
    /// The memory budget ([`Limits::max_memory_bytes`](crate::Limits::max_memory_bytes)).
    MaxMemory,
    /// The base wall-clock bound ([`Limits::deadline`](crate::Limits::deadline)).
    Deadline,
    /// Rewriting a fixture's `expected` from the current render.
    Bless,
    /// Choosing the template to render with.
    Template,
    /// Allowing a folder a session's template may be read from.
    TemplateRoot,
    /// Naming a llama-server to compare with.
    LlamaServer,
    /// Naming the Python interpreter that runs transformers.
    Python,
    /// Passing a template variable.
    Variable,
    /// Parsing tool-call arguments given as JSON strings on import.
    ParseArguments,
}

impl Knob {
    /// The library's own name for the setting: what a library user changes.
    pub fn library_name(self) -> &'static str {
        match self {
            Knob::Fuel => "Limits::fuel",
            Knob::MaxOutput => "Limits::max_output_bytes",
            Knob::MaxMemory => "Limits::max_memory_bytes",
            Knob::Deadline => "Limits::deadline",
            Knob::Bless => "CheckOptions::bless",
            Knob::Template => "TemplateRef",
            Knob::TemplateRoot => "TemplateAccess",
            Knob::LlamaServer => "EngineSetup::llama_server",
            Knob::Python => "EngineSetup::python",
            Knob::Variable => "Conversation::variables",
            Knob::ParseArguments => "ImportOptions::parse_arguments",
        }
    }
}

/// How the front end words reaching a setting (a flag, a config key).
pub type Wording = fn(Knob) -> &'static str;

static WORDING: OnceLock<Wording> = OnceLock::new();

/// Installs the front end's wording for the whole process, before its first render.
/// Only the first call counts: one process has one front end.
pub fn set_wording(wording: Wording) {
    let _ = WORDING.set(wording);
}

/// How the user reaches `knob`: the front end's words, else [`Knob::library_name`].
pub fn means(knob: Knob) -> &'static str {
    WORDING
        .get()
        .map_or_else(|| knob.library_name(), |wording| wording(knob))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_front_end_the_library_names_the_setting() {
        // No test in this crate installs a wording.
        assert_eq!(means(Knob::Deadline), "Limits::deadline");
        assert_eq!(means(Knob::Fuel), Knob::Fuel.library_name());
    }
}
