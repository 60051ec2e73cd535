//! Embeds every `templates/*.jinja` into the binary, so `cargo install` users get the
//! bundled templates without the source tree.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.retain(|p| p.extension().is_some_and(|e| e == "jinja"));
    entries.sort();
    let mut code = String::from(
        "/// Bundled templates: (file stem, source).\npub(crate) const BUNDLED: &[(&str, &str)] = &[\n",
    );
    for path in entries {
        let stem = path.file_stem().unwrap().to_string_lossy();
        writeln!(
            code,
            "    ({stem:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    code.push_str("];\n");
    // Each template's `response_template`, from `NAME.response_template.json` beside it.
    code.push_str(
        "/// Bundled response_templates: (template stem, JSON text).\npub(crate) const BUNDLED_SCHEMAS: &[(&str, &str)] = &[\n",
    );
    let mut schemas: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    schemas.retain(|p| p.to_string_lossy().ends_with(".response_template.json"));
    schemas.sort();
    for path in schemas {
        let name = path.file_name().unwrap().to_string_lossy();
        let stem = name.trim_end_matches(".response_template.json");
        writeln!(
            code,
            "    ({stem:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("bundled_templates.rs");
    std::fs::write(out, code).unwrap();
}
