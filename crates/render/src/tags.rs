//! Block structure as Jinja2's parser sees it, for its syntax errors.
//!
//! A template with an unclosed `{% for %}` or a stray `{% endif %}` fails in both
//! engines, but Jinja2 says which tags it was looking for and which block is still
//! open ("Unexpected end of template. Jinja was looking for the following tags: 'endfor'
//! or 'else'. The innermost block that needs to be closed is 'for'."). This scan walks
//! the block tags of the user's source with the tag set transformers' environment knows
//! (Jinja2's statements, `{% generation %}` and the loop controls) and reports the first
//! structural error with Jinja2's wording. It also catches the tags MiniJinja accepts and
//! Jinja2 does not (`{% do %}` is not enabled in transformers).

use minijinja::machinery::{tokenize, Token};
use minijinja::syntax::SyntaxConfig;

use super::pyerror::repr;

/// A structural syntax error: Jinja2's message and the byte offset it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagError {
    /// Jinja2's message.
    pub message: String,
    /// Where in the source (the tag, or the end of the template).
    pub offset: usize,
}

/// An open block: its tag and the tags that may continue or close it.
struct Open<'a> {
    tag: &'a str,
    expecting: &'static [&'static str],
}

/// Tags that are complete statements on their own.
const STATEMENTS: [&str; 8] = [
    "extends", "include", "import", "from", "print", "break", "continue", "set",
];

/// Whether `source` has a `{% do %}` tag (a quick textual test; [`check`] decides).
pub(crate) fn has_do_tag(source: &str) -> bool {
    // A one-byte search for `{` finds the tags faster than a two-byte pattern.
    let bytes = source.as_bytes();
    source.match_indices('{').any(|(at, _)| {
        if bytes.get(at + 1) != Some(&b'%') {
            return false;
        }
        let rest = source[at + 2..].trim_start_matches(['-', '+']).trim_start();
        rest.strip_prefix("do").is_some_and(|after| {
            after.starts_with(|c: char| c.is_whitespace() || c == '%' || c == '-')
        })
    })
}

/// The first block-structure error in `source`, if any. Lexical errors are left to the
/// compiler.
pub(crate) fn check(source: &str) -> Option<TagError> {
    let mut tokens = tokenize(source, false, SyntaxConfig::default()).map_while(Result::ok);
    let mut stack: Vec<Open> = Vec::new();
    while let Some((token, span)) = tokens.next() {
        if !matches!(token, Token::BlockStart) {
            continue;
        }
        let offset = span.start_offset as usize;
        let mut tag: Vec<Token> = Vec::new();
        let mut closed = false;
        for (token, _) in tokens.by_ref() {
            if matches!(token, Token::BlockEnd) {
                closed = true;
                break;
            }
            tag.push(token);
        }
        if !closed {
            // A tag the template ends inside: a lexical error, the compiler's to report.
            return None;
        }
        let Some(Token::Ident(name)) = tag.first() else {
            continue;
        };
        if let Some(error) = step(&mut stack, name, &tag, offset) {
            return Some(error);
        }
    }
    (!stack.is_empty()).then(|| TagError {
        message: unexpected(None, &stack),
        offset: source.len(),
    })
}

/// Applies one tag to the stack of open blocks.
fn step<'a>(
    stack: &mut Vec<Open<'a>>,
    name: &'a str,
    tag: &[Token],
    offset: usize,
) -> Option<TagError> {
    if let Some(top) = stack.last_mut() {
        if top.expecting.contains(&name) {
            match continuation(top.tag, name) {
                Some(expecting) => top.expecting = expecting,
                None => {
                    stack.pop();
                }
            }
            return None;
        }
    }
    if let Some(expecting) = opens(name, tag) {
        stack.push(Open {
            tag: name,
            expecting,
        });
        return None;
    }
    if STATEMENTS.contains(&name) {
        return None;
    }
    Some(TagError {
        message: unexpected(Some(name), stack),
        offset,
    })
}

