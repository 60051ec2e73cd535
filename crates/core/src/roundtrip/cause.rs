//! Why the sampled tokens and the re-rendered ones part, read from the two texts at the
//! first differing token. Each rule names a failure seen in training stacks that
//! re-render the history: a value written back in Python's spelling, JSON with other
//! spacing, an empty tag the template leaves out, and tokens that merge across the edge
//! of the output. A difference none of them explains has no cause (`None`).

use std::fmt;

/// A known reason why the tokens do not survive.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cause {
    /// A value in the output is written back differently: `false` → `False` (a JSON
    /// value printed with Python's `str()`), `1.0` → `1`.
    Reserialised {
        /// As the model wrote it.
        sampled: String,
        /// As the template writes it back.
        rendered: String,
    },
    /// The same JSON with other spacing (`{"a":1}` → `{"a": 1}`).
    JsonSpacing,
    /// Other whitespace: the parse or the template trims or adds it (`\nHi` → `Hi`).
    Whitespace,
    /// An empty element of the output (`<think>\n\n</think>`, `<parameter=x>\n</parameter>`)
    /// that the re-render leaves out.
    DroppedEmptyTag {
        /// The element as sampled.
        tag: String,
    },
    /// An empty element the re-render writes where the output has none.
    AddedEmptyTag {
        /// The element as rendered.
        tag: String,
    },
    /// The text is the same, but a token of the re-render spans the edge of the output:
    /// the prompt's last token and the output's first (or the output's last token and
    /// what the template writes after the turn) merge into one.
    BoundaryMerge {
        /// At the end of the output rather than its start.
        at_end: bool,
    },
    /// The text is the same, but the model's tokens are not the tokenizer's own split of
    /// it (a model may sample `Hel` + `lo` where the tokenizer gives `Hello`).
    Retokenized,
}

impl Cause {
    /// A short name for machine output: `reserialised`, `json_spacing`, `whitespace`,
    /// `dropped_empty_tag`, `added_empty_tag`, `boundary_merge`, `retokenized`.
    pub fn kind(&self) -> &'static str {
        match self {
            Cause::Reserialised { .. } => "reserialised",
            Cause::JsonSpacing => "json_spacing",
            Cause::Whitespace => "whitespace",
            Cause::DroppedEmptyTag { .. } => "dropped_empty_tag",
            Cause::AddedEmptyTag { .. } => "added_empty_tag",
            Cause::BoundaryMerge { .. } => "boundary_merge",
            Cause::Retokenized => "retokenized",
        }
    }
}

impl Cause {
    /// The cause in a few words, for one-line reports: `a boundary merge`, `argument
    /// re-serialisation false → False`.
    pub fn label(&self) -> String {
        match self {
            Cause::Reserialised { sampled, rendered } => {
                format!("argument re-serialisation {sampled} → {rendered}")
            }
            Cause::JsonSpacing => "spacing in JSON".into(),
            Cause::Whitespace => "whitespace".into(),
            Cause::DroppedEmptyTag { .. } => "a dropped empty tag".into(),
            Cause::AddedEmptyTag { .. } => "an added empty tag".into(),
            Cause::BoundaryMerge { .. } => "a boundary merge".into(),
            Cause::Retokenized => "retokenization".into(),
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Reserialised { sampled, rendered } => write!(
                f,
                "argument re-serialisation: the output's `{sampled}` is rendered back as `{rendered}`"
            ),
            Cause::JsonSpacing => f.write_str(
                "spacing in JSON: the template writes the same JSON with other whitespace",
            ),
            Cause::Whitespace => {
                f.write_str("whitespace: the parse or the template trims or adds whitespace here")
            }
            Cause::DroppedEmptyTag { tag } => write!(
                f,
                "a dropped empty tag: the output's {} is not rendered back",
                quoted(tag)
            ),
            Cause::AddedEmptyTag { tag } => write!(
                f,
                "an added empty tag: the template writes {}, which the output lacks",
                quoted(tag)
            ),
            Cause::BoundaryMerge { at_end: false } => f.write_str(
                "a boundary merge: the same text, but the prompt's last token and the output's first merge when tokenized together",
            ),
            Cause::BoundaryMerge { at_end: true } => f.write_str(
                "a boundary merge: the same text, but the output's last token merges with what the template writes after the turn",
            ),
            Cause::Retokenized => f.write_str(
                "retokenization: the same text, but the sampled tokens are not the tokenizer's own split of it",
            ),
        }
    }
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// The two texts from the same place (the start of the prompt's tail), and where the
/// output starts in `sampled`.
pub(super) struct Texts<'t> {
    /// What the expected tokens stand for: the prompt's tail, then the output.
    pub sampled: &'t str,
    /// The re-rendered conversation from the same place (longer: the turn's end).
    pub rendered: &'t str,
    /// Where the output starts in `sampled`.
    pub output_start: usize,
}

