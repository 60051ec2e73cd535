//! A tokenized text: one [`Token`] per model token, in order, with byte offsets into the
//! text. What the prompt pane and `chatplate tokens` show.

/// One token of a tokenized text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// The token id the model receives.
    pub id: u32,
    /// Byte offset of the first byte of text this token stands for.
    pub start: usize,
    /// Byte offset just past it. Byte-level tokenizers can split one character over
    /// several tokens; each of those tokens carries the whole character's range.
    pub end: usize,
    /// A special token (the tokenizer's files say so), e.g. `<|im_end|>`.
    pub special: bool,
}

/// The tokens of one text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokenized {
    /// The tokens, in order; offsets never go backwards.
    pub tokens: Vec<Token>,
}

impl Tokenized {
    /// How many tokens.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The token ids, in order.
    pub fn ids(&self) -> Vec<u32> {
        self.tokens.iter().map(|t| t.id).collect()
    }

    /// How many tokens are special.
    pub fn special_count(&self) -> usize {
        self.tokens.iter().filter(|t| t.special).count()
    }

    /// The index of the first token covering byte `offset` (the token under a cursor), or
    /// `None` past the end or inside text no token covers.
    pub fn token_at(&self, offset: usize) -> Option<usize> {
        let index = self.tokens.partition_point(|t| t.end <= offset);
        let token = self.tokens.get(index)?;
        (token.start <= offset && offset < token.end).then_some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(id: u32, start: usize, end: usize) -> Token {
        Token {
            id,
            start,
            end,
            special: id == 0,
        }
    }

    #[test]
    fn finds_the_token_under_an_offset() {
        // "é" (2 bytes) split over two byte-level tokens sharing its range.
        let tokenized = Tokenized {
            tokens: vec![
                token(0, 0, 5),
                token(7, 5, 7),
                token(8, 5, 7),
                token(9, 8, 9),
            ],
        };
        assert_eq!(tokenized.token_at(0), Some(0));
        assert_eq!(tokenized.token_at(4), Some(0));
        assert_eq!(tokenized.token_at(6), Some(1));
        assert_eq!(tokenized.token_at(7), None, "byte 7 is covered by no token");
        assert_eq!(tokenized.token_at(8), Some(3));
        assert_eq!(tokenized.token_at(9), None);
        assert_eq!(tokenized.special_count(), 1);
        assert_eq!(tokenized.ids(), [0, 7, 8, 9]);
    }
}
