//! What `tokenizer_config.json` adds to `tokenizer.json`, read the way transformers 5.23
//! reads it when it loads a tokenizer (`PreTrainedTokenizerBase.from_pretrained` and
//! `TokenizersBackend.__init__`):
//!
//! * `added_tokens_decoder`: added tokens with their matching flags, applied in id order;
//! * the named special tokens (`bos_token`, `eos_token`, `unk_token`, `sep_token`,
//!   `pad_token`, `cls_token`, `mask_token`), any other `*_token` string key, and
//!   `extra_special_tokens` (or the older `additional_special_tokens`): each becomes a
//!   special added token when the tokenizer does not already have it as an added token;
//! * `split_special_tokens`: match special tokens in text (false, the default) or treat
//!   their text as ordinary text (true).
//!
//! Parsed through `serde_json::Value` rather than derived enums, so the result does not
//! depend on serde_json features such as `arbitrary_precision`.

use serde_json::{Map, Value as Json};

use crate::catalog::tokens::{special_entries, TokenSlot};

/// One added token as a config describes it (the fields of `tokenizers.AddedToken`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedTokenSpec {
    /// The text that is matched.
    pub(crate) content: String,
    /// Match only as a whole word.
    pub(crate) single_word: bool,
    /// Swallow whitespace on the left.
    pub(crate) lstrip: bool,
    /// Swallow whitespace on the right.
    pub(crate) rstrip: bool,
    /// Match against normalized text (else the raw input).
    pub(crate) normalized: bool,
    /// A special (control) token.
    pub(crate) special: bool,
}

impl AddedTokenSpec {
    /// A token given as a bare string: Python's `AddedToken(content, special=special)`,
    /// whose `normalized` defaults to `not special`.
    fn plain(content: &str, special: bool) -> Self {
        AddedTokenSpec {
            content: content.to_string(),
            single_word: false,
            lstrip: false,
            rstrip: false,
            normalized: !special,
            special,
        }
    }

    /// A string, or an object with `content` and optional flags (`AddedToken(**fields)`).
    fn from_json(value: &Json, special_default: bool) -> Option<Self> {
        match value {
            Json::String(content) => Some(Self::plain(content, special_default)),
            Json::Object(fields) => {
                let content = fields.get("content")?.as_str()?;
                let flag = |name: &str, default: bool| {
                    fields.get(name).and_then(Json::as_bool).unwrap_or(default)
                };
                let special = flag("special", special_default);
                Some(AddedTokenSpec {
                    content: content.to_string(),
                    single_word: flag("single_word", false),
                    lstrip: flag("lstrip", false),
                    rstrip: flag("rstrip", false),
                    normalized: flag("normalized", !special),
                    special,
                })
            }
            _ => None,
        }
    }
}

/// The parts of a `tokenizer_config.json` that change tokenization.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenizerConfig {
    /// `split_special_tokens` (default false).
    pub(crate) split_special_tokens: bool,
    /// `added_tokens_decoder`, in id order.
    pub(crate) added_tokens: Vec<AddedTokenSpec>,
    /// Named, model-specific and extra special tokens, in transformers' order; each is added
    /// only when not already an added token.
    pub(crate) special_tokens: Vec<AddedTokenSpec>,
}

impl TokenizerConfig {
    /// Reads the config's JSON text; `Err` holds what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let json: Json = serde_json::from_str(text).map_err(|err| err.to_string())?;
        let Json::Object(fields) = json else {
            return Err("expected a JSON object".into());
        };
        let added_tokens = added_tokens(&fields)?;
        let special_tokens = special_tokens(&fields);
        Ok(TokenizerConfig {
            split_special_tokens: fields
                .get("split_special_tokens")
                .and_then(Json::as_bool)
                .unwrap_or(false),
            added_tokens,
            special_tokens,
        })
    }
}

/// `added_tokens_decoder`: `{"id": {"content": ..., flags}}`, sorted by numeric id.
fn added_tokens(fields: &Map<String, Json>) -> Result<Vec<AddedTokenSpec>, String> {
    let Some(decoder) = fields.get("added_tokens_decoder") else {
        return Ok(Vec::new());
    };
    let Json::Object(entries) = decoder else {
        return Err("\"added_tokens_decoder\" must be an object".into());
    };
    let mut numbered = Vec::with_capacity(entries.len());
    for (id, token) in entries {
        let id: u64 = id
            .parse()
            .map_err(|_| format!("added_tokens_decoder: {id:?} is not a token id"))?;
        let token = AddedTokenSpec::from_json(token, false)
            .ok_or_else(|| format!("added_tokens_decoder[{id}] has no \"content\""))?;
        numbered.push((id, token));
    }
    numbered.sort_by_key(|(id, _)| *id);
    Ok(numbered.into_iter().map(|(_, token)| token).collect())
}

/// The special tokens transformers adds when missing (a name that is already an added
/// token keeps that token as it is); every one is special. Model-specific names
/// (`boi_token`, `image_token`, ...) count with string values only, as transformers
/// collects them before it converts serialized AddedToken objects.
fn special_tokens(fields: &Map<String, Json>) -> Vec<AddedTokenSpec> {
    special_entries(fields)
        .into_iter()
        .filter(|entry| entry.slot != TokenSlot::ModelSpecific || entry.value.is_string())
        .filter_map(|entry| {
            let mut token = AddedTokenSpec::from_json(entry.value, true)?;
            token.special = true;
            Some(token)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_added_tokens_in_id_order_and_special_tokens() {
        let config = TokenizerConfig::parse(
            r#"{
                "added_tokens_decoder": {
                    "10": {"content": "<b>", "special": true, "normalized": false},
                    "9": {"content": "<a>", "lstrip": true}
                },
                "bos_token": "<b>",
                "eos_token": {"__type": "AddedToken", "content": "<e>", "normalized": true},
                "image_token": "<img>",
                "add_bos_token": true,
                "extra_special_tokens": ["<x>"],
                "split_special_tokens": true
            }"#,
        )
        .unwrap();
        assert!(config.split_special_tokens);
        let contents: Vec<_> = config.added_tokens.iter().map(|t| &t.content).collect();
        assert_eq!(contents, ["<a>", "<b>"]);
        assert!(config.added_tokens[0].lstrip && config.added_tokens[0].normalized);
        let specials: Vec<_> = config.special_tokens.iter().map(|t| &t.content).collect();
        assert_eq!(specials, ["<b>", "<e>", "<img>", "<x>"]);
        assert!(config.special_tokens.iter().all(|t| t.special));
        // A serialized AddedToken keeps its own flags; a bare string is not normalized.
        assert!(config.special_tokens[1].normalized);
        assert!(!config.special_tokens[2].normalized);
    }

    #[test]
    fn rejects_malformed_configs() {
        assert!(TokenizerConfig::parse("[]").is_err());
        assert!(TokenizerConfig::parse(r#"{"added_tokens_decoder": {"x": {}}}"#).is_err());
        assert!(TokenizerConfig::parse(r#"{"added_tokens_decoder": {"1": {}}}"#).is_err());
        assert_eq!(
            TokenizerConfig::parse("{}").unwrap(),
            TokenizerConfig::default()
        );
    }
}
