//! The user's config file: key overrides and colours (and the template roots every
//! command reads, [`crate::template_roots`]).
//!
//! It is JSON (`config.json` in the platform's config directory, see [`path`]), read with
//! the serde_json chatplate already uses for sessions, so its problems come with a line
//! and column like a session's, an unusable entry's too ([`crate::config_file`]). A key is named as the key table names it in the footer: the
//! row's hint, with its scope in front when several scopes use the same hint
//! (`"save"`, `"messages.edit"`). A bad file is reported and the app starts with what
//! could be used of it (defaults for the rest).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chatplate_core::files;
use chatplate_render::visible;
use crossterm::event::{KeyCode, KeyModifiers};
use ratatui::style::Color;
use serde::Deserialize;

use crate::tui::keymap::Binding;

use crate::tui::keymap::Chord;

use crate::tui::keymap::Scope;

use crate::tui::keymap::BINDINGS;
use crate::tui::theme::Palette;

/// Points at another config file (tests, or several setups).
pub use crate::template_roots::CONFIG_ENV;

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Key name → key or list of keys (`"ctrl+s"`, `["ctrl+q", "f10"]`).
    #[serde(default)]
    pub keys: BTreeMap<String, KeyList>,
    /// Palette name → colour name (`"user": "light-blue"`).
    #[serde(default)]
    pub colors: BTreeMap<String, String>,
    /// `"mouse": false` leaves the mouse to the terminal (see `terminal::mouse`).
    #[serde(default)]
    pub mouse: Option<bool>,
}

/// One key or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum KeyList {
    /// `"ctrl+s"`.
    One(String),
    /// `["ctrl+q", "f10"]`.
    Many(Vec<String>),
}

/// What the app starts with: the key table, the palette, and what was wrong.
#[derive(Debug)]
pub struct Settings {
    /// The default table with the overrides applied.
    pub bindings: Vec<Binding>,
    /// The colours.
    pub palette: Palette,
    /// Whether the app takes the mouse (clicks and the wheel); on unless turned off.
    pub mouse: bool,
    /// One line per problem, `FILE:LINE:COL: ...` or `FILE: ...`.
    pub problems: Vec<String>,
}

/// The config file (see [`crate::template_roots::config_path`]).
pub fn path() -> Option<PathBuf> {
    crate::template_roots::config_path()
}

/// Reads the config file; no file means the defaults, without a problem. The file is read
/// as strangers' files are (a regular file of at most
/// [`files::MAX_APP_CONFIG_BYTES`]), so a FIFO or a device in its place is reported at
/// once instead of hanging the start.
pub fn load() -> Settings {
    let Some(path) = path() else {
        return defaults(&[]);
    };
    match files::read_optional_text(&path, files::MAX_APP_CONFIG_BYTES) {
        Ok(Some(text)) => from_text(&text, &path),
        Ok(None) => defaults(&[]),
        Err(err) => defaults(&[format!(
            "{} (using the defaults)",
            visible::message(&err.to_string())
        )]),
    }
}

/// The settings `text` (the file at `path`) makes. A syntax error keeps the defaults; a
/// wrongly typed entry is reported and only that entry is dropped. Each problem says
/// where it is: `FILE:LINE:COL: ...` (see [`crate::config_file`]).
pub fn from_text(text: &str, path: &Path) -> Settings {
    let config = match crate::config_file::parse(text, path) {
        Ok(config) => config,
        Err(problem) => {
            let problem = format!("{problem} (using the defaults)");
            return defaults(&[problem]);
        }
    };
    let (file, mut problems) = entries(config);
    let (mut found, more) = applied(file);
    problems.extend(more);
    found.problems = problems
        .into_iter()
        .map(|problem| {
            let at: Vec<&str> = problem.at.iter().map(String::as_str).collect();
            crate::config_file::problem(path, text, &at, &problem.message)
        })
        .collect();
    found
}

/// A problem with an entry of the file, and the keys that lead to its value.
struct Problem {
    at: Vec<String>,
    message: String,
}

impl Problem {
    fn at(keys: &[&str], message: String) -> Self {
        Problem {
            at: keys.iter().map(ToString::to_string).collect(),
            message,
        }
    }
}

