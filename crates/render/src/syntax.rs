//! Jinja2's wording for the syntax errors inside a tag or expression.
//!
//! MiniJinja's parser says the same things differently ("unexpected identifier,
//! expected end of variable block" where Jinja2 says "expected token 'end of print
//! statement', got 'y'"). Its message, the offending source text and the tokens before
//! it are enough to say it Jinja2's way for the common cases; anything else keeps
//! MiniJinja's text. Block-structure errors are [`super::tags`]' job.

use minijinja::machinery::{tokenize, Token};
use minijinja::syntax::SyntaxConfig;

use super::pyerror::repr;

/// Jinja2's message for the MiniJinja syntax error `detail` at byte `offset` of `source`.
pub(crate) fn translate(detail: &str, source: &str, offset: Option<usize>) -> String {
    let at = offset.and_then(|offset| source.get(offset..).map(|rest| (offset, rest)));
    let translated: Option<String> = match (detail, at) {
        ("unexpected end of comment", _) => Some("Missing end of comment tag".to_string()),
        ("unexpected end of raw block", _) => Some("Missing end of raw directive".to_string()),
        ("unexpected end of string", Some((offset, _))) => open_quote(source, offset)
            .and_then(|quote| unexpected_char(source, quote, &source[quote..])),
        ("unexpected character", Some((offset, rest))) => unexpected_char(source, offset, rest),
        ("unexpected end of variable block, expected identifier or integer", _) => {
            Some("expected name or number".to_string())
        }
        _ => None,
    };
    translated
        .or_else(|| end_of_input(detail))
        .or_else(|| unexpected_token(detail, source, at))
        .unwrap_or_else(|| detail.to_string())
}

/// `unexpected char '!' at 5`: the character and its index in the template.
fn unexpected_char(source: &str, offset: usize, rest: &str) -> Option<String> {
    let ch = rest.chars().next()?;
    let index = source[..offset].chars().count();
    Some(format!(
        "unexpected char {} at {index}",
        repr(&ch.to_string())
    ))
}

/// The quote that opens the unterminated string literal before `offset`.
fn open_quote(source: &str, offset: usize) -> Option<usize> {
    let tag_start = tag_start(source, offset);
    let mut open = None;
    for (index, ch) in source[tag_start..offset.min(source.len())].char_indices() {
        match open {
            Some((_, quote)) if ch == quote => open = None,
            None if ch == '\'' || ch == '"' => open = Some((tag_start + index, ch)),
            _ => {}
        }
    }
    open.map(|(at, _)| at)
}

/// Where the tag (`{{` or `{%`) containing `offset` starts its contents.
fn tag_start(source: &str, offset: usize) -> usize {
    let before = &source[..offset.min(source.len())];
    before
        .rfind("{{")
        .max(before.rfind("{%"))
        .map_or(0, |start| start + 2)
}

/// The template ends inside a tag.
fn end_of_input(detail: &str) -> Option<String> {
    let expected = detail.strip_prefix("unexpected end of input, expected ")?;
    let expected = token_name(expected)?;
    Some(format!(
        "unexpected end of template, expected {}.",
        repr(expected)
    ))
}

/// `unexpected X` or `unexpected X, expected Y` at the offending token.
fn unexpected_token(detail: &str, source: &str, at: Option<(usize, &str)>) -> Option<String> {
    let rest = detail.strip_prefix("unexpected ")?;
    let (found, expected) = match rest.split_once(", expected ") {
        Some((found, expected)) => (found, Some(expected)),
        None => (rest, None),
    };
    let (offset, text) = at?;
    let found_name = match found {
        "identifier" => text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()?,
        other => token_name(other)?,
    };
    if let Some(closer) = found_name.chars().next().filter(|c| ")]}".contains(*c)) {
        return Some(unbalanced(source, offset, closer));
    }
    match expected {
        Some(expected) => Some(format!(
            "expected token {}, got {}",
            repr(token_name(expected)?),
            repr(found_name)
        )),
        None if starts_expression(source, offset) => {
            Some(format!("Expected an expression, got {}", repr(found_name)))
        }
        None => Some(format!("unexpected {}", repr(found_name))),
    }
}

