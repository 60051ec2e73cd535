//! Tokenizing a long text in pieces, with the same ids and offsets as in one call, so
//! that memory stays bounded: the `tokenizers` library holds about a hundred bytes per
//! byte of text while it works (the text, its normalized copy and an alignment pair per
//! byte, each split again, then the encoding), 1.6 GB for a 14 MB prompt.
//!
//! The library cuts a text itself before anything else: it finds the added tokens
//! (`<|im_start|>`, `<|im_end|>`...) with a leftmost-longest Aho-Corasick automaton and
//! normalizes, pre-tokenizes and models each stretch between them on its own. Found the
//! same way (the same automaton library, built the same way), a cut just before such a
//! token changes nothing: the stretch before it ends there in both cases, and the piece
//! after it starts with the token, so what follows the token is never at the start of a
//! text (Metaspace's `prepend_scheme: "first"` looks at that). Only tokens that are
//! always isolated as they are qualify: not matched after normalization, without
//! `lstrip`, `rstrip` or `single_word`, not a special token that `split_special_tokens`
//! leaves as text, and starting with neither a word character nor a space (which a
//! neighbouring token's word-boundary or whitespace rules would look at).

use daachorse::{DoubleArrayAhoCorasick, DoubleArrayAhoCorasickBuilder, MatchKind};
use std::collections::HashMap;
use tokenizers::{AddedToken, Tokenizer};

/// Texts up to this size are tokenized in one call; longer ones are cut into pieces of
/// about this size where they can be.
pub(crate) const PIECE_BYTES: usize = 1 << 20;

/// Memory the `tokenizers` library may hold per byte of the text it tokenizes in one
/// call (measured about 85 to 100 on real tokenizers, rounded up).
pub(crate) const MEMORY_PER_BYTE: usize = 128;

/// Where a tokenizer's texts may be cut.
pub(crate) struct Cuts {
    /// Every added token matched before normalization, as the library's own automaton.
    automaton: Option<DoubleArrayAhoCorasick<u32>>,
    /// By id: whether a cut may go before the token, and whether it is special.
    tokens: HashMap<u32, (bool, bool)>,
}

impl Cuts {
    /// The cut points of `tokenizer`'s added tokens.
    pub(crate) fn new(tokenizer: &Tokenizer) -> Self {
        let added = tokenizer.get_added_tokens_decoder();
        let patterns: Vec<(&str, u32)> = added
            .iter()
            .filter(|(_, token)| !token.normalized && !token.content.is_empty())
            .map(|(id, token)| (token.content.as_str(), *id))
            .collect();
        let automaton = (!patterns.is_empty())
            .then(|| {
                DoubleArrayAhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build_with_values(patterns)
                    .ok()
            })
            .flatten();
        // Special as the library decides it for `split_special_tokens`: by content, in a
        // set that a token's later flags do not change.
        let vocabulary = tokenizer.get_added_vocabulary();
        let tokens = added
            .iter()
            .map(|(id, token)| {
                let special = vocabulary.is_special_token(&token.content);
                (*id, (isolated(token), special))
            })
            .collect();
        Cuts { automaton, tokens }
    }

    /// The byte offsets where `text` may be cut into pieces of about `size` bytes (none
    /// when it is short). `split_special` is `split_special_tokens`: special tokens are
    /// then ordinary text, and no cut goes before one.
    pub(crate) fn cuts(&self, text: &str, size: usize, split_special: bool) -> Vec<usize> {
        let Some(automaton) = self.automaton.as_ref().filter(|_| text.len() > size) else {
            return Vec::new();
        };
        let mut cuts = Vec::new();
        let (mut piece_start, mut last) = (0, None);
        for found in automaton.leftmost_find_iter(text) {
            let at = found.start();
            if !self.cuts_before(found.value(), split_special) || at == 0 {
                continue;
            }
            if at - piece_start > size {
                let cut = last.filter(|l| *l > piece_start).unwrap_or(at);
                cuts.push(cut);
                piece_start = cut;
            }
            last = Some(at);
        }
        if text.len() - piece_start > size {
            if let Some(cut) = last.filter(|l| *l > piece_start) {
                cuts.push(cut);
            }
        }
        cuts
    }

    /// Whether the added token `value` found in a text is a place to cut it: the
    /// library isolates it, and splits it like text only when it is special and
    /// `split_special` is on.
    fn cuts_before(&self, value: u32, split_special: bool) -> bool {
        self.tokens
            .get(&value)
            .is_some_and(|(isolated, special)| *isolated && !(*special && split_special))
    }

    /// The start of the last token a cut may go before that lies wholly inside
    /// `text[..limit]` (0 when there is none): the tokens of `text` before it are those
    /// of any text that shares those bytes. Matches are found on the whole text, as the
    /// library finds them, so a longer token running past `limit` is not mistaken for a
    /// shorter one inside it.
    pub(crate) fn last_cut_within(&self, text: &str, limit: usize, split_special: bool) -> usize {
        let Some(automaton) = self.automaton.as_ref() else {
            return 0;
        };
        let mut last = 0;
        for found in automaton.leftmost_find_iter(text) {
            if found.end() > limit {
                break;
            }
            if self.cuts_before(found.value(), split_special) {
                last = found.start();
            }
        }
        last
    }
}

/// Whether the library always isolates `token` as it is written, whatever surrounds it.
fn isolated(token: &AddedToken) -> bool {
    let starts_plain = token
        .content
        .chars()
        .next()
        .is_some_and(|c| !(c.is_alphanumeric() || c == '_' || c.is_whitespace()));
    !token.normalized && !token.lstrip && !token.rstrip && !token.single_word && starts_plain
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenizers::models::wordlevel::WordLevel;

    fn tokenizer(added: Vec<AddedToken>) -> Tokenizer {
        let mut tokenizer = Tokenizer::new(WordLevel::default());
        tokenizer.add_tokens(added).unwrap();
        tokenizer
    }

    #[test]
    fn cuts_go_before_isolated_tokens_near_each_piece_size() {
        let tokenizer = tokenizer(vec![AddedToken::from("<e>", true)]);
        let cuts = Cuts::new(&tokenizer);
        let text = "aaaa<e>bbbb<e>cccc<e>dd";
        // Pieces of at most 8 bytes where a token allows: 0..4, 4..11, 11..18, 18..
        assert_eq!(cuts.cuts(text, 8, false), [4, 11, 18]);
        assert!(
            cuts.cuts(text, 100, false).is_empty(),
            "short texts stay whole"
        );
        assert!(
            cuts.cuts(text, 8, true).is_empty(),
            "split_special_tokens keeps special tokens as text"
        );
    }

    #[test]
    fn tokens_a_neighbour_could_reach_are_no_cut() {
        let tokenizer = tokenizer(vec![
            AddedToken::from("<s>", true).lstrip(true),
            AddedToken::from("word", false),
            AddedToken::from("<n>", false).normalized(true),
        ]);
        let cuts = Cuts::new(&tokenizer);
        assert!(cuts.cuts("xx<s>xxword xx<n>xx<s>", 2, false).is_empty());
    }
}