/// The cause of the first differing token, whose re-rendered side covers `rendered_token`
/// (byte offsets in `texts.rendered`; `None` when the re-render has no token there).
pub(super) fn cause(texts: &Texts, rendered_token: Option<(usize, usize)>) -> Option<Cause> {
    let at = common_prefix(texts.sampled, texts.rendered);
    if at >= texts.sampled.len() {
        let (start, end) = rendered_token?;
        return Some(if start < texts.output_start && end > texts.output_start {
            Cause::BoundaryMerge { at_end: false }
        } else if end > texts.sampled.len() {
            Cause::BoundaryMerge { at_end: true }
        } else {
            Cause::Retokenized
        });
    }
    reserialised(texts.sampled, texts.rendered, at)
        .or_else(|| empty_tag(texts.sampled, texts.rendered, at))
        .or_else(|| spacing(texts.sampled, texts.rendered, at))
}

/// The length of the longest common prefix of `a` and `b`, on a character boundary.
pub(super) fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or_else(|| a.len().min(b.len()), |((at, _), _)| at)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+')
}

/// The word of `text` that contains byte `at` or starts there, from `start`.
fn word_from(text: &str, start: usize) -> &str {
    let rest = &text[start..];
    let end = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
    &rest[..end]
}

/// A scalar written as JSON or Python writes one: `true`, `None`, `1.5`, `-3`.
fn is_scalar(word: &str) -> bool {
    matches!(
        word,
        "true" | "false" | "null" | "True" | "False" | "None" | "NaN" | "Infinity" | "inf" | "nan"
    ) || word.parse::<f64>().is_ok()
}

/// The differing words around `at`, when both are scalars and the texts agree again
/// after them.
fn reserialised(sampled: &str, rendered: &str, at: usize) -> Option<Cause> {
    let start = sampled[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let (ours, theirs) = (word_from(sampled, start), word_from(rendered, start));
    let resync = sampled[start + ours.len()..].chars().next()
        == rendered[start + theirs.len()..].chars().next();
    (ours != theirs && is_scalar(ours) && is_scalar(theirs) && resync).then(|| {
        Cause::Reserialised {
            sampled: ours.to_string(),
            rendered: theirs.to_string(),
        }
    })
}

/// An empty element (`<name ...>`, whitespace, `</name>`) in one text at the difference
/// that the other text continues without.
fn empty_tag(sampled: &str, rendered: &str, at: usize) -> Option<Cause> {
    // The difference may fall inside the tag's name: start at its `<`.
    let start = match sampled[..at].rfind('<') {
        Some(open) if !sampled[open..at].contains('>') => open,
        _ => at,
    };
    if let Some(end) = empty_element(&sampled[start..]) {
        if continues(&sampled[start + end..], &rendered[start..]) {
            let tag = sampled[start..start + end].to_string();
            return Some(Cause::DroppedEmptyTag { tag });
        }
    }
    let end = empty_element(&rendered[start..])?;
    continues(&rendered[start + end..], &sampled[start..]).then(|| Cause::AddedEmptyTag {
        tag: rendered[start..start + end].to_string(),
    })
}

/// The length of the empty element `text` starts with: `<name>` or `<name=...>` or
/// `<name attrs>`, only whitespace, then `</name>`.
fn empty_element(text: &str) -> Option<usize> {
    let inner = text.strip_prefix('<')?;
    let name_len = inner.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | ':')))?;
    let name = &inner[..name_len];
    let close_at = inner.find('>')?;
    let head = &inner[name_len..close_at];
    if name.is_empty() || head.contains('<') || !(head.is_empty() || head.starts_with(['=', ' '])) {
        return None;
    }
    let body = &inner[close_at + 1..];
    let gap = body.len() - body.trim_start().len();
    let closing = format!("</{name}>");
    body[gap..]
        .starts_with(&closing)
        .then_some(1 + close_at + 1 + gap + closing.len())
}

