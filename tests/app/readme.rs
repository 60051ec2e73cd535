//! README.md documents every key binding: each key of every binding in the one keymap
//! table appears, in backticks, in the README's key table.

#![cfg(feature = "tui")]

use chatplate::tui::keymap::help_sections;

#[test]
fn readme_lists_every_key_binding() {
    let readme = include_str!("../../README.md");
    let table_start = readme
        .find("## Key bindings")
        .expect("README has a key table");
    let table = &readme[table_start..];
    let mut missing = Vec::new();
    for (section, rows) in help_sections() {
        for (keys, help) in rows {
            for key in keys.split(' ') {
                if !table.contains(&format!("`{key}`")) {
                    missing.push(format!("{section}: `{key}` ({help})"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "README key table lacks:\n{}",
        missing.join("\n")
    );
}
