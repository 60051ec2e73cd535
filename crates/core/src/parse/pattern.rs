//! The format's regular expressions: Python `regex` patterns (compiled with `DOTALL`)
//! run on fancy-regex, which has the look-arounds, atomic groups and backreferences a
//! backtracking engine gives.
//!
//! Where Python's semantics differ, the pattern is rewritten before compiling:
//! * `$` (without `MULTILINE`) also matches before a final newline: `(?=\n?\z)`.
//! * `\Z` is the very end of the text in Python (`\z` here; fancy-regex's `\Z` allows
//!   trailing newlines).
//! * A `{` that does not start a repetition (`{2}`, `{2,}`, `{,3}`, `{2,3}`) is a
//!   literal in Python: it is escaped.
//!
//! Known differences left: Python's error messages for invalid patterns (the class,
//! `ValueError`, is the same; the wording is fancy-regex's), and `finditer` after an
//! empty match resumes one character later (Python may still find a non-empty match
//! at the same position).
//!
//! Every search is bounded by the parse's deadline: patterns that need no backtracking
//! run on fancy-regex's linear-time engine, the others in short steps between which the
//! deadline is checked (`backtracking.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use fancy_regex::{Captures, Regex};

use super::backtracking::{stopped, Backtracking};
use super::error::ParseError;
use super::limits::Clock;
use super::partial::partial_source;
use super::pattern_error::python_message;
use super::pyvalue::shown_repr;

/// A compiled pattern and the names of its named groups.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    /// The pattern as compiled (fancy-regex's linear engine runs it when it can).
    regex: Regex,
    /// For a pattern that needs backtracking: its bounded searches.
    backtracking: Option<Arc<Backtracking>>,
    /// The pattern as compiled, after translation (the partial pattern derives from it).
    translated: Arc<str>,
    /// A list of literals none of which extends another: a complete match of it can
    /// never grow with more text (`_compile_anchor`'s `can_extend` is false).
    pub(crate) fixed: bool,
    /// Where an attempt runs into the end of the text (`partial.rs`), compiled on first
    /// use; `None` inside when the pattern has constructs that are not modelled.
    partial: Arc<OnceLock<Option<Pattern>>>,
}

/// One match: where it is, and its named groups that took part.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Named groups that matched, in the pattern's order.
    pub(crate) groups: Vec<(String, String)>,
}

impl Pattern {
    /// A Python pattern, compiled with `DOTALL`; the error is fancy-regex's message.
    pub(crate) fn python(source: &str) -> Result<Self, String> {
        let translated = format!("(?s){}", translate(source));
        Self::compiled(translated, &shown_repr(source))
            .map_err(|e| python_message(source).unwrap_or(e))
    }

    /// An already translated pattern; `shown` names it in errors.
    fn compiled(translated: String, shown: &str) -> Result<Self, String> {
        let regex = Regex::new(&translated).map_err(|e| e.to_string())?;
        let backtracking = Backtracking::new(&translated, shown).map(Arc::new);
        Ok(Self {
            regex,
            backtracking,
            translated: translated.into(),
            fixed: false,
            partial: Arc::default(),
        })
    }

    /// Any of `literals`, longest first (so the longer wins where both match).
    pub(crate) fn literals(literals: &[String]) -> Self {
        let mut ordered: Vec<&String> = literals.iter().collect();
        ordered.sort_by_key(|s| std::cmp::Reverse(s.chars().count()));
        let source: Vec<String> = ordered
            .iter()
            .map(|s| fancy_regex::escape(s).into_owned())
            .collect();
        let mut pattern = Self::python(&source.join("|")).expect("escaped literals always compile");
        pattern.fixed = !literals
            .iter()
            .any(|a| literals.iter().any(|b| a != b && a.starts_with(b.as_str())));
        pattern
    }

    /// The start of `pattern.search(text, pos, partial=True)` when it finds no complete
    /// match: the leftmost position from which an attempt runs into the end of the text
    /// (the end itself when none does: the empty string is always a live prefix). A
    /// pattern whose partial matches are not modelled is taken as partial from `pos`.
    pub(crate) fn partial_start(
        &self,
        text: &str,
        pos: usize,
        clock: &Clock,
    ) -> Result<usize, ParseError> {
        let partial = self.partial.get_or_init(|| {
            let source = partial_source(&self.translated)?;
            Self::compiled(source, "the partial form of a pattern").ok()
        });
        let Some(partial) = partial else {
            return Ok(pos);
        };
        Ok(partial
            .search(text, pos, clock)?
            .map_or(text.len(), |m| m.start))
    }

