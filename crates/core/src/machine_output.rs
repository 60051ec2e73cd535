//! Machine-readable output without raw control characters: the one place that decides how
//! JSON and XML documents chatplate writes (`--format json`, `--json`, JUnit, request
//! bodies, session files) carry text from strangers.
//!
//! A fixture, a template's error or a model's output may hold C0 controls (U+0000 to
//! U+001F), DEL (U+007F) or C1 controls (U+0080 to U+009F; U+009B is a CSI in terminals
//! that read 8-bit controls). serde_json escapes C0 but writes DEL and C1 as they are, so a
//! report printed with `cat` in a CI log, or a request body shown by `curl -v`, could still
//! drive the terminal. Every document is written through here instead:
//!
//! * **JSON** ([`to_json`], [`to_json_pretty`], [`escape_json`]): every character
//!   [`needs_escape`] names is written as a `\u00XX` escape. The document's value is the
//!   same: a JSON reader gets back the exact text.
//! * **XML** ([`xml_text`], [`xml_attribute`]): DEL, C1 and the direction marks are character references
//!   (`&#x9B;`), which an XML reader turns back into the same character. XML 1.0 cannot
//!   carry the other C0 controls at all, not even as references, so those are written
//!   visibly as the terminal shows them (`\u{001b}`); tab, line feed and carriage return
//!   are kept (as references where XML would change them).
//!
//! The set is the one the terminal escapes (`chatplate_render::visible::for_terminal`):
//! every control character, and the Unicode direction overrides and isolates, which can
//! reorder what a reader sees.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::Serialize;

/// Whether `ch` is written escaped in machine-readable output: a C0 or C1 control, DEL,
/// or a direction override or isolate (U+202A to U+202E, U+2066 to U+2069).
pub fn needs_escape(ch: char) -> bool {
    ch.is_control() || matches!(ch, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `value` as compact JSON, with no raw control character (see the module's docs).
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string(value).map(|text| escape_json(&text).into_owned())
}

/// `value` as pretty JSON (two-space indent), with no raw control character.
pub fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(value).map(|text| escape_json(&text).into_owned())
}

/// JSON text that serde_json (or any writer that escapes the characters JSON requires)
/// produced, with the controls it left raw escaped: the same JSON value.
///
/// Outside strings such text holds only ASCII punctuation, digits, letters and
/// whitespace, so every character [`needs_escape`] names that is not JSON whitespace
/// (tab, line feed, carriage return) is inside a string, where `\u00XX` stands for it.
pub fn escape_json(text: &str) -> Cow<'_, str> {
    let raw = |ch: char| needs_escape(ch) && !matches!(ch, '\t' | '\n' | '\r');
    if !text.chars().any(raw) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        if raw(ch) {
            let _ = write!(out, "\\u{:04x}", u32::from(ch));
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

/// `text` for XML 1.0 character data: markup characters as entities, DEL, C1 and
/// direction marks as character references, a carriage return as a reference (XML
/// readers turn a raw one into a line feed), and the C0 controls XML cannot carry
/// written visibly as `\u{00XX}` (so are U+FFFE and U+FFFF, which XML cannot carry
/// either). Tab and line feed stay as they are.
pub fn xml_text(text: &str) -> String {
    xml_escaped(text, false)
}

/// `text` for an XML 1.0 attribute value (either quote): as [`xml_text`], and tab and
/// line feed as references too, which attribute-value normalization would turn into
/// spaces.
pub fn xml_attribute(text: &str) -> String {
    xml_escaped(text, true)
}

fn xml_escaped(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' if !attribute => out.push(ch),
            '\n' | '\t' | '\r' => {
                let _ = write!(out, "&#{};", u32::from(ch));
            }
            c if u32::from(c) < 0x20 || matches!(c, '\u{fffe}' | '\u{ffff}') => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            c if needs_escape(c) => {
                let _ = write!(out, "&#x{:X};", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// U+009B (CSI), U+0085 (NEL), DEL, NUL, ESC and a right-to-left override.
    const HOSTILE: &str = "a\u{9b}31m\u{85}b\u{7f}c\u{0}d\u{1b}[2Je\u{202e}f\tg\nh";

    /// No byte of a control character, raw, in `text` (JSON whitespace aside).
    fn assert_no_raw_controls(text: &str) {
        let raw: Vec<char> = text
            .chars()
            .filter(|&c| needs_escape(c) && !matches!(c, '\n' | '\t' | '\r'))
            .collect();
        assert!(raw.is_empty(), "raw {raw:?} in {text:?}");
    }

    #[test]
    fn json_keeps_the_value_and_no_raw_control() {
        let value = json!({"k\u{9b}": [HOSTILE, {"n": 1.50}], "x": null});
        for text in [to_json(&value).unwrap(), to_json_pretty(&value).unwrap()] {
            assert_no_raw_controls(&text);
            assert!(
                text.contains("\\u009b") && text.contains("\\u007f"),
                "{text}"
            );
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, value);
        }
        assert!(matches!(escape_json("{\"a\": \"é\"}"), Cow::Borrowed(_)));
    }

    #[test]
    fn xml_has_no_raw_control_and_references_what_xml_can_carry() {
        let text = xml_text(HOSTILE);
        assert_no_raw_controls(&text);
        assert!(text.contains("&#x9B;31m&#x85;b&#x7F;c"), "{text}");
        assert!(
            text.contains("\\u{0000}d\\u{001b}[2Je&#x202E;f\tg\nh"),
            "{text}"
        );
        assert_eq!(
            xml_text("<a b=\"'&'\">"),
            "&lt;a b=&quot;&apos;&amp;&apos;&quot;&gt;"
        );
        assert_eq!(xml_attribute("a\tb\nc\rd"), "a&#9;b&#10;c&#13;d");
    }

    #[test]
    fn the_set_is_the_terminals() {
        for code in (0..0x3000).chain([0xfeff, 0x1_f600]) {
            let Some(ch) = char::from_u32(code) else {
                continue;
            };
            let text = ch.to_string();
            let terminal = chatplate_render::visible::for_terminal(&text);
            let escaped_on_terminal = terminal != text && !matches!(ch, '\n' | '\t');
            assert_eq!(
                needs_escape(ch) && !matches!(ch, '\n' | '\t'),
                escaped_on_terminal,
                "U+{code:04X}"
            );
        }
    }
}
