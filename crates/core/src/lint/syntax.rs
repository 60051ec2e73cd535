//! The template read as MiniJinja's lexer reads it, without rendering: where names and
//! literals are (for the line of a finding), which constructs it uses (for the
//! portability table) and where it reaches for Python internals (`sandbox-escape`).
//!
//! The token stream is enough for all three and never depends on the template being
//! valid as a whole: a template the lexer cannot finish is read up to the error.

use minijinja::machinery::{tokenize, Span, Token};

use super::Location;
use chatplate_render::syntax_config;

/// Attributes Jinja2's sandbox refuses besides names starting with `__`
/// (`jinja2.sandbox.is_internal_attribute`: frames, code objects, generators,
/// coroutines, `mro` of types, the old function and method attributes).
const INTERNAL: [&str; 25] = [
    "mro",
    "func_globals",
    "func_code",
    "func_closure",
    "func_defaults",
    "func_dict",
    "im_func",
    "im_self",
    "im_class",
    "gi_frame",
    "gi_code",
    "gi_yieldfrom",
    "cr_frame",
    "cr_code",
    "cr_await",
    "ag_code",
    "ag_frame",
    "tb_frame",
    "tb_next",
    "f_back",
    "f_builtins",
    "f_code",
    "f_globals",
    "f_locals",
    "co_code",
];

/// A construct the portability table knows about, as `kind:name`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Construct(pub(crate) String);

/// One reach for Python internals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Escape {
    /// The attribute or key, as written.
    pub(crate) name: String,
    /// Where.
    pub(crate) location: Location,
}

/// The tokens of a template source.
pub(crate) struct Scan<'s> {
    source: &'s str,
    tokens: Vec<(Token<'s>, Span)>,
}

impl<'s> Scan<'s> {
    /// Tokenizes `source` (newlines already normalised) up to its end or first error.
    pub(crate) fn of(source: &'s str) -> Self {
        let tokens = tokenize(source, false, syntax_config())
            .map_while(Result::ok)
            .collect();
        Scan { source, tokens }
    }

    /// The location of byte `offset`.
    pub(crate) fn location(&self, offset: usize) -> Location {
        let (line, column) = crate::compare::line_col(self.source, offset);
        Location { line, column }
    }

    fn at(&self, span: Span) -> Location {
        self.location(span.start_offset as usize)
    }

    /// Where the name `name` is first read in an expression (`bos_token`).
    pub(crate) fn first_ident(&self, name: &str) -> Option<Location> {
        self.tokens
            .iter()
            .find(|(token, _)| matches!(token, Token::Ident(n) if *n == name))
            .map(|(_, span)| self.at(*span))
    }

    /// Where the attribute or key `name` is first read (`x.name` or `x['name']`).
    pub(crate) fn first_name(&self, name: &str) -> Option<Location> {
        self.tokens
            .iter()
            .find(|(token, _)| match token {
                Token::Ident(n) | Token::Str(n) => *n == name,
                _ => false,
            })
            .map(|(_, span)| self.at(*span))
    }

    /// Where `text` first appears in a string literal or in the template's own text.
    pub(crate) fn literal(&self, text: &str) -> Option<Location> {
        self.tokens.iter().find_map(|(token, span)| {
            let (value, start) = match token {
                Token::Str(s) => (*s, span.start_offset as usize + 1),
                Token::String(s) => (&**s, span.start_offset as usize + 1),
                Token::TemplateData(s) => (*s, span.start_offset as usize),
                _ => return None,
            };
            let at = value.find(text)?;
            // Escapes in the literal shift what follows; the token's start is exact.
            let offset = match token {
                Token::String(_) => span.start_offset as usize,
                _ => start + at,
            };
            Some(self.location(offset))
        })
    }

    /// The template's own text: its string literals and the text between its tags.
    pub(crate) fn literals(&self) -> Vec<&str> {
        self.tokens
            .iter()
            .filter_map(|(token, _)| match token {
                Token::Str(s) | Token::TemplateData(s) => Some(*s),
                Token::String(s) => Some(&**s),
                _ => None,
            })
            .collect()
    }