    /// The names of the pattern's named groups.
    pub(crate) fn group_names(&self) -> Vec<String> {
        self.regex
            .capture_names()
            .flatten()
            .map(str::to_string)
            .collect()
    }

    /// `pattern.search(text, pos)`: the first match at or after byte `pos`, within the
    /// parse's deadline.
    pub(crate) fn search(
        &self,
        text: &str,
        pos: usize,
        clock: &Clock,
    ) -> Result<Option<Found>, ParseError> {
        let captures = self.captures(text, pos, clock)?;
        Ok(captures.map(|caps| {
            let whole = caps.get(0).expect("group 0 is the match");
            let groups = self
                .regex
                .capture_names()
                .flatten()
                .filter_map(|name| Some((name.to_string(), caps.name(name)?.as_str().to_string())))
                .collect();
            Found {
                start: whole.start(),
                end: whole.end(),
                groups,
            }
        }))
    }

    fn captures<'t>(
        &self,
        text: &'t str,
        pos: usize,
        clock: &Clock,
    ) -> Result<Option<Captures<'t>>, ParseError> {
        match &self.backtracking {
            Some(backtracking) => backtracking.search(text, pos, clock),
            None => self
                .regex
                .captures_from_pos(text, pos)
                .map_err(|e| stopped(&e)),
        }
    }

    /// `pattern.finditer(text)`: every non-overlapping match, left to right.
    pub(crate) fn find_all(&self, text: &str, clock: &Clock) -> Result<Vec<Found>, ParseError> {
        let mut found = Vec::new();
        self.for_each_match(text, clock, |m| found.push(m))?;
        Ok(found)
    }

    /// `for m in pattern.finditer(text)`, the deadline checked at every match (a pattern
    /// that matches the empty string matches at every position).
    pub(crate) fn for_each_match(
        &self,
        text: &str,
        clock: &Clock,
        mut each: impl FnMut(Found),
    ) -> Result<(), ParseError> {
        let mut pos = 0;
        while pos <= text.len() {
            clock.check(|| format!("going through the matches of a pattern, at byte {pos}"))?;
            let Some(m) = self.search(text, pos, clock)? else {
                break;
            };
            pos = if m.end > m.start {
                m.end
            } else {
                m.end + text[m.end..].chars().next().map_or(1, char::len_utf8)
            };
            each(m);
        }
        Ok(())
    }
}

/// The patterns a template's content parsers compile from their arguments
/// (`tag_pattern`, `string_delims`), each compiled once per template and shared by its
/// copies, as Python's `regex` module caches what it compiles. Only the template's own
/// text is compiled, so the cache cannot grow with the output. Patterns are handed out
/// behind an `Arc`: a cloned regex starts with empty matching caches, which it would
/// rebuild at every use.
#[derive(Debug, Clone, Default)]
pub(crate) struct PatternCache(Arc<Mutex<HashMap<String, Compiled>>>);

/// A pattern as compiled, or why it does not compile.
type Compiled = Result<Arc<Pattern>, String>;

impl PatternCache {
    /// [`Pattern::python`] of `source`, compiled on its first use.
    pub(crate) fn python(&self, source: &str) -> Compiled {
        let mut compiled = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = compiled.get(source) {
            return found.clone();
        }
        let pattern = Pattern::python(source).map(Arc::new);
        compiled.insert(source.to_string(), pattern.clone());
        pattern
    }
}

