//! Tokens per message: how many tokens fall in each byte range of the prompt. The ranges
//! come from whoever knows which bytes belong to which message (exact attribution, or the
//! message contents located in the prompt); this only counts.

use std::ops::Range;

use super::tokenized::{Token, Tokenized};

/// The tokens of one byte range.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RangeCount {
    /// Tokens lying wholly inside the range.
    pub inside: usize,
    /// Tokens overlapping the range but also text outside it (a merge across the
    /// boundary, e.g. content's last newline joined with the template's).
    pub crossing: usize,
}

/// Counts the tokens of each range (byte offsets into the tokenized text). Ranges may come
/// in any order and overlap; each is counted on its own in O(log n + its tokens).
pub fn count_in_ranges(tokenized: &Tokenized, ranges: &[Range<usize>]) -> Vec<RangeCount> {
    ranges
        .iter()
        .map(|range| count_one(&tokenized.tokens, range))
        .collect()
}

fn count_one(tokens: &[Token], range: &Range<usize>) -> RangeCount {
    let mut count = RangeCount::default();
    for token in overlapping(tokens, range) {
        if range.start <= token.start && token.end <= range.end {
            count.inside += 1;
        } else {
            count.crossing += 1;
        }
    }
    count
}

/// The tokens that cover any byte of `range`, found by binary search (offsets never go
/// backwards). An empty token (text the normalizer inserted) counts where it sits.
pub(super) fn overlapping<'a>(
    tokens: &'a [Token],
    range: &Range<usize>,
) -> impl Iterator<Item = &'a Token> {
    let first = tokens.partition_point(|t| t.start < range.start && t.end <= range.start);
    let range = range.clone();
    tokens[first..]
        .iter()
        .take_while(move |t| t.start < range.end)
        .filter(move |t| {
            if t.start == t.end {
                range.contains(&t.start)
            } else {
                range.start < t.end
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenized(offsets: &[(usize, usize)]) -> Tokenized {
        let tokens = offsets
            .iter()
            .map(|&(start, end)| Token {
                id: 0,
                start,
                end,
                special: false,
            })
            .collect();
        Tokenized { tokens }
    }

    #[test]
    fn counts_tokens_inside_and_across_each_range() {
        // "<s>Hello world\n\nBye" with one token "\n\nB" crossing two messages.
        let prompt = tokenized(&[(0, 3), (3, 8), (8, 14), (14, 17), (17, 19)]);
        let counts = count_in_ranges(&prompt, &[3..15, 15..19, 0..0, 30..40]);
        assert_eq!(
            counts,
            [
                RangeCount {
                    inside: 2,
                    crossing: 1
                },
                RangeCount {
                    inside: 1,
                    crossing: 1
                },
                RangeCount::default(),
                RangeCount::default(),
            ]
        );
        let whole = count_in_ranges(&prompt, &[0..19, 0..3]);
        assert_eq!(whole[0].inside, 5);
        assert_eq!(whole[1].inside, 1);
    }

    #[test]
    fn split_characters_and_empty_tokens_count_once_each() {
        let prompt = tokenized(&[(0, 0), (0, 2), (0, 2), (2, 3)]);
        let counts = count_in_ranges(&prompt, &[0..2, 2..3]);
        assert_eq!(
            counts[0],
            RangeCount {
                inside: 3,
                crossing: 0
            }
        );
        assert_eq!(
            counts[1],
            RangeCount {
                inside: 1,
                crossing: 0
            }
        );
    }
}
