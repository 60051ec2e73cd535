//! The text of a comparison: one render against the reference, as `chatplate compare`
//! and `chatplate check --engines` print it: `same`, the first differing byte with
//! line:col and both excerpts then the marked diff, or the error.

use chatplate_render::visible;

use super::{first_difference, line_col, Token, TokenComparison};
use crate::diff::marked_diff;

/// Bytes of each prompt shown around the first difference.
const EXCERPT_BYTES: usize = 30;

/// One side of a comparison as it is shown: its heading and its prompt or error.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// How the side is named in the report (`minijinja (minijinja 3.1.0)`).
    pub heading: &'a str,
    /// Its short name in the excerpt column (`minijinja`).
    pub name: &'a str,
    /// The prompt, or the error's message.
    pub result: Result<&'a str, &'a str>,
}

/// `N bytes`, or the error.
pub fn summary(result: Result<&str, &str>) -> String {
    match result {
        Ok(prompt) => format!("{} bytes", prompt.len()),
        Err(err) => format!("error: {}", visible::message(err)),
    }
}

/// `other` against `reference`: its lines, and whether it agrees. Two failures agree.
pub fn versus(reference: &Side, other: &Side, color: bool) -> (String, bool) {
    let head = visible::for_terminal(other.heading).into_owned();
    match (reference.result, other.result) {
        (Ok(want), Ok(got)) => match first_difference(want, got) {
            None => (format!("{head}: same\n"), true),
            Some(at) => {
                let names = (reference.name, other.name);
                (difference(&head, names, want, got, at, color), false)
            }
        },
        (Err(_), Err(err)) => (
            format!("{head}: fails too: {}\n", visible::message(err)),
            true,
        ),
        (_, result) => (format!("{head}: {}\n", summary(result)), false),
    }
}

/// A render compared by tokens against the reference's prompt (`want`): `same (N
/// tokens)`, or the first differing token with its id and text on both sides. The
/// return is as [`versus`]'s.
pub fn tokens_versus(reference: &Side, other: &Side, tokens: &TokenComparison) -> (String, bool) {
    let head = visible::for_terminal(other.heading).into_owned();
    let Some(first) = &tokens.first else {
        let count = tokens.engine_count;
        return (format!("{head}: same ({count} tokens)\n"), true);
    };
    let want = reference.result.unwrap_or_default();
    let (line, col) = line_col(want, first.byte);
    let width = reference
        .name
        .chars()
        .count()
        .max(other.name.chars().count());
    let width = width.max(12);
    let name = |text: &str| visible::for_terminal(text).into_owned();
    let mut out = format!(
        "{head}: differs at token {} of {} (byte {}, line {line}:{col})\n",
        first.index, tokens.reference_count, first.byte
    );
    for (side, token) in [
        (reference.name, &first.reference),
        (other.name, &first.engine),
    ] {
        out.push_str(&format!(
            "  {:>width$}: {}\n",
            name(side),
            token_shown(token.as_ref())
        ));
    }
    (out, false)
}

/// The first differing token in one line, as a corpus report's example shows it.
pub fn token_difference(first: &super::TokenDifference) -> String {
    format!(
        "token {} (byte {}): {} vs {}",
        first.index,
        first.byte,
        token_shown(first.reference.as_ref()),
        token_shown(first.engine.as_ref())
    )
}

/// A token as the report shows it: its id and its quoted text, or the end.
fn token_shown(token: Option<&Token>) -> String {
    match token {
        None => "(no more tokens)".into(),
        Some(Token {
            id,
            text: Some(text),
            ..
        }) => format!("{id} {}", visible::quoted(text)),
        Some(token) => token.id.to_string(),
    }
}

fn difference(
    head: &str,
    (reference, other): (&str, &str),
    want: &str,
    got: &str,
    at: usize,
    color: bool,
) -> String {
    let (line, col) = line_col(want, at);
    let width = reference.chars().count().max(other.chars().count()).max(12);
    let name = |text: &str| visible::for_terminal(text).into_owned();
    let mut out = format!("{head}: differs at byte {at} (line {line}:{col})\n");
    out.push_str(&format!(
        "  {:>width$}: {}\n",
        name(reference),
        excerpt(want, at)
    ));
    out.push_str(&format!(
        "  {:>width$}: {}\n",
        name(other),
        excerpt(got, at)
    ));
    out.push_str(&marked_diff(want, got, color));
    out
}

/// The bytes of `text` around `at`, widened to whole characters, quoted with escapes.
pub fn excerpt(text: &str, at: usize) -> String {
    let mut start = at.saturating_sub(EXCERPT_BYTES).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + EXCERPT_BYTES).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let dots = |cut: bool| if cut { "…" } else { "" };
    format!(
        "{}{}{}",
        dots(start > 0),
        visible::quoted(&text[start..end]),
        dots(end < text.len())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_widen_to_whole_characters() {
        let text = format!("{}é{}", "a".repeat(40), "b".repeat(40));
        // Byte 41 is inside é.
        let shown = excerpt(&text, 41);
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert!(shown.contains('é'), "{shown}");
    }

    #[test]
    fn a_difference_names_both_sides_and_the_place() {
        let side = |name, result| Side {
            heading: name,
            name,
            result,
        };
        let reference = side("transformers", Ok("a\nbc"));
        let (text, same) = versus(&reference, &side("minijinja", Ok("a\nbd")), false);
        assert!(!same);
        assert!(
            text.starts_with("minijinja: differs at byte 3 (line 2:2)\n"),
            "{text}"
        );
        assert!(
            text.contains("  transformers: \"a\\nbc\"\n     minijinja: \"a\\nbd\"\n"),
            "{text}"
        );
        let (text, same) = versus(&side("t", Err("boom")), &side("m", Err("bang")), false);
        assert!(same && text == "m: fails too: bang\n", "{text}");
    }
}
