//! Python `regex`'s wording for the commonest mistakes in a pattern, so that an invalid
//! `open_pattern` reads as transformers reports it (`missing ) at position 9`).
//!
//! Used only once fancy-regex has refused the pattern; mistakes not recognised here
//! keep fancy-regex's own message.

/// The message Python's `regex.compile` gives for `source`, when it is one of the
/// mistakes recognised here. Positions count characters, as Python's do.
pub(crate) fn python_message(source: &str) -> Option<String> {
    let chars: Vec<char> = source.chars().collect();
    let mut scan = Scan::default();
    let mut i = 0;
    while i < chars.len() {
        i = scan.step(&chars, i);
        if scan.error.is_some() {
            return scan.error;
        }
    }
    if scan.in_class {
        return Some(format!(
            "unterminated character set at position {}",
            chars.len()
        ));
    }
    (scan.depth > 0).then(|| format!("missing ) at position {}", chars.len()))
}

/// What the previous token was, for the repeat checks.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Start of the pattern, a `(` or a `|`: nothing to repeat.
    #[default]
    Nothing,
    Atom,
    Repeat,
    /// A repeat already made lazy or possessive.
    ModifiedRepeat,
}

#[derive(Default)]
struct Scan {
    depth: usize,
    in_class: bool,
    last: Last,
    error: Option<String>,
}

impl Scan {
    /// Reads the token at `i`; the index of the next one.
    fn step(&mut self, chars: &[char], i: usize) -> usize {
        let c = chars[i];
        if self.in_class {
            return self.class_char(chars, i);
        }
        match c {
            '\\' if i + 1 == chars.len() => {
                self.fail(format!("bad escape (end of pattern) at position {}", i + 1));
            }
            '\\' => {
                self.last = Last::Atom;
                return i + 2;
            }
            '[' => {
                self.in_class = true;
                self.last = Last::Atom;
                let mut next = i + 1;
                if chars.get(next) == Some(&'^') {
                    next += 1;
                }
                if chars.get(next) == Some(&']') {
                    next += 1;
                }
                return next;
            }
            '(' => {
                self.depth += 1;
                self.last = Last::Nothing;
                if chars.get(i + 1) == Some(&'?') {
                    return i + 2;
                }
            }
            ')' if self.depth == 0 => self.fail(format!("unbalanced parenthesis at position {i}")),
            ')' => {
                self.depth -= 1;
                self.last = Last::Atom;
            }
            '|' => self.last = Last::Nothing,
            '*' | '+' | '?' => self.repeat(c, i),
            _ => self.last = Last::Atom,
        }
        i + 1
    }

    fn class_char(&mut self, chars: &[char], i: usize) -> usize {
        match chars[i] {
            '\\' => i + 2,
            ']' => {
                self.in_class = false;
                i + 1
            }
            _ => i + 1,
        }
    }

    fn repeat(&mut self, c: char, i: usize) {
        match (self.last, c) {
            (Last::Nothing, _) => self.fail(format!("nothing to repeat at position {i}")),
            (Last::Repeat, '?' | '+') => self.last = Last::ModifiedRepeat,
            (Last::Repeat | Last::ModifiedRepeat, _) => {
                self.fail(format!("multiple repeat at position {i}"));
            }
            _ => self.last = Last::Repeat,
        }
    }

    fn fail(&mut self, message: String) {
        self.error.get_or_insert(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages checked against Python's `regex` module (2026.11.19).
    #[test]
    fn common_mistakes_read_as_python_words_them() {
        let cases = [
            ("(unclosed", "missing ) at position 9"),
            ("a)b", "unbalanced parenthesis at position 1"),
            ("[abc", "unterminated character set at position 4"),
            ("*a", "nothing to repeat at position 0"),
            ("a**", "multiple repeat at position 2"),
            ("(?P<n>a", "missing ) at position 7"),
            ("\\", "bad escape (end of pattern) at position 1"),
            ("((a)", "missing ) at position 4"),
        ];
        for (pattern, message) in cases {
            assert_eq!(
                python_message(pattern).as_deref(),
                Some(message),
                "{pattern}"
            );
        }
        assert_eq!(python_message("a*?b+c"), None);
    }
}