/// The tags that may follow `tag`'s `name` (its `else` or `elif`); `None` when `name`
/// closes the block.
fn continuation(tag: &str, name: &str) -> Option<&'static [&'static str]> {
    match (tag, name) {
        ("if", "elif") => Some(&["elif", "else", "endif"]),
        ("if", "else") => Some(&["endif"]),
        ("for", "else") => Some(&["endfor"]),
        _ => None,
    }
}

/// The tags a block opened by `name` waits for, if `name` opens a block.
fn opens(name: &str, tag: &[Token]) -> Option<&'static [&'static str]> {
    Some(match name {
        "for" => &["endfor", "else"],
        "if" => &["elif", "else", "endif"],
        "macro" => &["endmacro"],
        "call" => &["endcall"],
        "filter" => &["endfilter"],
        "with" => &["endwith"],
        "autoescape" => &["endautoescape"],
        "block" => &["endblock"],
        "generation" => &["endgeneration"],
        "set" if !assigns(tag) => &["endset"],
        _ => return None,
    })
}

/// `{% set x = ... %}` (a statement) rather than `{% set x %}...{% endset %}`.
fn assigns(tag: &[Token]) -> bool {
    let mut depth = 0i32;
    for token in tag {
        match token {
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => depth += 1,
            Token::ParenClose | Token::BracketClose | Token::BraceClose => depth -= 1,
            Token::Assign if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Jinja2's message for an unknown tag (`name`) or the end of the template (`None`).
fn unexpected(name: Option<&str>, stack: &[Open]) -> String {
    let mut message = vec![match name {
        Some(name) => format!("Encountered unknown tag {}.", repr(name)),
        None => "Unexpected end of template.".to_string(),
    }];
    if let Some(top) = stack.last() {
        let looking = top
            .expecting
            .iter()
            .map(|tag| repr(tag))
            .collect::<Vec<_>>()
            .join(" or ");
        let expected_anywhere =
            name.is_some_and(|name| stack.iter().any(|open| open.expecting.contains(&name)));
        message.push(if expected_anywhere {
            format!(
                "You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for {looking}."
            )
        } else {
            format!("Jinja was looking for the following tags: {looking}.")
        });
        message.push(format!(
            "The innermost block that needs to be closed is {}.",
            repr(top.tag)
        ));
    }
    message.join(" ")
}

#[cfg(test)]
mod tests {
    use super::check;

    fn message(source: &str) -> Option<String> {
        check(source).map(|error| error.message)
    }

    // Expectations: Jinja2 3.1.6 (transformers' environment) on the same sources.
    #[test]
    fn reports_unclosed_blocks_like_jinja2() {
        assert_eq!(
            message("{% for x in y %}").as_deref(),
            Some("Unexpected end of template. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.")
        );
        assert_eq!(
            message("{% generation %}").as_deref(),
            Some("Unexpected end of template. Jinja was looking for the following tags: 'endgeneration'. The innermost block that needs to be closed is 'generation'.")
        );
    }

    #[test]
    fn reports_unknown_and_misplaced_tags_like_jinja2() {
        assert_eq!(
            message("{% endfor %}").as_deref(),
            Some("Encountered unknown tag 'endfor'.")
        );
        assert_eq!(
            message("{% if x %}{% for y in z %}{% endif %}").as_deref(),
            Some("Encountered unknown tag 'endif'. You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.")
        );
        assert_eq!(
            message("{% if x %}{% else %}{% else %}{% endif %}").as_deref(),
            Some("Encountered unknown tag 'else'. Jinja was looking for the following tags: 'endif'. The innermost block that needs to be closed is 'if'.")
        );
        assert_eq!(
            message("{% do x.append(1) %}").as_deref(),
            Some("Encountered unknown tag 'do'.")
        );
    }

    #[test]
    fn accepts_well_formed_templates() {
        let source = "{% set a = 1 %}{% set b %}x{% endset %}{% for x in y %}{% if x %}{% break %}{% elif z %}{% else %}{% endif %}{% else %}{% endfor %}{% generation %}{% endgeneration %}{% raw %}{% endfor %}{% endraw %}";
        assert_eq!(message(source), None);
    }
}
