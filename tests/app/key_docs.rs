//! docs/keys.md documents every key binding: each key of every binding in the one keymap
//! table appears, in backticks, in its key table.

#![cfg(feature = "tui")]

use chatplate::tui::keymap::help_sections;

#[test]
fn the_key_docs_list_every_key_binding() {
    let docs = include_str!("../../docs/keys.md");
    let table_start = docs
        .find("## Key bindings")
        .expect("docs/keys.md has a key table");
    let table = &docs[table_start..];
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
        "docs/keys.md key table lacks:\n{}",
        missing.join("\n")
    );
}