/// Jinja2's name for a token MiniJinja describes as `described`.
fn token_name(described: &str) -> Option<&str> {
    Some(match described {
        "end of variable block" => "end of print statement",
        "end of block" => "end of statement block",
        "start of variable block" => "begin of print statement",
        "start of block" => "begin of statement block",
        "end of input" => "end of template",
        "identifier" => "name",
        "integer" | "float" | "string" => described,
        other => match other.strip_prefix('`').and_then(|s| s.strip_suffix('`')) {
            Some(operator) => operator,
            None if other.chars().all(|c| c.is_ascii_lowercase()) => other,
            None => return None,
        },
    })
}

/// Jinja2's lexer checks brackets: a closer with nothing open is unexpected, one that
/// does not match the innermost open bracket names the one expected.
fn unbalanced(source: &str, offset: usize, closer: char) -> String {
    let tag_start = tag_start(source, offset);
    let mut open = Vec::new();
    let mut quote = None;
    for ch in source[tag_start..offset].chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(ch),
            (None, '(') => open.push(')'),
            (None, '[') => open.push(']'),
            (None, '{') => open.push('}'),
            (None, ')' | ']' | '}') => {
                open.pop();
            }
            _ => {}
        }
    }
    match open.last() {
        Some(expected) => format!(
            "unexpected {}, expected {}",
            repr(&closer.to_string()),
            repr(&expected.to_string())
        ),
        None => format!("unexpected {}", repr(&closer.to_string())),
    }
}

/// Whether an expression (list) starts at `offset`: right after `{{`, after the
/// keyword of `{% if %}` / `{% elif %}`, after `in` of a `for`, or after `=` of a `set`.
fn starts_expression(source: &str, offset: usize) -> bool {
    let tokens: Vec<Token> = tokenize(source, false, SyntaxConfig::default())
        .map_while(Result::ok)
        .take_while(|(_, span)| (span.end_offset as usize) <= offset)
        .map(|(token, _)| token)
        .collect();
    let tag_start = tokens
        .iter()
        .rposition(|token| matches!(token, Token::VariableStart | Token::BlockStart));
    let Some(tag_start) = tag_start else {
        return false;
    };
    let tag = &tokens[tag_start + 1..];
    match (tag.first(), tag.last()) {
        (None, _) => matches!(tokens[tag_start], Token::VariableStart),
        (Some(Token::Ident("if" | "elif")), _) if tag.len() == 1 => true,
        (Some(Token::Ident("for")), Some(Token::Ident("in"))) => true,
        (Some(Token::Ident("set")), Some(Token::Assign)) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::translate;

    fn at(source: &str, needle: &str, detail: &str) -> String {
        translate(detail, source, source.rfind(needle))
    }

    // Expectations: Jinja2 3.1.6 on the same sources.
    #[test]
    fn words_token_errors_like_jinja2() {
        assert_eq!(
            at(
                "{{ x y }}",
                "y",
                "unexpected identifier, expected end of variable block"
            ),
            "expected token 'end of print statement', got 'y'"
        );
        assert_eq!(
            at("{{ f(1 }}", "}}", "unexpected `}`, expected `,`"),
            "unexpected '}', expected ')'"
        );
        assert_eq!(
            at(
                "{{ x }",
                "}",
                "unexpected `}`, expected end of variable block"
            ),
            "unexpected '}'"
        );
        assert_eq!(
            at("{% if %}", "%}", "unexpected end of block"),
            "Expected an expression, got 'end of statement block'"
        );
        assert_eq!(
            at("{{ x + }}", "}}", "unexpected end of variable block"),
            "unexpected 'end of print statement'"
        );
        assert_eq!(
            at("{{ x ! }}", "!", "unexpected character"),
            "unexpected char '!' at 5"
        );
    }
}
