//! Jinja2's `wordwrap`: each line of the text wrapped on its own by Python's
//! `textwrap.wrap` (tabs kept, whitespace not replaced, leading and trailing spaces of
//! wrapped lines dropped), joined with the wrap string.
//!
//! `textwrap` first cuts the text into chunks, words and runs of whitespace, and with
//! `break_on_hyphens` also after the hyphen of a hyphenated word (`goof-`, `ball`) and
//! around em-dashes (`--`); then it fills lines greedily with whole chunks, breaking
//! a chunk only when it is longer than a line. The chunking follows `textwrap`'s
//! `wordsep_re` rule by rule.

use minijinja::value::{Kwargs, Rest, Value};
use minijinja::{Error, State};

use super::pyerror::raise;
use super::pyrepr::to_str;
use super::strmethods::is_space;

/// Registers the filter.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    env.add_filter("wordwrap", wordwrap);
}

/// The options `textwrap.wrap` gets from the filter.
#[derive(Clone, Copy)]
struct Options {
    width: i64,
    break_long_words: bool,
    break_on_hyphens: bool,
}

/// `wordwrap(s, width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True)`.
fn wordwrap(
    state: &State,
    value: Value,
    args: Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let arg = |index: usize, name: &str| -> Result<Option<Value>, Error> {
        Ok(kwargs
            .get::<Option<Value>>(name)?
            .or_else(|| args.get(index).cloned()))
    };
    let width = arg(0, "width")?.and_then(|v| v.as_i64()).unwrap_or(79);
    let options = Options {
        width,
        break_long_words: arg(1, "break_long_words")?.is_none_or(|v| v.is_true()),
        break_on_hyphens: arg(3, "break_on_hyphens")?.is_none_or(|v| v.is_true()),
    };
    let wrapstring = arg(2, "wrapstring")?
        .filter(|v| !super::none::is_python_none(v))
        .map_or_else(|| "\n".to_string(), |v| to_str(&v));
    kwargs.assert_all_used()?;
    let text = to_str(&value);
    let mut paragraphs = Vec::new();
    for line in super::pystr::splitlines(&text) {
        if options.width <= 0 {
            return Err(raise(
                "ValueError",
                format!("invalid width {width} (must be > 0)"),
            ));
        }
        paragraphs.push(wrap(line, options).join(&wrapstring));
    }
    let breaks = text.chars().count() / (width.max(1) as usize) + paragraphs.len();
    let size = text
        .len()
        .saturating_add(breaks.saturating_mul(wrapstring.len()));
    super::scope::reserve(Some(state), size)?;
    Ok(paragraphs.join(&wrapstring))
}

/// `textwrap.wrap(line)`: the wrapped lines of one paragraph.
fn wrap(line: &str, options: Options) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut chunks: Vec<Vec<char>> = chunk(&chars, options.break_on_hyphens)
        .into_iter()
        .map(|(start, end)| chars[start..end].to_vec())
        .collect();
    chunks.reverse();
    let width = options.width.max(1) as usize;
    let blank = |chunk: &[char]| chunk.iter().all(|&c| is_space(c));
    let mut lines = Vec::new();
    while !chunks.is_empty() {
        let mut current: Vec<Vec<char>> = Vec::new();
        let mut length = 0;
        if !lines.is_empty() && chunks.last().is_some_and(|c| blank(c)) {
            chunks.pop();
        }
        while let Some(next) = chunks.last() {
            if length + next.len() > width {
                break;
            }
            length += next.len();
            current.extend(chunks.pop());
        }
        if chunks.last().is_some_and(|next| next.len() > width) {
            long_word(&mut chunks, &mut current, width - length, options);
        }
        if current.last().is_some_and(|c| blank(c)) {
            current.pop();
        }
        if !current.is_empty() {
            lines.push(current.concat().into_iter().collect());
        }
    }
    lines
}

/// A chunk longer than the line: broken at the space left (or after a hyphen within
/// it), or put on a line of its own when words may not be broken.
fn long_word(
    chunks: &mut Vec<Vec<char>>,
    current: &mut Vec<Vec<char>>,
    space_left: usize,
    options: Options,
) {
    let Some(chunk) = chunks.last_mut() else {
        return;
    };
    if options.break_long_words {
        let mut end = space_left;
        if options.break_on_hyphens && chunk.len() > space_left {
            let hyphen = chunk[..space_left.min(chunk.len())]
                .iter()
                .rposition(|&c| c == '-');
            if let Some(hyphen) = hyphen.filter(|&h| h > 0 && chunk[..h].iter().any(|&c| c != '-'))
            {
                end = hyphen + 1;
            }
        }
        let rest = chunk.split_off(end.min(chunk.len()));
        current.push(std::mem::replace(chunk, rest));
    } else if current.is_empty() {
        current.extend(chunks.pop());
    }
}

