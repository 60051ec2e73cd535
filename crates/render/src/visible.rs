//! Making invisible characters visible, for diffs and the prompt view, and making
//! untrusted text safe to print: a template's error message or a fixture's key may
//! carry terminal escape sequences (which would recolour, retitle or rewrite a CI log)
//! or be megabytes long.

use std::borrow::Cow;

/// Longest value echoed in a message, in characters; longer ones are cut, with their
/// size.
pub const MAX_ECHO_CHARS: usize = 200;

/// Longest message printed, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// `text` with every control character except newline and tab (and the Unicode
/// direction overrides, which can reorder what a reader sees) written as `\u{..}`.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        if is_unsafe(ch) {
            out.push_str(&format!("\\u{{{:04x}}}", ch as u32));
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

fn is_unsafe(ch: char) -> bool {
    (ch.is_control() && ch != '\n' && ch != '\t')
        || matches!(ch, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` cut to `max` characters, with its full size noted when cut.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}… ({} bytes in all)", &text[..end], text.len())),
    }
}

/// A value echoed in a message: quoted with escapes, cut when long.
pub fn quoted(text: &str) -> String {
    format!("{:?}", cut(text, MAX_ECHO_CHARS).as_ref())
}

/// A whole message for the terminal: control characters escaped, cut when long.
pub fn message(text: &str) -> String {
    for_terminal(&cut(text, MAX_MESSAGE_CHARS)).into_owned()
}

/// Replaces whitespace and control characters with visible marks: `␊` before each
/// newline, `→` for tabs, `·` for trailing spaces, `␍` for carriage returns and `\u{..}`
/// for other control characters. Line breaks are kept so the text stays readable.
pub fn visible_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (line, false),
        };
        let trimmed = body.trim_end_matches(' ');
        push_marked(&mut out, trimmed);
        out.extend(std::iter::repeat_n('·', body.len() - trimmed.len()));
        if newline {
            out.push_str("␊\n");
        }
    }
    out
}

fn push_marked(out: &mut String, text: &str) {
    for ch in text.chars() {
        match ch {
            '\t' => out.push('→'),
            '\r' => out.push('␍'),
            c if c.is_control() => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::visible_whitespace;

    #[test]
    fn marks_newlines_tabs_and_trailing_spaces() {
        assert_eq!(visible_whitespace("a \tb  \nc\r\n"), "a →b··␊\nc␍␊\n");
        assert_eq!(visible_whitespace("x\u{1}"), "x\\u{0001}");
    }

    #[test]
    fn terminal_text_has_no_escape_sequences_and_is_bounded() {
        use super::*;
        assert_eq!(
            for_terminal("a\u{1b}[31mb\n\tc\u{202e}"),
            "a\\u{001b}[31mb\n\tc\\u{202e}"
        );
        assert_eq!(cut("abcdef", 3), "abc… (6 bytes in all)");
        assert_eq!(
            quoted(&"x".repeat(1000)).len(),
            MAX_ECHO_CHARS + 2 + "… (1000 bytes in all)".len()
        );
    }
}
