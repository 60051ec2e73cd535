//! Jinja2's `wordwrap`: each line of the text wrapped on its own by Python's
//! `textwrap.wrap` (tabs kept, whitespace not replaced, leading and trailing spaces of
//! wrapped lines dropped), joined with the wrap string.
//!
//! `textwrap` first cuts the text into chunks, words and runs of whitespace, and with
//! `break_on_hyphens` also after the hyphen of a hyphenated word (`goof-`, `ball`) and
//! around em-dashes (`--`); then it fills lines greedily with whole chunks, breaking
//! a chunk only when it is longer than a line. The chunking follows `textwrap`'s
//! `wordsep_re` rule by rule.
//!
//! The chunks are found one at a time as lines are filled, as character ranges of the
//! line being wrapped, and the lines are written straight into the result, which is
//! charged to the render's byte budget before it grows: the filter holds the text's
//! characters (four bytes each, charged first), the result and one line's ranges,
//! never a list of every chunk.

use std::borrow::Cow;

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Error, State};

use super::pyerror::raise;
use super::pyrepr::to_str_in;
use super::pystr::Lines;
use super::scope;
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
    scope::tick(Some(state))?;
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
    let wrapstring = match arg(2, "wrapstring")?.filter(|v| !super::none::is_python_none(v)) {
        Some(v) => to_str_in(Some(state), &v)?,
        None => "\n".to_string(),
    };
    kwargs.assert_all_used()?;
    let text: Cow<str> = match value.as_str() {
        Some(text) if value.kind() == ValueKind::String => Cow::Borrowed(text),
        _ => Cow::Owned(to_str_in(Some(state), &value)?),
    };
    let mut out = String::new();
    for (index, line) in Lines::new(&text).enumerate() {
        if options.width <= 0 {
            return Err(raise(
                "ValueError",
                format!("invalid width {width} (must be > 0)"),
            ));
        }
        if index > 0 {
            scope::push_charged(Some(state), &mut out, &wrapstring)?;
        }
        wrap_into(state, line.text, options, &wrapstring, &mut out)?;
    }
    Ok(out)
}

/// `wrapstring.join(textwrap.wrap(line))`, appended to `out`.
fn wrap_into(
    state: &State,
    line: &str,
    options: Options,
    wrapstring: &str,
    out: &mut String,
) -> Result<(), Error> {
    let count = line.chars().count();
    scope::reserve_items(Some(state), count, std::mem::size_of::<char>())?;
    let chars: Vec<char> = line.chars().collect();
    let mut chunks = Chunks::new(&chars, options.break_on_hyphens);
    // The next chunk to place (the end of textwrap's reversed chunk list); a long
    // word broken across lines leaves its rest here.
    let mut next = chunks.next();
    let width = options.width.max(1) as usize;
    let blank = |(start, end): Range| chars[start..end].iter().all(|&c| is_space(c));
    let mut lines = 0usize;
    while next.is_some() {
        let mut current = Filling::default();
        if lines > 0 && next.is_some_and(blank) {
            next = chunks.next();
        }
        while let Some(chunk) = next {
            if current.length + len(chunk) > width {
                break;
            }
            current.push(chunk);
            next = chunks.next();
        }
        if next.is_some_and(|chunk| len(chunk) > width) {
            let space_left = width - current.length;
            long_word(
                &chars,
                &mut next,
                &mut chunks,
                &mut current,
                space_left,
                options,
            );
        }
        if current.last.is_some_and(blank) {
            current.pop_last();
        }
        if current.chunks == 0 {
            continue;
        }
        if lines > 0 {
            scope::push_charged(Some(state), out, wrapstring)?;
        }
        let text = &chars[current.start..current.end];
        let bytes = text.iter().map(|c| c.len_utf8()).sum();
        scope::make_room(Some(state), out, bytes)?;
        out.extend(text);
        lines += 1;
    }
    Ok(())
}

/// A chunk: a range of character positions.
type Range = (usize, usize);

