//! Injection warnings in token mode: user, tool or document text that the session's
//! tokenizer turns into a special token (a `<|im_end|>` typed by a user ends the turn
//! for the model). Found on the worker with the tokens ([`chatplate_core::worker::Job::Tokenize`],
//! `chatplate_core::tokens::injection`); here they are only drawn: a `⚠` on the message's row in
//! the list, the explanation (which token, what `split_special_tokens=true` would
//! change) under the selected message's fields, and a count in the prompt's title.

use ratatui::text::Line;

use chatplate_core::tokens::injection::Injection;
use chatplate_core::worker::tokenizing::TokenizedPrompt;

use crate::tui::panes::messages::fields::Row;
use crate::tui::theme::Theme;

/// The flag on a message row with injected special tokens.
pub const FLAG: &str = "⚠";

/// Whether message `index`'s content becomes a special token the model receives, in
/// `shown` (the tokens of the shown prompt, once they arrived in token mode).
pub fn injected(shown: Option<&TokenizedPrompt>, index: usize) -> bool {
    shown.is_some_and(|t| t.injections_in(index).any(|i| i.special && i.active))
}

/// The explanation for the selected row, wrapped to `width`: one line per distinct
/// token, then what `split_special_tokens` would do.
pub fn warning_lines(
    shown: Option<&TokenizedPrompt>,
    row: Row,
    width: u16,
    theme: Theme,
) -> Vec<Line<'static>> {
    let (Row::Message(index), Some(shown)) = (row, shown) else {
        return Vec::new();
    };
    let found: Vec<&Injection> = shown.injections_in(index).collect();
    if found.is_empty() {
        return Vec::new();
    }
    let mut texts: Vec<String> = Vec::new();
    // The special tokens the model receives, in one sentence (a screen has little room).
    let mut active: Vec<String> = Vec::new();
    for injection in found.iter().filter(|i| i.special && i.active) {
        let text = format!("{:?} (id {})", injection.token, injection.id);
        if !active.contains(&text) {
            active.push(text);
        }
    }
    if !active.is_empty() {
        let plural = if active.len() > 1 { "s" } else { "" };
        texts.push(format!(
            "{FLAG} text becomes special token{plural} {}",
            active.join(", ")
        ));
    }
    for injection in found.iter().filter(|i| !(i.special && i.active)) {
        let times = found.iter().filter(|i| i.id == injection.id).count();
        let text = describe(injection, times);
        if !texts.contains(&text) {
            texts.push(text);
        }
    }
    if let (Some(special), Some(effect)) = (found.iter().find(|i| i.special), shown.split_effect) {
        let flipped = if effect.configured { "false" } else { "true" };
        texts.push(format!(
            "with split_special_tokens={flipped}: {:?} → {} plain tokens, but the \
             template's own {} special tokens → {} too",
            special.token,
            special.split_ids.len(),
            effect.special,
            effect.flipped_special
        ));
    }
    let width = usize::from(width).max(10);
    let style = theme.error();
    (texts.iter())
        .flat_map(|text| wrap(text, width))
        .map(|line| Line::styled(line, style))
        .collect()
}

/// A token the model does not get as a control token, as a sentence.
fn describe(injection: &Injection, times: usize) -> String {
    let times = if times > 1 {
        format!(" ({times}×)")
    } else {
        String::new()
    };
    let token = &injection.token;
    if injection.special {
        format!(
            "text matches special token {token:?}{times}, kept as text \
             (split_special_tokens is on)"
        )
    } else {
        format!(
            "text becomes added token {token:?} (id {}){times}: not special, but the \
             model reads it as markup",
            injection.id
        )
    }
}

/// Greedy word wrap to `width` columns (a word longer than a line is cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let word: String = word.chars().take(width).collect();
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wraps_words_to_the_width() {
        assert_eq!(wrap("ab cd ef", 5), ["ab cd", "ef"]);
        assert_eq!(wrap("abcdefgh ij", 4), ["abcd", "ij"]);
        assert!(wrap("", 4).is_empty());
    }
}
