//! docs/keys.md's key table is the keymap's: between its two marker comments it holds
//! exactly the table built here from `keymap::BINDINGS`, one row per binding (keys, help
//! text and the name the config file overrides it by), under one heading per scope in
//! help order. When the keymap changes, regenerate it:
//! `CHATPLATE_BLESS_DOCS=1 cargo test --test app key_docs`.

#![cfg(feature = "tui")]

use std::path::{Path, PathBuf};

use chatplate::tui::keymap::{help_sections, Binding, Scope, BINDINGS};

/// The comment before the generated table.
const BEGIN: &str = "<!-- The key table below is generated from the keymap (src/tui/keymap.rs): \
                     CHATPLATE_BLESS_DOCS=1 cargo test --test app key_docs rewrites it. -->\n";
/// The comment after it.
const END: &str = "<!-- End of the generated key table. -->\n";

#[test]
fn the_key_docs_table_is_the_keymap() {
    let path = keys_page();
    let docs = std::fs::read_to_string(&path).expect("docs/keys.md is readable");
    let (start, end) = table_span(&docs);
    let table = key_table();
    if docs[start..end] == table {
        return;
    }
    if std::env::var_os("CHATPLATE_BLESS_DOCS").is_some() {
        let blessed = format!("{}{table}{}", &docs[..start], &docs[end..]);
        std::fs::write(&path, blessed).expect("docs/keys.md is writable");
        return;
    }
    panic!(
        "docs/keys.md's key table is not the keymap's; first difference:\n{}\n\
         Regenerate it with CHATPLATE_BLESS_DOCS=1 cargo test --test app key_docs",
        first_difference(&docs[start..end], &table)
    );
}

/// The table's rows are the `?` help's: the same keys and text, scope by scope.
#[test]
fn the_generated_rows_are_the_help_rows() {
    let from_help: Vec<(String, &str)> = help_sections()
        .into_iter()
        .flat_map(|(_, rows)| rows)
        .collect();
    let from_table: Vec<(String, &str)> = Scope::ALL
        .iter()
        .flat_map(|&scope| rows_of(scope))
        .map(|binding| (labels(binding).join(" "), binding.help))
        .collect();
    assert_eq!(from_help, from_table);
}

fn keys_page() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/keys.md")
}

/// The byte range between the end of [`BEGIN`] and the start of [`END`].
fn table_span(docs: &str) -> (usize, usize) {
    let start = docs
        .find(BEGIN)
        .expect("docs/keys.md has the BEGIN comment")
        + BEGIN.len();
    let end = start
        + docs[start..]
            .find(END)
            .expect("docs/keys.md has the END comment after BEGIN");
    (start, end)
}

/// The Markdown table: a heading row per scope (its help title and config name), then
/// its bindings in table order.
fn key_table() -> String {
    let mut table = String::from("| Keys | What it does | Config name |\n|---|---|---|\n");
    for scope in Scope::ALL {
        table.push_str(&format!(
            "| **{}** (`{}`) | | |\n",
            scope.title(),
            scope_name(scope)
        ));
        for binding in rows_of(scope) {
            let keys: Vec<String> = labels(binding).iter().map(|k| format!("`{k}`")).collect();
            let name = config_name(binding).map_or(String::new(), |n| format!("`{n}`"));
            table.push_str(&format!(
                "| {} | {} | {name} |\n",
                keys.join(" "),
                binding.help.replace('|', "\\|")
            ));
        }
    }
    table
}

fn rows_of(scope: Scope) -> impl Iterator<Item = &'static Binding> {
    BINDINGS.iter().filter(move |b| b.scope == scope)
}

fn labels(binding: &Binding) -> Vec<String> {
    binding.keys.iter().map(|k| k.label()).collect()
}

/// The scope's name in the config file (`messages` in `messages.edit`): its variant's
/// name in lower case.
fn scope_name(scope: Scope) -> String {
    format!("{scope:?}").to_lowercase()
}

/// The name the config file's `keys` section gives the row: its hint in lower case,
/// spaces as `-`, without `$`; with the scope first (`fields.undo`) when another row has
/// the same hint. Rows without a hint have none.
fn config_name(binding: &Binding) -> Option<String> {
    let hint = |b: &Binding| {
        b.hint
            .trim_start_matches('$')
            .to_lowercase()
            .replace(' ', "-")
    };
    if binding.hint.is_empty() {
        return None;
    }
    let name = hint(binding);
    let shared = BINDINGS
        .iter()
        .filter(|b| !b.hint.is_empty() && hint(b) == name)
        .count();
    Some(if shared == 1 {
        name
    } else {
        format!("{}.{name}", scope_name(binding.scope))
    })
}

fn first_difference(docs: &str, table: &str) -> String {
    let mut docs_lines = docs.lines();
    for (number, line) in table.lines().enumerate() {
        match docs_lines.next() {
            Some(found) if found == line => continue,
            found => {
                return format!(
                    "table line {}:\n  docs:   {}\n  keymap: {line}",
                    number + 1,
                    found.unwrap_or("(end of the table)")
                )
            }
        }
    }
    format!(
        "the docs go on after the keymap's rows: {}",
        docs_lines.next().unwrap_or("")
    )
}
