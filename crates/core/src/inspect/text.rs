//! Comparing rendered prompts: common prefixes and short quoted excerpts for reports.

/// Length in bytes of the longest common prefix of `a` and `b`, on a char boundary of
/// both.
pub(crate) fn common_prefix_len(a: &str, b: &str) -> usize {
    let (a_bytes, b_bytes) = (a.as_bytes(), b.as_bytes());
    let len = a_bytes.len().min(b_bytes.len());
    // Whole chunks compared as slices (memcmp, many bytes per instruction: the app
    // compares megabyte prompts after every keystroke), then bytes within the first
    // chunk that differs.
    const CHUNK: usize = 256;
    let mut bytes = 0;
    while bytes + CHUNK <= len && a_bytes[bytes..bytes + CHUNK] == b_bytes[bytes..bytes + CHUNK] {
        bytes += CHUNK;
    }
    bytes += (a_bytes[bytes..len].iter())
        .zip(&b_bytes[bytes..len])
        .take_while(|(x, y)| x == y)
        .count();
    let mut at = bytes;
    while !a.is_char_boundary(at) || !b.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Length in bytes of the longest common suffix of `a[skip..]` and `b[skip..]`, on char
/// boundaries.
pub(crate) fn common_suffix_len(a: &str, b: &str, skip: usize) -> usize {
    let (a, b) = (&a[skip..], &b[skip..]);
    let bytes = a
        .as_bytes()
        .iter()
        .rev()
        .zip(b.as_bytes().iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut len = bytes;
    while !a.is_char_boundary(a.len() - len) || !b.is_char_boundary(b.len() - len) {
        len -= 1;
    }
    len
}

/// Up to `max` bytes of `text` from `from` (on char boundaries), JSON-quoted so that
/// whitespace shows, with `…` when cut.
pub fn excerpt(text: &str, from: usize, max: usize) -> String {
    let start = floor_boundary(text, from.min(text.len()));
    let end = floor_boundary(text, (start + max).min(text.len()));
    let quoted = serde_json::to_string(&text[start..end]).unwrap_or_default();
    if end < text.len() {
        format!("{quoted}…")
    } else {
        quoted
    }
}

/// The largest char boundary at or before `at`.
pub(crate) fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// "at byte N: A "…" vs B "…"" for two different prompts.
pub(crate) fn describe_difference(a: &str, b: &str, a_label: &str, b_label: &str) -> String {
    let at = common_prefix_len(a, b);
    format!(
        "the prompts differ from byte {at}: {a_label} {} vs {b_label} {}",
        excerpt(a, at, 40),
        excerpt(b, at, 40)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_suffixes_respect_char_boundaries() {
        assert_eq!(common_prefix_len("aé", "aè"), 1);
        assert_eq!(common_prefix_len("abc", "abd"), 2);
        assert_eq!(common_suffix_len("xéa", "yèa", 0), 1);
        assert_eq!(common_suffix_len("abX\nc", "ab\nc", 2), 2);
        assert_eq!(excerpt("a\nbcdef", 0, 3), "\"a\\nb\"…");
        assert_eq!(excerpt("é", 1, 3), "\"é\"");
    }
}
