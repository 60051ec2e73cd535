//! Template source preparation: what Jinja2's lexer and transformers' extensions do
//! before MiniJinja sees the text.
//!
//! * Jinja2 normalizes every `\r\n` and lone `\r` to `\n`.
//! * Jinja2 keeps the newline after `{% raw %}` under trim_blocks; MiniJinja needs the
//!   tag written `{% raw +%}` for that.
//! * String literals are decoded with Python's escapes (see [`super::literals`]).
//! * transformers registers a `{% generation %}...{% endgeneration %}` tag that renders
//!   its body as a call block; MiniJinja has no custom tags, so the tag is rewritten to
//!   an equivalent `{% call %}` of a helper function. Whitespace markers and line
//!   numbers are preserved.
//!
//! Every step records its edits, so error positions lead back to the user's own text
//! ([`Prepared::original_offset`]).

use std::borrow::Cow;

use super::helpers::Helpers;
use super::offsets::OffsetMap;

/// The text MiniJinja should compile, and the way back to the user's source.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prepared {
    /// The prepared text.
    pub text: String,
    /// Literal decoding, then tag rewriting.
    maps: [OffsetMap; 2],
}

impl Prepared {
    /// Maps a byte offset in [`Prepared::text`] to the user's source (newlines
    /// normalized, see [`normalize_newlines`]).
    pub(crate) fn original_offset(&self, offset: usize) -> usize {
        let [literals, tags] = &self.maps;
        literals.original_offset(tags.original_offset(offset))
    }
}

/// Jinja2's newline handling: `\r\n` and a lone `\r` both end a line. Error positions
/// count lines and columns in this text.
pub fn normalize_newlines(source: &str) -> String {
    normalized(source).into_owned()
}

/// [`normalize_newlines`], without a copy when there is no `\r` (nearly always).
pub(crate) fn normalized(source: &str) -> Cow<'_, str> {
    if source.contains('\r') {
        Cow::Owned(source.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(source)
    }
}

/// Prepares `source` for MiniJinja, with the helper names chosen for it (see
/// [`Helpers`]).
pub(crate) fn prepare(source: &str) -> (Prepared, Helpers) {
    let normalized = normalized(source);
    let (decoded, literals) = super::literals::decode_python_escapes(&normalized);
    let helpers = Helpers::for_source(&decoded);
    let mut tags = OffsetMap::default();
    let text = match rewrite_generation_tags(&decoded, &helpers, &mut tags) {
        Some(text) => text,
        None => decoded.into_owned(),
    };
    let prepared = Prepared {
        text,
        maps: [literals, tags],
    };
    (prepared, helpers)
}

/// `source` with its `generation` and `raw` tags rewritten; `None` when it has none.
/// What a `{% raw %}` block holds and what a comment holds is text, copied as it is
/// (Jinja2's lexer reads no tags there: `{% raw %}{% generation %}{% endraw %}` prints
/// the tag).
fn rewrite_generation_tags(source: &str, helpers: &Helpers, map: &mut OffsetMap) -> Option<String> {
    if !source.contains("generation") && !source.contains("raw") {
        return None;
    }
    let mut out = String::with_capacity(source.len() + 64);
    let mut rest = source;
    while let Some((start, kind)) = find_tag(rest) {
        out.push_str(&rest[..start]);
        let tag = &rest[start..];
        // The closing `%}` comes after the opening `{%` (in `{%}` they overlap).
        let closing = if kind == b'#' { '#' } else { '%' };
        let Some(end) = find_pair(&tag[2..], closing, b'}').map(|at| at + 2) else {
            out.push_str(tag);
            return Some(out);
        };
        let (whole, mut after) = tag.split_at(end + 2);
        match rewrite_tag(whole, helpers) {
            Some(rewritten) if kind == b'%' && rewritten != whole => {
                let original_start = source.len() - tag.len();
                let new_start = out.len();
                map.record(
                    (new_start, new_start + rewritten.len()),
                    (original_start, original_start + whole.len()),
                    None,
                );
                out.push_str(&rewritten);
            }
            _ => out.push_str(whole),
        }
        if kind == b'%' && tag_name(whole) == "raw" {
            let verbatim = end_of_raw(after);
            out.push_str(&after[..verbatim]);
            after = &after[verbatim..];
        }
        rest = after;
    }
    out.push_str(rest);
    Some(out)
}

