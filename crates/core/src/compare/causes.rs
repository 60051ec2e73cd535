//! Why two renders of one conversation differ, told from the bytes and errors alone by
//! general rules (never per template): each rule undoes one kind of difference in both
//! prompts, and the first rule after which they are equal names the cause.

use std::fmt;

use serde::Serialize;

/// A kind of difference between an engine's render and the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Cause {
    /// Only spaces after `:` and `,` differ (JSON separators, `tojson` spacing).
    JsonSpacing,
    /// Only `\uXXXX` escapes differ (`tojson`'s HTML-safe or ASCII escaping).
    JsonEscaping,
    /// Only HTML escapes differ (`&#34;`, `&quot;`, `&amp;`, ...: `escape`, autoescaped
    /// markup).
    HtmlEscaping,
    /// Only other whitespace differs (`trim_blocks`, `lstrip_blocks`, `-` controls).
    Whitespace,
    /// `True`/`False`/`None` against `true`/`false`/`null` or nothing.
    BooleansNone,
    /// The same numbers printed differently (`1.0` / `1`, float digits).
    Numbers,
    /// Strings, lists or dicts printed another way (quotes, Python repr).
    Printing,
    /// Some of the above together.
    Several,
    /// Differs in another way.
    Other,
    /// The engine lacks a filter the template uses.
    MissingFilter,
    /// The engine lacks a method or function the template calls.
    MissingMethod,
    /// The engine refuses arguments the template passes (`tojson(ensure_ascii=False)`).
    Arguments,
    /// The engine fails on `None` or an undefined value that Jinja2 lets through.
    NoneOrUndefined,
    /// The engine cannot parse the template.
    Syntax,
    /// The engine raises, for another reason, where the reference renders.
    Raises,
    /// The engine renders where the reference raises.
    RendersWhereReferenceRaises,
    /// The same text, cut into other tokens (an engine compared by tokens).
    Tokens,
}

