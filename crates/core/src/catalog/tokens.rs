//! A model's special tokens as transformers 5.23 hands them to the template
//! (`{**tokenizer.special_tokens_map, **kwargs}`).
//!
//! The tokenizer's keyword arguments start as `tokenizer_config.json`. When the config has
//! no `added_tokens_decoder` (older tokenizers), `special_tokens_map.json` is merged over
//! them. The named tokens are `bos`, `eos`, `unk`, `sep`, `pad`, `cls` and `mask`; any
//! other `*_token` key with a string (or `AddedToken`) value is a model-specific token
//! (`image_token`, ...), and so is every entry of an `extra_special_tokens` object. A token
//! is a string, or an `AddedToken` object whose `content` is the text.
//!
//! [`special_entries`] is the one reader of which keys name special tokens; the
//! tokenizer's added tokens (`crate::tokens`) read their flags from the same entries.

use std::path::Path;

use serde_json::{Map, Value as Json};

use super::model::{read_object, SPECIAL_TOKENS_MAP};
use super::CatalogError;

/// transformers' `SPECIAL_TOKENS_ATTRIBUTES`, in order.
const NAMED: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

/// The special tokens of one model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SpecialTokens {
    /// `bos_token`.
    pub(crate) bos: Option<String>,
    /// `eos_token`.
    pub(crate) eos: Option<String>,
    /// Every other named or model-specific token, in transformers' order.
    pub(crate) others: Vec<(String, String)>,
}

/// The tokens of the model in `dir` whose parsed `tokenizer_config.json` is `config`.
pub(crate) fn from_config(
    config: &Map<String, Json>,
    dir: &Path,
) -> Result<SpecialTokens, CatalogError> {
    let mut kwargs = config.clone();
    if !config.contains_key("added_tokens_decoder") {
        if let Some(legacy) = read_object(&dir.join(SPECIAL_TOKENS_MAP))? {
            for (key, mut value) in legacy {
                // transformers turns these objects into AddedTokens whatever their keys.
                if let (Json::Object(fields), false) = (&mut value, key == "extra_special_tokens") {
                    fields.insert("__type".into(), Json::from("AddedToken"));
                }
                kwargs.insert(key, value);
            }
        }
    }
    Ok(from_object(&kwargs))
}

/// Where in the tokenizer's keyword arguments a special token was named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenSlot {
    /// One of transformers' named tokens (`bos_token`, ...).
    Named,
    /// Any other `*_token` key (`image_token`, ...).
    ModelSpecific,
    /// An entry of `extra_special_tokens` (or `additional_special_tokens`).
    Extra,
}

/// One special token as the keyword arguments name it, its value not yet read (the
/// template and the tokenizer each take different values from it, as transformers does).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TokenEntry<'a> {
    /// The key, or `None` for an entry of an extra-token list.
    pub(crate) key: Option<&'a str>,
    /// Where it was named.
    pub(crate) slot: TokenSlot,
    /// Its value: a string, an `AddedToken` object, or anything a config holds.
    pub(crate) value: &'a Json,
}

/// Every special token `kwargs` names, in transformers' order: the named tokens, the
/// model-specific ones, then the extra ones. The one reader of special tokens: the
/// template's variables ([`from_object`]) and the tokenizer's added tokens both start here.
pub(crate) fn special_entries(kwargs: &Map<String, Json>) -> Vec<TokenEntry<'_>> {
    let mut entries: Vec<TokenEntry> = NAMED
        .iter()
        .filter_map(|key| Some(entry(Some(key), TokenSlot::Named, kwargs.get(*key)?)))
        .collect();
    let model_specific = kwargs
        .iter()
        .filter(|(key, _)| key.ends_with("_token") && !NAMED.contains(&key.as_str()));
    entries.extend(
        model_specific.map(|(key, value)| entry(Some(key), TokenSlot::ModelSpecific, value)),
    );
    match extra_tokens(kwargs) {
        Some(Json::Array(list)) => entries.extend(
            list.iter()
                .map(|value| entry(None, TokenSlot::Extra, value)),
        ),
        Some(Json::Object(named)) => entries.extend(
            named
                .iter()
                .map(|(key, value)| entry(Some(key), TokenSlot::Extra, value)),
        ),
        _ => {}
    }
    entries
}

