//! How the command line words what the engine asks the user to change: its flags (the
//! engine names the setting, see `chatplate_render::remedy`). The app runs in the same
//! process, so its messages use these words too.

use chatplate_render::remedy::{self, Knob};

/// Installs the command line's wording for this process.
pub(crate) fn install() {
    remedy::set_wording(flag);
}

/// The flag (or setting) that changes `knob`.
fn flag(knob: Knob) -> &'static str {
    match knob {
        Knob::Fuel => "--fuel",
        Knob::MaxOutput => "--max-output",
        Knob::MaxMemory => "--max-memory",
        Knob::Deadline => "--deadline",
        Knob::Bless => "--bless",
        Knob::Template => "--template",
        Knob::TemplateRoot => "--template-root or in the config file's \"template_roots\"",
        Knob::LlamaServer => "--engine",
        Knob::Python => "--python",
        Knob::Variable => "--var",
        Knob::ParseArguments => "--parse-arguments",
        // A setting added to the engine before the command line has a flag for it.
        other => other.library_name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_has_its_flag() {
        assert_eq!(flag(Knob::Deadline), "--deadline");
        assert_eq!(flag(Knob::Bless), "--bless");
    }
}