/// The entries of a parsed file, each taken on its own: one of the wrong type or an
/// unknown name is a problem, and the rest still apply.
fn entries(top: serde_json::Map<String, serde_json::Value>) -> (ConfigFile, Vec<Problem>) {
    let mut file = ConfigFile::default();
    let mut problems = Vec::new();
    for (section, value) in top {
        let at = |message: String| Problem::at(&[section.as_str()], message);
        let entries = match (section.as_str(), value) {
            // Every command reads these (crate::template_roots); the app only checks them.
            ("template_roots", value) => {
                if !crate::template_roots::is_list(&value) {
                    problems.push(at(format!(
                        "{section}: expected a list of folders (none used)"
                    )));
                }
                continue;
            }
            // Read by every command (crate::hub_token); the app only checks it.
            ("hub_token_for_fixtures", value) => {
                if !value.is_boolean() {
                    problems.push(at(format!("{section}: expected true or false (off)")));
                }
                continue;
            }
            // Read by compare and check (crate::engines_config); the app only checks it.
            ("engines", value) => {
                if !crate::engines_config::is_table(&value) {
                    problems.push(at(format!(
                        "{section}: expected an object of names and `cmd:` commands (none used)"
                    )));
                }
                continue;
            }
            // `chatplate lint` and the Templates pane's lint read it (crate::lint_config).
            (chatplate_core::lint::CONFIG_SECTION, value) => {
                if let Err(problem) = chatplate_core::lint::Policy::from_config(&value) {
                    problems.push(at(format!("{problem} (the defaults used)")));
                }
                continue;
            }
            ("mouse", serde_json::Value::Bool(on)) => {
                file.mouse = Some(on);
                continue;
            }
            ("mouse", _) => {
                problems.push(at(format!(
                    "{section}: expected true or false (default kept)"
                )));
                continue;
            }
            ("keys" | "colors", serde_json::Value::Object(entries)) => entries,
            ("keys" | "colors", _) => {
                problems.push(at(format!("{section}: expected an object (default kept)")));
                continue;
            }
            _ => {
                problems.push(at(format!(
                    "unknown section {} (expected \"keys\", \"colors\", \"mouse\", \"lint\", \"template_roots\", \"hub_token_for_fixtures\" or \"engines\"; ignored)",
                    visible::quoted(&section)
                )));
                continue;
            }
        };
        for (name, value) in entries {
            let shown = visible::quoted(&name);
            let at = |message: String| Problem::at(&[section.as_str(), name.as_str()], message);
            if section == "keys" {
                match KeyList::deserialize(value) {
                    Ok(keys) => drop(file.keys.insert(name, keys)),
                    Err(_) => problems.push(at(format!(
                        "keys.{shown}: expected a key or a list of keys (default kept)"
                    ))),
                }
            } else {
                match value {
                    serde_json::Value::String(colour) => drop(file.colors.insert(name, colour)),
                    _ => problems.push(at(format!(
                        "colors.{shown}: expected a colour name (default kept)"
                    ))),
                }
            }
        }
    }
    (file, problems)
}

/// The default settings, with `problems`.
fn defaults(problems: &[String]) -> Settings {
    let (mut found, _) = applied(ConfigFile::default());
    found.problems = problems.to_vec();
    found
}

/// The settings `file` makes, and what of it could not be used.
fn applied(file: ConfigFile) -> (Settings, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut bindings = BINDINGS.to_vec();
    for (name, keys) in &file.keys {
        if let Err(problem) = override_keys(&mut bindings, name, keys) {
            problems.push(Problem::at(&["keys", name], problem));
        }
    }
    let mut palette = Palette::default();
    for (name, value) in &file.colors {
        if let Err(problem) = set_color(&mut palette, name, value) {
            problems.push(Problem::at(&["colors", name], problem));
        }
    }
    let settings = Settings {
        bindings,
        palette,
        mouse: file.mouse.unwrap_or(true),
        problems: Vec::new(),
    };
    (settings, problems)
}

/// The config name of a scope: `scope.hint` names a row.
pub fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Global => "global",
        Scope::Everywhere => "everywhere",
        Scope::Browse => "browse",
        Scope::Templates => "templates",
        Scope::Filter => "filter",
        Scope::Messages => "messages",
        Scope::Range => "range",
        Scope::Fields => "fields",
        Scope::Editor => "editor",
        Scope::Prompt => "prompt",
        Scope::Help => "help",
        Scope::Confirm => "confirm",
        Scope::Conflict => "conflict",
        Scope::Input => "input",
        Scope::Picker => "picker",
        Scope::Log => "log",
    }
}

/// A row's hint as a name: lower case, spaces as `-`, no `$` (`go to` → `go-to`).
pub fn hint_name(hint: &str) -> String {
    hint.trim_start_matches('$')
        .to_lowercase()
        .replace(' ', "-")
}

/// The index of the row `name` means: `scope.hint`, or a hint only one row has.
fn find_row(bindings: &[Binding], name: &str) -> Result<usize, String> {
    let matches = |b: &Binding| {
        let hint = hint_name(b.hint);
        !b.hint.is_empty() && (hint == name || format!("{}.{hint}", scope_name(b.scope)) == name)
    };
    let found: Vec<usize> = (0..bindings.len())
        .filter(|&i| matches(&bindings[i]))
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("no key named {name:?} (names are the footer's hints, e.g. \"save\", \"messages.edit\")")),
        several => {
            let names: Vec<String> = several
                .iter()
                .map(|&i| format!("{}.{name}", scope_name(bindings[i].scope)))
                .collect();
            Err(format!("{name:?} is in several scopes: say which ({})", names.join(", ")))
        }
    }
}

