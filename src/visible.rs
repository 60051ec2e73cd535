//! Making invisible characters visible, for diffs and the prompt view.

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
}
