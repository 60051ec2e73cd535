//! Styling one prompt line: special tokens, the selected message's span, search matches
//! and (optionally) visible whitespace. Only lines on screen are styled.
//!
//! Special tokens are found by shape: `<|...|>`, `<｜...｜>`, `<word>` / `</word>` tags,
//! `[INST]`-style upper-case bracket tokens, plus the session's own bos/eos strings.
//! Whitespace marks follow [`chatplate_render::visible::visible_whitespace`]: `→` tab, `·` trailing
//! space, `␍` carriage return, `␊` end of line.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;
use chatplate_core::tokens::Tokenized;

/// Longest special token recognised by shape, in bytes.
const MAX_TOKEN: usize = 64;

/// What to highlight on a line, in prompt byte offsets.
#[derive(Debug, Clone)]
pub struct Marks<'a> {
    /// Literal special tokens (bos / eos).
    pub specials: &'a [String],
    /// The selected message's part of the prompt (sorted ranges).
    pub selected: &'a [Range<usize>],
    /// The prompt cursor (a character, or a token in token mode), when shown.
    pub cursor: Option<Range<usize>>,
    /// Search matches, sorted.
    pub matches: &'a [Range<usize>],
    /// Show whitespace marks.
    pub whitespace: bool,
    /// The styles.
    pub theme: Theme,
    /// The prompt's tokens in token mode: boundaries are shown, and specials are the
    /// tokens the tokenizer marks special (instead of the shapes above).
    pub tokens: Option<&'a Tokenized>,
    /// The bytes of the tokens the assistant mask trains on (sorted ranges), in token
    /// mode.
    pub trained: &'a [Range<usize>],
}

/// Styles `text`, a prompt line starting at byte `start`; `newline` says whether a line
/// break follows it.
pub fn prompt_line(text: &str, start: usize, newline: bool, marks: &Marks) -> Line<'static> {
    let tokens = match marks.tokens {
        Some(_) => Vec::new(),
        None => special_tokens(text, marks.specials),
    };
    let trailing = text.trim_end_matches(' ').len();
    let mut spans: Vec<Span<'static>> = Vec::new();
    for (offset, ch) in text.char_indices() {
        let at = marks.tokens.and_then(|t| token_shade(t, start + offset));
        let in_token = tokens.iter().any(|t| t.contains(&offset)) || at.is_some_and(|a| a.special);
        let (shown, is_mark) = display(ch, offset >= trailing, marks.whitespace);
        let mut style = if is_mark {
            marks.theme.whitespace()
        } else {
            Style::new()
        };
        if let Some(at) = at {
            if at.starts && offset > 0 && !marks.theme.color {
                // NO_COLOR: shades cannot show, so a mark separates the tokens.
                push(&mut spans, "¦".into(), marks.theme.dim());
            }
            if at.odd {
                style = style.patch(marks.theme.alternate_token());
            }
        }
        if marks.trained.iter().any(|r| r.contains(&(start + offset))) {
            style = style.patch(marks.theme.trained());
        }
        if in_token {
            style = style.patch(marks.theme.token());
        }
        style = overlay(style, start + offset, marks);
        push(&mut spans, shown, style);
    }
    let end = start + text.len();
    if newline && marks.whitespace {
        let style = overlay(marks.theme.whitespace(), end, marks);
        push(&mut spans, "␊".into(), style);
    } else if marks.cursor.as_ref().is_some_and(|c| c.start == end) {
        // The cursor on a line break (or the end) that is not drawn.
        push(&mut spans, " ".into(), marks.theme.cursor());
    }
    Line::from(spans)
}

fn overlay(style: Style, offset: usize, marks: &Marks) -> Style {
    let mut style = style;
    if marks.selected.iter().any(|r| r.contains(&offset)) {
        style = style.patch(marks.theme.selected_span());
    }
    if marks.matches.iter().any(|m| m.contains(&offset)) {
        style = style.patch(marks.theme.search_match());
    }
    if marks.cursor.as_ref().is_some_and(|c| c.contains(&offset)) {
        style = style.patch(marks.theme.cursor());
    }
    style
}