    /// Every attribute or key that reaches for Python internals, in source order.
    pub(crate) fn escapes(&self) -> Vec<Escape> {
        let mut found = Vec::new();
        for (index, (token, span)) in self.tokens.iter().enumerate() {
            let previous = index.checked_sub(1).map(|i| &self.tokens[i].0);
            let name = match (previous, token) {
                (Some(Token::Dot), Token::Ident(name)) if unsafe_name(name) => *name,
                (_, Token::Str(text)) if unsafe_literal(text) => *text,
                (_, Token::String(text)) if unsafe_literal(text) => &**text,
                _ => continue,
            };
            found.push(Escape {
                name: name.to_string(),
                location: self.at(*span),
            });
        }
        found
    }

    /// Every construct of the portability table's kinds, with where it is first used.
    pub(crate) fn constructs(&self) -> Vec<(Construct, Location)> {
        let mut found: Vec<(Construct, Location)> = Vec::new();
        let mut add = |kind: &str, name: &str, span: Span| {
            let construct = Construct(format!("{kind}:{name}"));
            if !found.iter().any(|(c, _)| *c == construct) {
                found.push((construct, self.at(span)));
            }
        };
        let tokens = &self.tokens;
        for (index, (token, span)) in tokens.iter().enumerate() {
            let before = |n: usize| index.checked_sub(n).map(|i| &tokens[i].0);
            let after = tokens.get(index + 1).map(|(t, _)| t);
            match token {
                Token::Ident(name) if matches!(before(1), Some(Token::Pipe)) => {
                    add("filter", name, *span);
                    for keyword in keywords(&tokens[index + 1..]) {
                        add("keyword", &format!("{name}.{keyword}"), *span);
                    }
                }
                Token::Ident(name) if is_test(before(1), before(2)) => add("test", name, *span),
                Token::Ident(name) if matches!(before(1), Some(Token::BlockStart)) => {
                    add("tag", name, *span);
                }
                Token::Ident(name)
                    if matches!(before(1), Some(Token::Dot))
                        && matches!(before(2), Some(Token::Ident("loop"))) =>
                {
                    add("loop", name, *span);
                }
                Token::Ident(name)
                    if matches!(before(1), Some(Token::Dot))
                        && matches!(after, Some(Token::ParenOpen)) =>
                {
                    // Engines differ on arguments (`.strip()` and `.strip('x')`).
                    let bare = matches!(tokens.get(index + 2), Some((Token::ParenClose, _)));
                    let call = if bare {
                        format!("{name}()")
                    } else {
                        format!("{name}(x)")
                    };
                    add("method", &call, *span);
                }
                Token::Ident(name)
                    if matches!(after, Some(Token::ParenOpen))
                        && !matches!(before(1), Some(Token::Dot | Token::Pipe)) =>
                {
                    add("function", name, *span);
                }
                Token::BracketOpen if has_step(&tokens[index + 1..]) => {
                    add("syntax", "slice-step", *span);
                }
                Token::Mod if matches!(before(1), Some(Token::Str(_) | Token::String(_))) => {
                    add("syntax", "percent-format", *span);
                }
                _ => {}
            }
        }
        found
    }
}

/// After `is` (or `is not`), the name is a test.
fn is_test(one: Option<&Token>, two: Option<&Token>) -> bool {
    match one {
        Some(Token::Ident("is")) => true,
        Some(Token::Ident("not")) => matches!(two, Some(Token::Ident("is"))),
        _ => false,
    }
}