fn entry<'a>(key: Option<&'a str>, slot: TokenSlot, value: &'a Json) -> TokenEntry<'a> {
    TokenEntry { key, slot, value }
}

/// The tokens named by one object of tokenizer keyword arguments, as the template sees
/// them: the extra tokens of a list have no name, so only an object's count.
pub(crate) fn from_object(kwargs: &Map<String, Json>) -> SpecialTokens {
    let mut all: Vec<(String, String)> = special_entries(kwargs)
        .into_iter()
        .filter_map(|entry| Some((entry.key?.to_string(), template_text(&entry)?)))
        .collect();
    let take = |all: &mut Vec<(String, String)>, key: &str| {
        let index = all.iter().position(|(k, _)| k == key)?;
        Some(all.remove(index).1)
    };
    let bos = take(&mut all, "bos_token");
    let eos = take(&mut all, "eos_token");
    SpecialTokens {
        bos,
        eos,
        others: dedupe(all),
    }
}

/// The text a template gets for one entry; a model-specific key counts only with a
/// string or a serialized `AddedToken`.
fn template_text(entry: &TokenEntry) -> Option<String> {
    match entry.slot {
        TokenSlot::ModelSpecific => typed_token(entry.value),
        TokenSlot::Named | TokenSlot::Extra => token_text(entry.value),
    }
}

/// `extra_special_tokens`, or the deprecated `additional_special_tokens` it replaced.
fn extra_tokens(kwargs: &Map<String, Json>) -> Option<&Json> {
    kwargs
        .get("extra_special_tokens")
        .filter(|v| !v.is_null())
        .or_else(|| kwargs.get("additional_special_tokens"))
}

/// A later key replaces an earlier one but keeps its place, as in a Python dict.
fn dedupe(all: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (key, text) in all {
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = text,
            None => out.push((key, text)),
        }
    }
    out
}

/// A named token: a string, or an object with a `content` string (transformers wants an
/// `AddedToken`; chatplate also takes the plain object older configs carry).
fn token_text(value: &Json) -> Option<String> {
    match value {
        Json::String(text) => Some(text.clone()),
        Json::Object(fields) => fields.get("content")?.as_str().map(String::from),
        _ => None,
    }
}

/// A model-specific token only counts when it is a string or a serialized `AddedToken`
/// (`"__type": "AddedToken"`): transformers skips other values of `*_token` keys.
fn typed_token(value: &Json) -> Option<String> {
    match value {
        Json::String(text) => Some(text.clone()),
        Json::Object(fields) if fields.get("__type") == Some(&Json::from("AddedToken")) => {
            token_text(value)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tokens(config: Json) -> SpecialTokens {
        from_object(config.as_object().unwrap())
    }

    #[test]
    fn strings_and_added_tokens() {
        let found = tokens(json!({
            "bos_token": "<s>",
            "eos_token": {"__type": "AddedToken", "content": "</s>", "lstrip": false},
            "pad_token": null,
            "unk_token": {"content": "<unk>"},
            "image_token": "<img>",
            "add_bos_token": true,
            "boa_token": {"content": "<audio>"},
        }));
        assert_eq!(found.bos.as_deref(), Some("<s>"));
        assert_eq!(found.eos.as_deref(), Some("</s>"));
        let others: Vec<(&str, &str)> = found
            .others
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(others, [("unk_token", "<unk>"), ("image_token", "<img>")]);
    }

    #[test]
    fn extra_special_tokens_object_adds_named_tokens() {
        let found = tokens(json!({
            "extra_special_tokens": {"video_token": "<vid>"},
            "additional_special_tokens": ["<a>"],
        }));
        assert_eq!(found.others, [("video_token".into(), "<vid>".into())]);
    }
}
