//! Partial matching, as Python's `regex` module does it with `search(text, pos,
//! partial=True)`: the streaming parser's way of knowing which bytes at the end of the
//! text so far could still become a delimiter once more text arrives.
//!
//! The `regex` module first looks for a complete match; only when there is none does
//! it look for the leftmost position where an attempt runs into the end of the text
//! (a partial match, from there to the end). fancy-regex has no partial mode, so the
//! second step runs a derived pattern: for a pattern `P`, `partial(P)` matches exactly
//! where an attempt of `P` reaches the end of the text wanting more. It is built from
//! `P`'s syntax tree:
//! * a character (a class, `.`) wants more only at the end: `\z`;
//! * a literal `abc`: a proper prefix of it, then the end: `\z|a\z|ab\z`;
//! * `E1 E2 … En`: `partial(E1) | E1 partial(E2) | … | E1 … En-1 partial(En)`;
//! * `A|B`: `partial(A)|partial(B)`; a group: its content's;
//! * `E{lo,hi}`: `E{0,hi-1} partial(E)`;
//! * a look-ahead `(?=E)` reads on: `(?=partial(E))`; a look-behind reads backwards
//!   only and never wants more; nor do assertions (`\z`, `\b`).
//!
//! Backreferences, conditionals and the other constructs this does not model make
//! the pattern "always partial" from the search position: the parser then holds the
//! text back until the stream ends, which is late but never wrong about a delimiter
//! (docs/parse.md lists it among the differences).

use fancy_regex::{Assertion, Expr, LookAround};

/// The source of `partial(P)` for the (already translated) pattern `source`, or `None`
/// when the pattern uses a construct this does not model.
pub(crate) fn partial_source(source: &str) -> Option<String> {
    let tree = Expr::parse_tree(source).ok()?;
    partial(&tree.expr)
}

/// What the expression matches, as fancy-regex syntax (groups no longer capture).
fn full(expr: &Expr) -> Option<String> {
    Some(match expr {
        Expr::Empty => String::new(),
        Expr::Any { newline: true } => "(?s:.)".into(),
        Expr::Any { newline: false } => "(?-s:.)".into(),
        Expr::Assertion(assertion) => assertion_source(*assertion)?.into(),
        Expr::Literal { val, casei } => case(&fancy_regex::escape(val), *casei),
        Expr::Concat(children) => {
            let parts: Option<Vec<String>> = children.iter().map(full).collect();
            format!("(?:{})", parts?.concat())
        }
        Expr::Alt(children) => {
            let parts: Option<Vec<String>> = children.iter().map(full).collect();
            format!("(?:{})", parts?.join("|"))
        }
        Expr::Group(child) => format!("(?:{})", full(child)?),
        Expr::LookAround(child, kind) => format!("({}{})", look_prefix(*kind), full(child)?),
        Expr::Repeat {
            child,
            lo,
            hi,
            greedy,
        } => repeat(&full(child)?, *lo, *hi, *greedy),
        Expr::Delegate { inner, casei, .. } => case(inner, *casei),
        Expr::AtomicGroup(child) => format!("(?>{})", full(child)?),
        _ => return None,
    })
}

/// Where an attempt of the expression runs into the end of the text (see the module
/// documentation); `(?!)` where it never can.
fn partial(expr: &Expr) -> Option<String> {
    const NEVER: &str = "(?!)";
    Some(match expr {
        Expr::Empty | Expr::Assertion(_) => NEVER.into(),
        Expr::Any { .. } | Expr::Delegate { .. } => "\\z".into(),
        Expr::Literal { val, casei } => case(&literal_prefixes(val), *casei),
        Expr::Concat(children) => concat(children)?,
        Expr::Alt(children) => {
            let parts: Option<Vec<String>> = children.iter().map(partial).collect();
            format!("(?:{})", parts?.join("|"))
        }
        Expr::Group(child) | Expr::AtomicGroup(child) => partial(child)?,
        Expr::LookAround(child, LookAround::LookAhead | LookAround::LookAheadNeg) => {
            format!("(?={})", partial(child)?)
        }
        Expr::LookAround(_, _) => NEVER.into(),
        Expr::Repeat { hi: 0, .. } => NEVER.into(),
        Expr::Repeat { child, hi, .. } => {
            let most = if *hi == usize::MAX { *hi } else { hi - 1 };
            let before = repeat(&full(child)?, 0, most, true);
            format!("(?:{before}{})", partial(child)?)
        }
        _ => return None,
    })
}