impl Cause {
    /// How the report names it.
    pub fn label(self) -> &'static str {
        match self {
            Cause::JsonSpacing => "tojson / JSON spacing",
            Cause::JsonEscaping => "tojson escaping (\\uXXXX)",
            Cause::HtmlEscaping => "HTML escaping (&#34;, &amp;, ...)",
            Cause::Whitespace => "whitespace control",
            Cause::BooleansNone => "booleans / None",
            Cause::Numbers => "number formatting",
            Cause::Printing => "printing strings, lists, dicts",
            Cause::Several => "several of these at once",
            Cause::Other => "other output difference",
            Cause::MissingFilter => "raises: missing filter",
            Cause::MissingMethod => "raises: missing method or function",
            Cause::Arguments => "raises: arguments it does not take",
            Cause::NoneOrUndefined => "raises: on None or undefined values",
            Cause::Syntax => "raises: syntax it cannot parse",
            Cause::Raises => "raises where transformers renders",
            Cause::RendersWhereReferenceRaises => "renders where transformers raises",
            Cause::Tokens => "same text, other tokens",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A normalisation that undoes one kind of difference.
type Rule = fn(&str) -> String;

/// The output rules, in the order they are tried.
const RULES: [(Cause, Rule); 7] = [
    (Cause::JsonSpacing, json_separators),
    (Cause::JsonEscaping, unescape_unicode),
    (Cause::HtmlEscaping, unescape_html),
    (Cause::Whitespace, no_whitespace),
    (Cause::BooleansNone, python_constants),
    (Cause::Numbers, numbers),
    (Cause::Printing, quotes),
];

/// Why `got` differs from `want` (the reference), `None` when they agree.
pub fn classify(want: &Result<String, String>, got: &Result<String, String>) -> Option<Cause> {
    match (want, got) {
        (Ok(want), Ok(got)) if want == got => None,
        (Ok(want), Ok(got)) => Some(output_cause(want, got)),
        (Err(_), Err(_)) => None,
        (Ok(_), Err(error)) => Some(error_cause(error)),
        (Err(_), Ok(_)) => Some(Cause::RendersWhereReferenceRaises),
    }
}

fn output_cause(want: &str, got: &str) -> Cause {
    for (cause, rule) in RULES {
        if rule(want) == rule(got) {
            return cause;
        }
    }
    let all = |text: &str| {
        RULES
            .iter()
            .fold(text.to_string(), |text, (_, rule)| rule(&text))
    };
    if all(want) == all(got) {
        Cause::Several
    } else {
        Cause::Other
    }
}

/// The kind of an error, from the words engines use for it.
fn error_cause(error: &str) -> Cause {
    let lower = error.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|word| lower.contains(word));
    // `Unknown StringValue filter: x`, `unknown method: ...`: the thing is named after.
    let unknown = |thing: &str| lower.contains("unknown") && lower.contains(thing);
    if has(&["no filter named", "filter not found"]) || unknown("filter") {
        Cause::MissingFilter
    } else if has(&["keyword argument", "too many arguments", "missing argument"]) {
        Cause::Arguments
    } else if has(&["type none", "nonetype", "undefined", "null", "none has no"]) {
        Cause::NoneOrUndefined
    } else if unknown("method")
        || has(&[
            "has no method",
            "is not a function",
            "not callable",
            "unknown function",
            "has no attribute",
            "unknown test",
        ])
    {
        Cause::MissingMethod
    } else if has(&[
        "syntax",
        "unexpected",
        "expected token",
        "unknown statement",
        "unknown tag",
    ]) {
        Cause::Syntax
    } else {
        Cause::Raises
    }
}

/// Spaces after `:` and `,` removed.
fn json_separators(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut after_separator = false;
    for ch in text.chars() {
        if after_separator && ch == ' ' {
            continue;
        }
        after_separator = matches!(ch, ':' | ',');
        out.push(ch);
    }
    out
}

/// `\uXXXX` escapes replaced by their character.
fn unescape_unicode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let hex = rest
            .get(at + 2..at + 6)
            .and_then(|h| u32::from_str_radix(h, 16).ok());
        if let Some(ch) = hex.and_then(char::from_u32) {
            out.push(ch);
            rest = &rest[at + 6..];
        } else {
            out.push_str("\\u");
            rest = &rest[at + 2..];
        }
    }
    out.push_str(rest);
    out
}

/// The HTML escapes Jinja's `escape` writes, replaced by their characters.
fn unescape_html(text: &str) -> String {
    [
        ("&#34;", "\""),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&#x27;", "'"),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(text.to_string(), |text, (escape, plain)| {
        text.replace(escape, plain)
    })
}

fn no_whitespace(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Python's and JSON's constants to one spelling; `None`/`null` printed as nothing too.
fn python_constants(text: &str) -> String {
    words(text, |word| match word {
        "True" | "true" => Some(String::from("true")),
        "False" | "false" => Some(String::from("false")),
        "None" | "none" | "null" | "undefined" => Some(String::new()),
        _ => None,
    })
}

/// Every number (digits, a fraction, an exponent) to one spelling: its value, to 6
/// significant digits.
fn numbers(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut at, mut copied) = (0, 0);
    while at < bytes.len() {
        let starts = bytes[at].is_ascii_digit() && (at == 0 || !is_word_byte(bytes[at - 1]));
        if !starts {
            at += 1;
            continue;
        }
        let end = number_end(bytes, at);
        if let Ok(value) = text[at..end].parse::<f64>() {
            out.push_str(&text[copied..at]);
            out.push_str(&format!("{value:.5e}"));
            copied = end;
        }
        at = end;
    }
    out.push_str(&text[copied..]);
    out
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.'
}