/// Rewrites the places where Python's `regex` and fancy-regex read a pattern
/// differently (see the module documentation).
fn translate(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len() + 8);
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                let next = chars[i + 1];
                if next == 'Z' && !in_class {
                    out.push_str("\\z");
                } else {
                    out.push(c);
                    out.push(next);
                }
                i += 2;
                continue;
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` right after `[` or `[^` is a literal, not the end of the class.
                if chars.get(i + 1) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i + 1) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '$' if !in_class => out.push_str("(?=\\n?\\z)"),
            '{' if !in_class && !starts_repetition(&chars[i..]) => out.push_str("\\{"),
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// Whether `chars` (starting at a `{`) is a repetition: `{m}`, `{m,}`, `{,n}`, `{m,n}`.
fn starts_repetition(chars: &[char]) -> bool {
    let Some(close) = chars.iter().position(|c| *c == '}') else {
        return false;
    };
    let inner: String = chars[1..close].iter().collect();
    let (low, high) = inner.split_once(',').unwrap_or((&inner, "0"));
    let numeric = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    !(low.is_empty() && high.is_empty()) && numeric(low) && numeric(high)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::limits::ParseLimits;
    use std::time::Duration;

    fn search(pattern: &str, text: &str) -> Option<(usize, usize)> {
        let found = Pattern::python(pattern)
            .unwrap()
            .search(text, 0, &Clock::unbounded())
            .unwrap();
        found.map(|m| (m.start, m.end))
    }

    #[test]
    fn python_anchors_and_braces_are_translated() {
        assert_eq!(search("a$", "a\n"), Some((0, 1)));
        assert_eq!(search("a\\Z", "a\n"), None);
        assert_eq!(search("x{y", "x{y"), Some((0, 3)));
        assert_eq!(search("x{2}", "xx"), Some((0, 2)));
        assert_eq!(search("[$]", "$"), Some((0, 1)));
        assert_eq!(search("(?<=a)b", "ab"), Some((1, 2)));
    }

    #[test]
    fn literals_prefer_the_longest() {
        let pattern = Pattern::literals(&["<a".into(), "<ab".into()]);
        let m = pattern
            .search("x<ab", 0, &Clock::unbounded())
            .unwrap()
            .unwrap();
        assert_eq!((m.start, m.end), (1, 4));
    }

    #[test]
    fn named_groups_are_reported() {
        let pattern = Pattern::python("<(?P<name>\\w+)(?P<rest>!)?>").unwrap();
        let m = pattern
            .search("<call>", 0, &Clock::unbounded())
            .unwrap()
            .unwrap();
        assert_eq!(m.groups, vec![("name".to_string(), "call".to_string())]);
        assert_eq!(pattern.group_names(), vec!["name", "rest"]);
    }

    #[test]
    fn catastrophic_backtracking_stops_at_the_deadline() {
        // The look-ahead inside the repeated group puts the whole loop on fancy-regex's
        // backtracking engine: two ways to match each `a`, 2^40 paths to fail before the
        // `b` is refused by the negative look-ahead.
        let pattern = Pattern::python("(?:(?=a)a|a)*b(?!d)").unwrap();
        let text = format!("{}bd", "a".repeat(40));
        let clock = ParseLimits::new(Duration::from_millis(200)).start();
        let error = pattern.search(&text, 0, &clock).unwrap_err();
        assert_eq!(error.class, crate::parse::LIMIT_CLASS);
        assert!(error.message.contains("deadline"), "{}", error.message);
    }

    #[test]
    fn a_variable_look_behind_is_only_tried_where_the_rest_can_match() {
        // `(?<=a+)` scans back over every `a` at each position: quadratic if every
        // position were tried, where only a `b` can start a match.
        let pattern = Pattern::python("(?<=a+)b").unwrap();
        let text = "a".repeat(1 << 20);
        assert!(pattern
            .search(&text, 0, &Clock::unbounded())
            .unwrap()
            .is_none());
        let text = format!("{text}b");
        let found = pattern.search(&text, 0, &Clock::unbounded()).unwrap();
        assert_eq!(found.map(|m| m.start), Some(1 << 20));
    }

    #[test]
    fn a_look_ahead_scanning_for_an_absent_close_is_tried_once() {
        // TRL's Nemotron schema opens its reasoning where a `</think>` follows: with none
        // in the text, no position can match.
        let pattern = Pattern::python("(?=[\\s\\S]*?</think>)").unwrap();
        let text = "x".repeat(1 << 20);
        assert!(pattern
            .search(&text, 5, &Clock::unbounded())
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_quadratic_attempt_is_refused_by_the_time_left() {
        let pattern = Pattern::python("(?:(?<=a+)a)*b").unwrap();
        let clock = ParseLimits::new(Duration::from_millis(100)).start();
        let text = "a".repeat(1 << 20);
        let error = pattern.search(&text, 0, &clock).unwrap_err();
        assert!(error.message.contains("power 2"), "{}", error.message);
        // Small texts still parse, as Python does (`regex.search` gives (1, 3)).
        let found = pattern.search("aab", 0, &clock).unwrap();
        assert_eq!(found.map(|m| (m.start, m.end)), Some((1, 3)));
    }
}