fn len((start, end): Range) -> usize {
    end - start
}

/// The line being filled: the chunks placed on it, which follow each other in the
/// text, so one range holds them all (textwrap's list of them would hold one entry
/// per chunk, a list as long as the text for a line as wide as it).
#[derive(Default)]
struct Filling {
    start: usize,
    end: usize,
    /// The last chunk placed, which may be taken off again (trailing whitespace).
    last: Option<Range>,
    /// How many chunks are placed.
    chunks: usize,
    /// Their length in characters.
    length: usize,
}

impl Filling {
    fn push(&mut self, chunk: Range) {
        if self.chunks == 0 {
            self.start = chunk.0;
        }
        self.end = chunk.1;
        self.last = Some(chunk);
        self.chunks += 1;
        self.length += len(chunk);
    }

    fn pop_last(&mut self) {
        if let Some(last) = self.last.take() {
            self.end = last.0;
            self.chunks -= 1;
            self.length -= len(last);
        }
    }
}

/// A chunk longer than the line (`next`): broken at the space left (or after a hyphen
/// within it), or put on a line of its own when words may not be broken.
fn long_word(
    chars: &[char],
    next: &mut Option<Range>,
    chunks: &mut Chunks,
    current: &mut Filling,
    space_left: usize,
    options: Options,
) {
    let Some((start, stop)) = *next else {
        return;
    };
    let chunk = &chars[start..stop];
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
        let cut = start + end.min(chunk.len());
        current.push((start, cut));
        *next = Some((cut, stop));
    } else if current.chunks == 0 {
        current.push((start, stop));
        *next = chunks.next();
    }
}

/// The chunks `re.split(wordsep_re, text)` (or, without hyphen breaking, splitting at
/// whitespace runs) gives, as character ranges, empty pieces left out, found one at a
/// time.
struct Chunks<'c> {
    chars: &'c [char],
    break_on_hyphens: bool,
    /// Where the search for the next separator goes on.
    pos: usize,
    /// Where the text not yet given out starts.
    last: usize,
    /// A separator found after a piece, given out next.
    queued: Option<Range>,
}

impl<'c> Chunks<'c> {
    fn new(chars: &'c [char], break_on_hyphens: bool) -> Self {
        Chunks {
            chars,
            break_on_hyphens,
            pos: 0,
            last: 0,
            queued: None,
        }
    }
}

impl Iterator for Chunks<'_> {
    type Item = Range;

    fn next(&mut self) -> Option<Range> {
        if let Some(queued) = self.queued.take() {
            return Some(queued);
        }
        let chars = self.chars;
        while self.pos < chars.len() {
            let found = if self.break_on_hyphens {
                separator_at(chars, self.pos)
            } else {
                whitespace_run(chars, self.pos)
            };
            let Some(end) = found else {
                self.pos += 1;
                continue;
            };
            let (before, separator) = ((self.last, self.pos), (self.pos, end));
            (self.pos, self.last) = (end, end);
            if len(before) > 0 {
                self.queued = Some(separator);
                return Some(before);
            }
            return Some(separator);
        }
        if self.last < chars.len() {
            let rest = (self.last, chars.len());
            self.last = chars.len();
            return Some(rest);
        }
        None
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
        // The dash run is only counted where it can start an em-dash (after a word
        // character): counting it at every dash would be quadratic in a long run.
        if word_punct(chars[k - 1]) {
            let run = dashes(k);
            if run >= 2 && at(k + run).is_some_and(word) {
                return Some(k);
            }
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
        Chunks::new(&chars, true)
            .map(|(s, e)| chars[s..e].iter().collect())
            .collect()
    }

    fn wrap(line: &str, options: Options) -> Vec<String> {
        let mut out = String::new();
        let env = minijinja::Environment::new();
        let state = env.empty_state();
        wrap_into(&state, line, options, "|", &mut out).unwrap();
        out.split('|').map(str::to_string).collect()
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