/// Whether `other` goes on as `rest` does, whitespace aside (at least the next few
/// characters agree, or both end).
fn continues(rest: &str, other: &str) -> bool {
    let (rest, other) = (rest.trim_start(), other.trim_start());
    let n = rest.len().min(other.len()).min(8);
    rest.is_char_boundary(n) && other.is_char_boundary(n) && rest[..n] == other[..n]
}

/// Whitespace on one side at the difference, after which the texts agree again.
fn spacing(sampled: &str, rendered: &str, at: usize) -> Option<Cause> {
    let (a, b) = (&sampled[at..], &rendered[at..]);
    let space = |t: &str| t.starts_with(char::is_whitespace);
    if !(space(a) || space(b)) || !continues(a, b) {
        return None;
    }
    let before = sampled[..at].trim_end().chars().last();
    let after = a.trim_start().chars().next();
    let json = matches!(before, Some(':' | ',' | '{' | '['))
        || matches!(after, Some('}' | ']' | ':' | ','));
    Some(if json {
        Cause::JsonSpacing
    } else {
        Cause::Whitespace
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(sampled: &str, rendered: &str) -> Option<Cause> {
        let texts = Texts {
            sampled,
            rendered,
            output_start: 0,
        };
        cause(&texts, None)
    }

    #[test]
    fn a_json_literal_written_back_by_python_is_reserialised() {
        let cause = of(
            "<parameter=on>\nfalse\n</parameter>",
            "<parameter=on>\nFalse\n</parameter>",
        );
        assert_eq!(
            cause,
            Some(Cause::Reserialised {
                sampled: "false".into(),
                rendered: "False".into()
            })
        );
        assert_eq!(
            of("x 1.0}", "x 1}").map(|c| c.to_string()).as_deref(),
            Some("argument re-serialisation: the output's `1.0` is rendered back as `1`")
        );
        assert_eq!(
            of("Paris", "Lyon"),
            None,
            "other words are no re-serialisation"
        );
    }

    #[test]
    fn spacing_inside_json_and_elsewhere() {
        assert_eq!(
            of(r#"{"city":"Paris"}"#, r#"{"city": "Paris"}"#),
            Some(Cause::JsonSpacing)
        );
        assert_eq!(of("Hi \n<e>", "Hi<e>\n"), Some(Cause::Whitespace));
    }

    #[test]
    fn empty_tags_dropped_or_added() {
        let dropped = of(
            "<function=f>\n<parameter=note>\n</parameter>\n</function>",
            "<function=f>\n</function>",
        );
        assert_eq!(
            dropped,
            Some(Cause::DroppedEmptyTag {
                tag: "<parameter=note>\n</parameter>".into()
            })
        );
        let added = of("Hi<e>", "<think>\n\n</think>\n\nHi<e>");
        assert_eq!(
            added,
            Some(Cause::AddedEmptyTag {
                tag: "<think>\n\n</think>".into()
            })
        );
        assert_eq!(empty_element("<a>x</a>"), None, "not empty");
        assert_eq!(empty_element("<a></b>"), None, "not its closing tag");
    }

    #[test]
    fn the_same_text_differs_by_its_tokens_only() {
        let texts = Texts {
            sampled: "assistant\n\nHi",
            rendered: "assistant\n\nHi<e>",
            output_start: 10,
        };
        // The re-render's token "\n\n" covers bytes 9..11, across the edge at 10.
        assert_eq!(
            cause(&texts, Some((9, 11))),
            Some(Cause::BoundaryMerge { at_end: false })
        );
        assert_eq!(
            cause(&texts, Some((11, 14))),
            Some(Cause::BoundaryMerge { at_end: true })
        );
        assert_eq!(cause(&texts, Some((11, 12))), Some(Cause::Retokenized));
        assert_eq!(common_prefix("é1", "é2"), 2);
    }
}