/// The next `{%` or `{#` in `text`, with its second byte.
fn find_tag(text: &str) -> Option<(usize, u8)> {
    let bytes = text.as_bytes();
    text.match_indices('{')
        .find_map(|(at, _)| match bytes.get(at + 1) {
            Some(&second @ (b'%' | b'#')) => Some((at, second)),
            _ => None,
        })
}

/// Where the `{% endraw %}` that closes a raw block starts in `text` (the block's
/// body); the whole text when it has none (the parser reports that).
fn end_of_raw(text: &str) -> usize {
    let mut offset = 0;
    while let Some(start) = find_pair(&text[offset..], '{', b'%').map(|at| at + offset) {
        let tag = &text[start..];
        let Some(end) = find_pair(&tag[2..], '%', b'}') else {
            break;
        };
        if tag_name(&tag[..end + 4]) == "endraw" {
            return start;
        }
        offset = start + 2;
    }
    text.len()
}

/// Where `first` followed by the byte `second` first occurs in `text`: a byte search
/// for `first`, a fraction of a two-byte pattern search's cost.
fn find_pair(text: &str, first: char, second: u8) -> Option<usize> {
    let bytes = text.as_bytes();
    text.match_indices(first)
        .map(|(at, _)| at)
        .find(|&at| bytes.get(at + 1) == Some(&second))
}

/// A `{%...%}` tag's body without whitespace markers: `raw` for `{%- raw +%}`.
fn tag_name(tag: &str) -> &str {
    tag[2..tag.len() - 2]
        .trim_start_matches(['-', '+'])
        .trim_end_matches(['-', '+'])
        .trim()
}

/// Rewrites one `{%...%}` tag if it is `generation`, `endgeneration` or `raw`; `None`
/// for any other tag.
fn rewrite_tag(tag: &str, helpers: &Helpers) -> Option<String> {
    let inner = &tag[2..tag.len() - 2];
    let from_body = inner.trim_start_matches(['-', '+']).trim_start();
    // Most tags are none of the three: their first letter says so.
    if !from_body.starts_with(['g', 'e', 'r']) {
        return None;
    }
    let open = marker(inner.chars().next());
    let close = marker(inner.chars().last());
    let body = from_body.trim_end_matches(['-', '+']).trim();
    let (replacement, close) = match body {
        "generation" => (format!("call {}()", helpers.generation()), close),
        "endgeneration" => ("endcall".to_string(), close),
        // Jinja2 keeps the newline after `{% raw %}` even with trim_blocks; MiniJinja
        // trims it unless the tag says `+%}`.
        "raw" if close.is_empty() => ("raw".to_string(), "+"),
        _ => return None,
    };
    Some(format!("{{%{open} {replacement} {close}%}}"))
}

fn marker(ch: Option<char>) -> &'static str {
    match ch {
        Some('-') => "-",
        Some('+') => "+",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_generation_tags_keeping_markers() {
        let helper = Helpers::for_source("").generation();
        let prepared = prepare("{%- generation %}x{% endgeneration -%}\r\n").0;
        assert_eq!(
            prepared.text,
            format!("{{%- call {helper}() %}}x{{% endcall -%}}\n")
        );
        let x = prepared.text.find('x').unwrap();
        assert_eq!(prepared.original_offset(x), "{%- generation %}".len());
        assert_eq!(
            prepare("{% if add_generation_prompt %}").0.text,
            "{% if add_generation_prompt %}"
        );
    }

    #[test]
    fn a_tag_whose_ends_overlap_is_left_for_the_parser() {
        // `{%}`: the `%` is shared by the opening and closing marker. Jinja2 rejects
        // it; here it must only not panic, and reach the parser unchanged.
        assert_eq!(prepare("{%}{% raw %}").0.text, "{%}{% raw %}");
        assert_eq!(prepare("x {%} generation").0.text, "x {%} generation");
    }

    #[test]
    fn raw_blocks_and_comments_are_copied_as_they_are() {
        // Jinja2 3.1.6 prints `{% generation %}{% raw %}` from
        // `{% raw %}{% generation %}{% raw %}{%- endraw %}`.
        let helper = Helpers::for_source("").generation();
        let source = "{% raw %}{% generation %}{% raw %}{%- endraw %}{# {% raw %} #}\
                      {% generation %}x{% endgeneration %}";
        assert_eq!(
            prepare(source).0.text,
            format!(
                "{{% raw +%}}{{% generation %}}{{% raw %}}{{%- endraw %}}{{# {{% raw %}} #}}\
                 {{% call {helper}() %}}x{{% endcall %}}"
            )
        );
    }
}