/// Where the number starting at `start` ends: digits, `.digits`, `e[+-]digits`.
fn number_end(bytes: &[u8], start: usize) -> usize {
    let digits = |mut at: usize| {
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        at
    };
    let mut end = digits(start);
    if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end = digits(end + 1);
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        if bytes.get(end + 1 + sign).is_some_and(u8::is_ascii_digit) {
            end = digits(end + 1 + sign);
        }
    }
    end
}

/// Single quotes as double quotes (Python's repr against JSON), `[object Object]` and
/// other JavaScript renderings of a container as `{}`.
fn quotes(text: &str) -> String {
    text.replace('\'', "\"").replace("[object Object]", "{}")
}

/// `text` with each identifier-like word that `map` maps replaced.
fn words(text: &str, map: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match map(word) {
            Some(replaced) => out.push_str(&replaced),
            None => out.push_str(word),
        }
        word.clear();
    };
    for ch in text.chars() {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cause(want: &str, got: &str) -> Option<Cause> {
        classify(&Ok(want.into()), &Ok(got.into()))
    }

    #[test]
    fn each_rule_names_its_own_difference() {
        assert_eq!(cause("a", "a"), None);
        assert_eq!(
            cause(r#"{"a": 1, "b": 2}"#, r#"{"a":1,"b":2}"#),
            Some(Cause::JsonSpacing)
        );
        assert_eq!(
            cause(r#""it's""#, r#""it\u0027s""#),
            Some(Cause::JsonEscaping)
        );
        assert_eq!(cause("<s>\nHi\n", "<s>Hi"), Some(Cause::Whitespace));
        assert_eq!(
            cause("{&#34;a&#34;: 1}", "{\"a\": 1}"),
            Some(Cause::HtmlEscaping)
        );
        assert_eq!(
            cause("x=True y=None.", "x=true y=."),
            Some(Cause::BooleansNone)
        );
        assert_eq!(
            cause("0.3333333333333333", "0.333333"),
            Some(Cause::Numbers)
        );
        assert_eq!(cause("1.0", "1"), Some(Cause::Numbers));
        assert_eq!(
            cause("x 2.5e+20", "x 250000000000000000000.0"),
            Some(Cause::Numbers)
        );
        assert_eq!(cause("v1.0", "v1"), Some(Cause::Other));
        assert_eq!(cause("['a', 'b']", "[\"a\",\"b\"]"), Some(Cause::Several));
        assert_eq!(cause("{'a': 1}", "[object Object]"), Some(Cause::Other));
        assert_eq!(cause("['a']", "[\"a\"]"), Some(Cause::Printing));
        assert_eq!(cause("hello", "world"), Some(Cause::Other));
    }

    #[test]
    fn errors_are_told_apart_by_their_words() {
        let raised = |message: &str| classify(&Ok("x".into()), &Err(message.into()));
        assert_eq!(raised("unknown filter: tojson"), Some(Cause::MissingFilter));
        let object_filter = "Error: Unknown ObjectValue filter: string";
        assert_eq!(raised(object_filter), Some(Cause::MissingFilter));
        let undefined = "Error: Cannot apply filter \"trim\" to type: UndefinedValue";
        assert_eq!(raised(undefined), Some(Cause::NoneOrUndefined));
        assert_eq!(
            raised("unknown method: string has no method named upper"),
            Some(Cause::MissingMethod)
        );
        assert_eq!(
            raised("syntax error: unexpected end of input"),
            Some(Cause::Syntax)
        );
        assert_eq!(raised("division by zero"), Some(Cause::Raises));
        let arguments = "too many arguments: unknown keyword argument 'ensure_ascii'";
        assert_eq!(raised(arguments), Some(Cause::Arguments));
        let none = "invalid operation: cannot calculate length of value of type none";
        assert_eq!(raised(none), Some(Cause::NoneOrUndefined));
        let both = classify(&Err("a".into()), &Err("b".into()));
        assert_eq!(both, None);
        let renders = classify(&Err("a".into()), &Ok("b".into()));
        assert_eq!(renders, Some(Cause::RendersWhereReferenceRaises));
    }
}