/// The keyword arguments of the call that starts `rest` (`(indent=2, x)` gives
/// `indent`), if `rest` starts with one.
fn keywords<'t>(rest: &'t [(Token<'t>, Span)]) -> Vec<&'t str> {
    if !matches!(rest.first(), Some((Token::ParenOpen, _))) {
        return Vec::new();
    }
    let mut depth = 0usize;
    let mut found = Vec::new();
    for (index, (token, _)) in rest.iter().enumerate() {
        match token {
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => depth += 1,
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            Token::Ident(name) if depth == 1 => {
                if matches!(rest.get(index + 1), Some((Token::Assign, _))) {
                    found.push(*name);
                }
            }
            _ => {}
        }
    }
    found
}

/// Whether the subscript after `[` has two colons at its own depth (`[::-1]`).
fn has_step(rest: &[(Token, Span)]) -> bool {
    let mut depth = 0usize;
    let mut colons = 0;
    for (token, _) in rest {
        match token {
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => depth += 1,
            Token::BracketClose if depth == 0 => return colons >= 2,
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                depth = depth.saturating_sub(1);
            }
            Token::Colon if depth == 0 => colons += 1,
            Token::VariableEnd | Token::BlockEnd => return false,
            _ => {}
        }
    }
    false
}

/// An attribute Jinja2's sandbox refuses as internal: a name starting with `__` (dunder
/// and name-mangled attributes) or one of [`INTERNAL`].
fn unsafe_name(name: &str) -> bool {
    name.starts_with("__") || INTERNAL.contains(&name)
}

/// A string literal that names an internal attribute (for `attr()`, `map(attribute=)`,
/// subscripts) or reaches one through `str.format` (`"{0.__class__}"`).
fn unsafe_literal(text: &str) -> bool {
    let dotted = text.split('.').any(unsafe_name) && !text.contains(char::is_whitespace);
    dotted || format_field_escape(text)
}

/// A `str.format` replacement field that walks into an attribute starting with `_`.
fn format_field_escape(text: &str) -> bool {
    text.split('{').skip(1).any(|field| {
        let field = field.split('}').next().unwrap_or_default();
        field.contains("._") || field.contains("[_")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycler_escape_is_found_with_its_line() {
        let source = "Hello\n{{ cycler.__init__.__globals__ }}";
        let escapes = Scan::of(source).escapes();
        let names: Vec<&str> = escapes.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["__init__", "__globals__"]);
        assert_eq!(
            escapes[0].location,
            Location {
                line: 2,
                column: 11
            }
        );
    }

    #[test]
    fn keys_attr_calls_and_format_fields_are_escapes_too() {
        let found = |source: &str| Scan::of(source).escapes().len();
        assert_eq!(found("{{ x['__class__'] }}"), 1);
        assert_eq!(found("{{ x | attr('__subclasses__') }}"), 1);
        assert_eq!(found("{{ '{0.__class__}'.format(x) }}"), 1);
        assert_eq!(found("{{ ().__class__.mro() }}"), 2);
        // Ordinary templates: private-looking names, keys with underscores, prose.
        assert_eq!(
            found("{% set _ns = namespace(a=1) %}{{ m['_meta'] }}{{ m.tool_calls }}"),
            0
        );
        assert_eq!(found("{{ 'use __init__ wisely' }}"), 0);
    }

    #[test]
    fn constructs_are_named_by_kind() {
        let source = "{% for m in messages[::-1] %}{{ m.content.strip() | tojson(indent=2) }}\
                      {% if m is string %}{{ loop.previtem }}{% endif %}{% endfor %}\
                      {% generation %}{{ '%s' % x }}{{ namespace(a=1) }}{% endgeneration %}";
        let names: Vec<String> = Scan::of(source)
            .constructs()
            .into_iter()
            .map(|(c, _)| c.0)
            .collect();
        for expected in [
            "tag:for",
            "syntax:slice-step",
            "method:strip()",
            "filter:tojson",
            "keyword:tojson.indent",
            "test:string",
            "loop:previtem",
            "tag:generation",
            "syntax:percent-format",
            "function:namespace",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} in {names:?}"
            );
        }
    }

    #[test]
    fn names_and_literals_have_their_lines() {
        let scan = Scan::of("{{ bos_token }}\n{{- '<|im_start|>' + role }}<|im_end|>");
        assert_eq!(
            scan.first_ident("bos_token"),
            Some(Location { line: 1, column: 4 })
        );
        assert_eq!(
            scan.literal("<|im_start|>"),
            Some(Location { line: 2, column: 6 })
        );
        assert_eq!(
            scan.literal("<|im_end|>"),
            Some(Location {
                line: 2,
                column: 29
            })
        );
    }
}