/// Where a prompt byte sits among the tokens.
#[derive(Debug, Clone, Copy)]
struct TokenShade {
    /// An odd-numbered token (shaded differently from its neighbours).
    odd: bool,
    /// The byte starts its token.
    starts: bool,
    /// The tokenizer says the token is special.
    special: bool,
}

fn token_shade(tokenized: &Tokenized, offset: usize) -> Option<TokenShade> {
    let index = tokenized.token_at(offset)?;
    let token = tokenized.tokens[index];
    Some(TokenShade {
        odd: index % 2 == 1,
        starts: token.start == offset,
        special: token.special,
    })
}

/// Appends `text` to the last span when the style is the same.
fn push(spans: &mut Vec<Span<'static>>, text: String, style: Style) {
    match spans.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push_str(&text),
        _ => spans.push(Span::styled(text, style)),
    }
}

/// How a character is drawn, and whether that is a whitespace mark. Control characters
/// are always escaped so they cannot disturb the terminal.
pub(in crate::tui) fn display(ch: char, trailing: bool, whitespace: bool) -> (String, bool) {
    match ch {
        '\t' if whitespace => ("→".into(), true),
        '\t' => ("    ".into(), false),
        ' ' if whitespace && trailing => ("·".into(), true),
        '\r' => ("␍".into(), true),
        c if c.is_control() => (format!("\\u{{{:04x}}}", c as u32), true),
        c => (c.to_string(), false),
    }
}

/// Byte ranges of special tokens in `text`.
pub fn special_tokens(text: &str, specials: &[String]) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let len = specials
            .iter()
            .find(|s| !s.is_empty() && rest.starts_with(s.as_str()))
            .map(String::len)
            .or_else(|| shaped_token(rest));
        match len {
            Some(len) => {
                found.push(at..at + len);
                at += len;
            }
            None => at += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    found
}

/// The length of a token of a known shape at the start of `text`.
fn shaped_token(text: &str) -> Option<usize> {
    let delimited = |open: &str, close: &str| {
        let body = text.strip_prefix(open)?;
        let end = body
            .get(..MAX_TOKEN.min(body.len()))
            .unwrap_or(body)
            .find(close)?;
        Some(open.len() + end + close.len())
    };
    delimited("<|", "|>")
        .or_else(|| delimited("<｜", "｜>"))
        .or_else(|| {
            word_token(text, '<', '>', |c| {
                c.is_ascii_alphanumeric() || c == '_' || c == '-'
            })
        })
        .or_else(|| {
            word_token(text, '[', ']', |c| {
                c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'
            })
        })
}

/// `<word>`, `</word>`, `[WORD]`, `[/WORD]`: a word of `allowed` characters that starts
/// with a letter (or `_`) between the brackets.
fn word_token(
    text: &str,
    open: char,
    close: char,
    allowed: impl Fn(char) -> bool,
) -> Option<usize> {
    let body = text.strip_prefix(open)?;
    let body = body.strip_prefix('/').unwrap_or(body);
    let word_len = body.find(|c: char| !allowed(c))?;
    let first = body.chars().next()?;
    let starts_well = first.is_ascii_alphabetic() || first == '_';
    let closed = body[word_len..].starts_with(close);
    (starts_well && closed && word_len > 0 && word_len < MAX_TOKEN)
        .then(|| text.len() - body.len() + word_len + close.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::special_tokens;

    fn tokens(text: &str) -> Vec<&str> {
        special_tokens(text, &["<s>".to_string()])
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn finds_each_token_shape() {
        assert_eq!(tokens("<|im_start|>user"), vec!["<|im_start|>"]);
        assert_eq!(tokens("a<｜User｜>b"), vec!["<｜User｜>"]);
        assert_eq!(
            tokens("<start_of_turn>x</tool_call>"),
            vec!["<start_of_turn>", "</tool_call>"]
        );
        assert_eq!(tokens("[INST] hi [/INST]"), vec!["[INST]", "[/INST]"]);
        assert_eq!(tokens("<s>[1, 2] a < b > c"), vec!["<s>"]);
    }
}