/// `partial(E1) | E1 partial(E2) | …`.
fn concat(children: &[Expr]) -> Option<String> {
    let mut before = String::new();
    let mut branches = Vec::with_capacity(children.len());
    for child in children {
        branches.push(format!("{before}{}", partial(child)?));
        before.push_str(&full(child)?);
    }
    Some(format!("(?:{})", branches.join("|")))
}

/// The proper prefixes of `literal` (the empty one included), each then the end.
fn literal_prefixes(literal: &str) -> String {
    let chars: Vec<char> = literal.chars().collect();
    let mut source = String::new();
    for c in chars.iter().take(chars.len().saturating_sub(1)) {
        source.push_str("(?:\\z|");
        source.push_str(&fancy_regex::escape(c.encode_utf8(&mut [0; 4])));
    }
    source.push_str("\\z");
    source.push_str(&")".repeat(chars.len().saturating_sub(1)));
    source
}

fn repeat(child: &str, lo: usize, hi: usize, greedy: bool) -> String {
    let lazy = if greedy { "" } else { "?" };
    match hi {
        usize::MAX => format!("(?:{child}){{{lo},}}{lazy}"),
        _ => format!("(?:{child}){{{lo},{hi}}}{lazy}"),
    }
}

fn case(source: &str, casei: bool) -> String {
    if casei {
        format!("(?i:{source})")
    } else {
        format!("(?:{source})")
    }
}

fn look_prefix(kind: LookAround) -> &'static str {
    match kind {
        LookAround::LookAhead => "?=",
        LookAround::LookAheadNeg => "?!",
        LookAround::LookBehind => "?<=",
        LookAround::LookBehindNeg => "?<!",
    }
}

fn assertion_source(assertion: Assertion) -> Option<&'static str> {
    Some(match assertion {
        Assertion::StartText => "\\A",
        Assertion::EndText => "\\z",
        Assertion::StartLine { crlf: false } => "(?m:^)",
        Assertion::EndLine { crlf: false } => "(?m:$)",
        Assertion::WordBoundary => "\\b",
        Assertion::NotWordBoundary => "\\B",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fancy_regex::Regex;

    /// `regex.search(pattern, text, partial=True)` where no complete match exists:
    /// the start of the partial match (the values are what Python's `regex` gives).
    fn partial_start(pattern: &str, text: &str) -> Option<usize> {
        let source = partial_source(&format!("(?s){pattern}")).unwrap();
        let regex = Regex::new(&source).unwrap();
        regex.find(text).unwrap().map(|m| m.start())
    }

    #[test]
    fn partial_matches_start_where_python_s_regex_says() {
        assert_eq!(partial_start("(?=[\\s\\S]*?</think>)", "hello"), Some(0));
        assert_eq!(partial_start("\\s*<tool_call>", "hi "), Some(2));
        assert_eq!(partial_start("\\s*<tool_call>", "hi"), Some(2));
        assert_eq!(partial_start("functools(?=\\[)", "a functools"), Some(2));
        assert_eq!(partial_start("(?=\\[)", "ab"), Some(2));
        assert_eq!(partial_start("(?<=a)b", "a"), Some(1));
        assert_eq!(
            partial_start("\\}<\\|eot_id\\|>\\s*", "{\"a\": 1}<|eot"),
            Some(7)
        );
        assert_eq!(
            partial_start(
                "(?:<\\|tool_call_start\\|>\\[|,\\s*)(?P<name>\\w+)\\(",
                "x, foo"
            ),
            Some(1)
        );
        assert_eq!(partial_start("a.*c|b", "xaa"), Some(1));
        assert_eq!(partial_start("<end>", "ab<en"), Some(2));
        assert_eq!(partial_start("<end>", "ab<ex"), Some(5));
    }

    #[test]
    fn backreferences_are_not_modelled() {
        assert_eq!(partial_source("(\\w+)\\1"), None);
    }
}
