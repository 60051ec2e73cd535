//! Python `str` behaviours that MiniJinja does not share.

/// One line of [`Lines`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line<'t> {
    /// The line without its line break.
    pub text: &'t str,
    /// The line with its line break (`splitlines(keepends=True)`).
    pub with_break: &'t str,
}

/// The lines of a text as Python's `str.splitlines()` finds them, one at a time: split
/// on every Unicode line boundary Python knows (`\n`, `\r`, `\r\n`, `\v`, `\f`,
/// `\x1c`-`\x1e`, `\x85`, U+2028, U+2029), a final empty piece dropped.
pub(crate) struct Lines<'t> {
    text: &'t str,
    start: usize,
}

impl<'t> Lines<'t> {
    /// The lines of `text`.
    pub(crate) fn new(text: &'t str) -> Self {
        Lines { text, start: 0 }
    }
}

impl<'t> Iterator for Lines<'t> {
    type Item = Line<'t>;

    fn next(&mut self) -> Option<Line<'t>> {
        let rest = self.text.get(self.start..).filter(|r| !r.is_empty())?;
        let (text, with_break) = match rest.char_indices().find(|(_, c)| is_line_boundary(*c)) {
            Some((at, ch)) => {
                let mut end = at + ch.len_utf8();
                if ch == '\r' && rest[end..].starts_with('\n') {
                    end += 1;
                }
                (&rest[..at], &rest[..end])
            }
            None => (rest, rest),
        };
        self.start += with_break.len();
        Some(Line { text, with_break })
    }
}

fn is_line_boundary(ch: char) -> bool {
    matches!(
        ch,
        '\n' | '\r'
            | '\u{b}'
            | '\u{c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

#[cfg(test)]
mod tests {
    fn splitlines(text: &str) -> Vec<&str> {
        super::Lines::new(text).map(|line| line.text).collect()
    }

    // CPython: "a\r\nb\rc\n\nd\u2028e\n".splitlines() == ['a', 'b', 'c', '', 'd', 'e']
    #[test]
    fn splits_like_python() {
        assert_eq!(
            splitlines("a\r\nb\rc\n\nd\u{2028}e\n"),
            ["a", "b", "c", "", "d", "e"]
        );
        assert!(splitlines("").is_empty());
    }
}
