//! `sandbox-escape`: a template that reaches for Python's internals (`__class__`,
//! `__globals__`, `__init__`, `__subclasses__`, `mro`, `cycler.__init__.__globals__`)
//! is the pattern of server-side template injection through a poisoned chat template
//! (CVE-2026-5760: remote code execution through a GGUF's `chat_template`). No chat
//! template needs it, so it is always an error, found in the template's tokens without
//! rendering it (rendering a hostile template is what must not happen).

use std::collections::BTreeMap;

use super::syntax::Scan;
use super::{Finding, Location, Rule};

/// One finding per source line that reaches for internals.
pub(crate) fn check(scan: &Scan) -> Vec<Finding> {
    let mut lines: BTreeMap<usize, (Location, Vec<String>)> = BTreeMap::new();
    for escape in scan.escapes() {
        let entry = lines
            .entry(escape.location.line)
            .or_insert_with(|| (escape.location, Vec::new()));
        if !entry.1.contains(&escape.name) {
            entry.1.push(escape.name);
        }
    }
    lines
        .into_values()
        .map(|(location, names)| {
            let names: Vec<String> = names
                .iter()
                .map(|n| serde_json::to_string(n).unwrap_or_default())
                .collect();
            Finding::new(
                Rule::SandboxEscape,
                format!(
                    "reaches for Python internals through {}: the pattern of server-side \
                     template injection (CVE-2026-5760); Jinja2's sandbox refuses it, an \
                     engine without one runs it (the template was not rendered, so no other \
                     rule ran)",
                    names.join(", ")
                ),
            )
            .at(Some(location))
        })
        .collect()
}