/// textwrap's whitespace: ASCII only.
fn ws(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ')
}

/// Python's `\w`.
fn word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `[^\d\W]`: a word character that is not a digit.
fn letter(c: char) -> bool {
    word(c) && !c.is_numeric()
}

/// `[\w!"'&.,?]`: what may precede an em-dash.
fn word_punct(c: char) -> bool {
    word(c) || "!\"'&.,?".contains(c)
}

/// The chunks `re.split(wordsep_re, text)` (or, without hyphen breaking, splitting at
/// whitespace runs) gives, as character ranges, empty pieces left out.
fn chunk(chars: &[char], break_on_hyphens: bool) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let (mut pos, mut last) = (0, 0);
    while pos < chars.len() {
        let found = if break_on_hyphens {
            separator_at(chars, pos)
        } else {
            whitespace_run(chars, pos)
        };
        match found {
            Some(end) => {
                if last < pos {
                    pieces.push((last, pos));
                }
                pieces.push((pos, end));
                (pos, last) = (end, end);
            }
            None => pos += 1,
        }
    }
    if last < chars.len() {
        pieces.push((last, chars.len()));
    }
    pieces
}

fn whitespace_run(chars: &[char], pos: usize) -> Option<usize> {
    let run = chars[pos..].iter().take_while(|&&c| ws(c)).count();
    (run > 0).then_some(pos + run)
}

/// Where a `wordsep_re` match starting at `pos` ends: a whitespace run, an em-dash
/// between words, or the shortest word that ends at a hyphen, whitespace, the end, or
/// an em-dash.
fn separator_at(chars: &[char], pos: usize) -> Option<usize> {
    let at = |i: usize| chars.get(i).copied();
    if let Some(end) = whitespace_run(chars, pos) {
        return Some(end);
    }
    let dashes = |from: usize| {
        chars[from.min(chars.len())..]
            .iter()
            .take_while(|&&c| c == '-')
            .count()
    };
    if pos > 0 && word_punct(chars[pos - 1]) {
        let run = dashes(pos);
        if run >= 2 && at(pos + run).is_some_and(word) {
            return Some(pos + run);
        }
    }
    let is_letter = |i: usize| at(i).is_some_and(letter);
    let mut k = pos + 1;
    while k <= chars.len() && !ws(chars[k - 1]) {
        // A hyphen after two letters (or after "x-y"), before "y" or "y-z"-like text.
        if at(k) == Some('-') {
            let before = (k >= 2 && is_letter(k - 2) && is_letter(k - 1))
                || (k >= 3 && is_letter(k - 3) && at(k - 2) == Some('-') && is_letter(k - 1));
            let after = is_letter(k + 1)
                && (is_letter(k + 2) || (at(k + 2) == Some('-') && is_letter(k + 3)));
            if before && after {
                return Some(k + 1);
            }
        }
        if at(k).is_none_or(ws) {
            return Some(k);
        }
        let run = dashes(k);
        if word_punct(chars[k - 1]) && run >= 2 && at(k + run).is_some_and(word) {
            return Some(k);
        }
        k += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        chunk(&chars, true)
            .into_iter()
            .map(|(s, e)| chars[s..e].iter().collect())
            .collect()
    }

    // CPython 3.11 textwrap: the chunks of its own docstring example.
    #[test]
    fn chunks_like_textwrap() {
        assert_eq!(
            chunks("Look, goof-ball -- use the -b option!"),
            [
                "Look,", " ", "goof-", "ball", " ", "--", " ", "use", " ", "the", " ", "-b", " ",
                "option!"
            ]
        );
    }

    // Jinja2 3.1.6: wordwrap(20) of this sentence.
    #[test]
    fn wraps_like_jinja2() {
        let options = Options {
            width: 20,
            break_long_words: true,
            break_on_hyphens: true,
        };
        assert_eq!(
            wrap(
                "The quick brown fox jumps over the lazy dog and keeps running far away",
                options
            ),
            [
                "The quick brown fox",
                "jumps over the lazy",
                "dog and keeps",
                "running far away"
            ]
        );
    }
}
