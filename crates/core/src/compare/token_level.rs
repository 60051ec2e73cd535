//! Token-level comparison, for engines that answer token ids rather than a prompt
//! (`mistral-common`, a plug-in's `{"tokens": [...]}`). Two prompts can be the same text
//! and still different tokens (a server that encodes each message apart cuts tokens where
//! one string of the whole prompt would not), so such an engine is compared with the
//! reference's prompt tokenized by the engine's own tokenizer (its `reference_tokens`):
//! the same tokenizer on both sides, so only the encoding differs.

use serde_json::{Map, Value as Json};

/// One token: its id, and the text it stands for when the engine said.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Token {
    /// Its id in the engine's tokenizer.
    pub id: u64,
    /// The text it stands for (the engine's `token_strings`), when given.
    pub text: Option<String>,
}

/// Where the token sequences first part.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenDifference {
    /// The 0-based index of the first differing token.
    pub index: usize,
    /// The byte of the reference's prompt where that token starts (by the reference
    /// tokens' strings; the end of the text the strings cover when they are not given).
    pub byte: usize,
    /// The reference's token there (none past its end).
    pub reference: Option<Token>,
    /// The engine's token there (none past its end).
    pub engine: Option<Token>,
}

/// The engine's tokens against the reference's prompt tokenized alike.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenComparison {
    /// How many tokens the reference's prompt is, in the engine's tokenizer.
    pub reference_count: usize,
    /// How many tokens the engine gave.
    pub engine_count: usize,
    /// Where they first part; `None` when they are the same.
    pub first: Option<TokenDifference>,
}

/// A token answer read from an engine: its tokens, and the reference's.
pub(super) struct TokenAnswer {
    /// The engine's tokens.
    pub(super) tokens: Vec<Token>,
    /// The reference's prompt tokenized by the engine's tokenizer (none when the
    /// reference did not render).
    pub(super) reference: Option<Vec<Token>>,
}

impl TokenAnswer {
    /// The answer's `tokens` (with `token_strings`) and `reference_tokens` (with
    /// `reference_token_strings`); `None` when it has no `tokens`.
    pub(super) fn read(fields: &Map<String, Json>) -> Option<Result<TokenAnswer, String>> {
        let ids = fields.get("tokens")?;
        let tokens = match read_tokens(ids, fields.get("token_strings"), "tokens") {
            Ok(tokens) => tokens,
            Err(why) => return Some(Err(why)),
        };
        let reference = match fields.get("reference_tokens") {
            None | Some(Json::Null) => None,
            Some(ids) => match read_tokens(
                ids,
                fields.get("reference_token_strings"),
                "reference_tokens",
            ) {
                Ok(tokens) => Some(tokens),
                Err(why) => return Some(Err(why)),
            },
        };
        Some(Ok(TokenAnswer { tokens, reference }))
    }

    /// The text the engine's tokens stand for, when it gave their strings.
    pub(super) fn text(&self) -> Option<String> {
        self.tokens
            .iter()
            .map(|token| token.text.as_deref())
            .collect()
    }
}

/// `ids` (an array of token ids) with `strings` (an array as long, or absent).
fn read_tokens(ids: &Json, strings: Option<&Json>, key: &str) -> Result<Vec<Token>, String> {
    let ids = ids
        .as_array()
        .ok_or_else(|| format!("\"{key}\" is not an array of token ids"))?;
    let ids: Vec<u64> = ids
        .iter()
        .map(Json::as_u64)
        .collect::<Option<_>>()
        .ok_or_else(|| format!("\"{key}\" holds something else than token ids"))?;
    let strings: Vec<Option<String>> = match strings {
        None | Some(Json::Null) => vec![None; ids.len()],
        Some(Json::Array(items)) if items.len() == ids.len() => items
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect(),
        Some(_) => {
            return Err(format!(
                "the strings of \"{key}\" are not an array of strings as long as it"
            ))
        }
    };
    Ok(ids
        .into_iter()
        .zip(strings)
        .map(|(id, text)| Token { id, text })
        .collect())
}

/// The engine's `tokens` against the reference's.
pub(super) fn compare(reference: &[Token], engine: &[Token]) -> TokenComparison {
    let index = reference
        .iter()
        .zip(engine)
        .take_while(|(want, got)| want.id == got.id)
        .count();
    let same = index == reference.len() && index == engine.len();
    let first = (!same).then(|| TokenDifference {
        index,
        byte: reference[..index]
            .iter()
            .map(|token| token.text.as_deref().map_or(0, str::len))
            .sum(),
        reference: reference.get(index).cloned(),
        engine: engine.get(index).cloned(),
    });
    TokenComparison {
        reference_count: reference.len(),
        engine_count: engine.len(),
        first,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(answer: Json) -> Result<TokenAnswer, String> {
        TokenAnswer::read(answer.as_object().unwrap()).expect("tokens")
    }

    #[test]
    fn the_first_differing_token_is_found_with_its_byte() {
        let answer = read(json!({
            "tokens": [1, 5, 9], "token_strings": ["<s>", "Hi", "!"],
            "reference_tokens": [1, 5, 7, 9], "reference_token_strings": ["<s>", "Hi", " ", "!"],
        }))
        .unwrap();
        let compared = compare(answer.reference.as_deref().unwrap(), &answer.tokens);
        let first = compared.first.expect("a difference");
        assert_eq!((first.index, first.byte), (2, 5));
        assert_eq!(first.reference.unwrap().text.as_deref(), Some(" "));
        assert_eq!(first.engine.unwrap().id, 9);
        assert_eq!((compared.reference_count, compared.engine_count), (4, 3));
        assert_eq!(answer.text().as_deref(), Some("<s>Hi!"));
    }

    #[test]
    fn equal_tokens_agree_and_a_longer_side_differs_at_the_shorter_end() {
        let tokens = |ids: &[u64]| -> Vec<Token> {
            ids.iter().map(|&id| Token { id, text: None }).collect()
        };
        assert_eq!(compare(&tokens(&[1, 2]), &tokens(&[1, 2])).first, None);
        let first = compare(&tokens(&[1, 2]), &tokens(&[1, 2, 3]))
            .first
            .unwrap();
        assert_eq!(
            (first.index, first.reference, first.engine.map(|t| t.id)),
            (2, None, Some(3))
        );
    }

    #[test]
    fn malformed_tokens_are_refused() {
        for bad in [
            json!({"tokens": "1 2"}),
            json!({"tokens": [1, -2]}),
            json!({"tokens": [1], "token_strings": ["a", "b"]}),
            json!({"tokens": [1], "reference_tokens": [1.5]}),
        ] {
            assert!(read(bad.clone()).is_err(), "{bad}");
        }
    }
}