fn override_keys(bindings: &mut [Binding], name: &str, keys: &KeyList) -> Result<(), String> {
    let row = find_row(bindings, name)?;
    let texts = match keys {
        KeyList::One(key) => std::slice::from_ref(key),
        KeyList::Many(keys) => keys.as_slice(),
    };
    let chords = texts
        .iter()
        .map(|text| {
            parse_chord(text).ok_or_else(|| {
                format!("keys.{name}: {text:?} is not a key like \"ctrl+s\", \"f2\", \"x\"")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if chords.is_empty() {
        return Err(format!("keys.{name}: no key given"));
    }
    // The new keys leave the rows of the same scope that had them, so they mean this.
    let scope = bindings[row].scope;
    for other in bindings.iter_mut().filter(|b| b.scope == scope) {
        let kept: Vec<Chord> = other
            .keys
            .iter()
            .copied()
            .filter(|k| !chords.contains(k))
            .collect();
        if kept.len() != other.keys.len() {
            other.keys = Box::leak(kept.into_boxed_slice());
        }
    }
    bindings[row].keys = Box::leak(chords.into_boxed_slice());
    Ok(())
}

/// `"ctrl+s"`, `"alt+x"`, `"shift+up"`, `"f2"`, `"enter"`, `"G"`: the key it names.
pub fn parse_chord(text: &str) -> Option<Chord> {
    let mut mods = KeyModifiers::NONE;
    let mut rest = text;
    while let Some((modifier, after)) = rest
        .split_once('+')
        .filter(|(m, a)| !m.is_empty() && !a.is_empty())
    {
        mods |= match modifier.to_lowercase().as_str() {
            "ctrl" | "control" => KeyModifiers::CONTROL,
            "alt" => KeyModifiers::ALT,
            "shift" => KeyModifiers::SHIFT,
            _ => return None,
        };
        rest = after;
    }
    let mut chars = rest.chars();
    let code = match (chars.next(), chars.next()) {
        (Some(c), None) => KeyCode::Char(if mods.contains(KeyModifiers::CONTROL) {
            c.to_ascii_lowercase()
        } else {
            c
        }),
        _ => named_key(&rest.to_lowercase())?,
    };
    if matches!(code, KeyCode::Char(_)) {
        // Shift is in the character itself (`G`), as the table writes it.
        mods.remove(KeyModifiers::SHIFT);
    }
    if code == KeyCode::BackTab {
        mods.remove(KeyModifiers::SHIFT);
    }
    Some(Chord { code, mods })
}

fn named_key(name: &str) -> Option<KeyCode> {
    Some(match name {
        "space" => KeyCode::Char(' '),
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "backspace" | "bksp" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        f if f.starts_with('f') => {
            KeyCode::F(f[1..].parse().ok().filter(|n| (1..=24).contains(n))?)
        }
        _ => return None,
    })
}

fn set_color(palette: &mut Palette, name: &str, value: &str) -> Result<(), String> {
    let color = parse_color(value).ok_or_else(|| {
        format!("colors.{name}: {value:?} is not one of the 16 colours (black, red, green, yellow, blue, magenta, cyan, gray, dark-gray, light-red, light-green, light-yellow, light-blue, light-magenta, light-cyan, white)")
    })?;
    let slot = palette.slot(name).ok_or_else(|| {
        format!(
            "colors: no colour named {name:?} (one of {})",
            Palette::NAMES.join(", ")
        )
    })?;
    *slot = color;
    Ok(())
}

/// One of the 16 basic colours (the app uses no others: see the theme).
fn parse_color(name: &str) -> Option<Color> {
    Some(
        match name.to_lowercase().replace(['_', ' '], "-").as_str() {
            "black" => Color::Black,
            "red" => Color::Red,
            "green" => Color::Green,
            "yellow" => Color::Yellow,
            "blue" => Color::Blue,
            "magenta" => Color::Magenta,
            "cyan" => Color::Cyan,
            "gray" | "grey" => Color::Gray,
            "dark-gray" | "dark-grey" => Color::DarkGray,
            "light-red" => Color::LightRed,
            "light-green" => Color::LightGreen,
            "light-yellow" => Color::LightYellow,
            "light-blue" => Color::LightBlue,
            "light-magenta" => Color::LightMagenta,
            "light-cyan" => Color::LightCyan,
            "white" => Color::White,
            _ => return None,
        },
    )
}

#[cfg(test)]
mod tests;
