//! A model's special tokens as transformers 5.23 hands them to the template
//! (`{**tokenizer.special_tokens_map, **kwargs}`).
//!
//! The tokenizer's keyword arguments start as `tokenizer_config.json`. When the config has
//! no `added_tokens_decoder` (older tokenizers), `special_tokens_map.json` is merged over
//! them. The named tokens are `bos`, `eos`, `unk`, `sep`, `pad`, `cls` and `mask`; any
//! other `*_token` key with a string (or `AddedToken`) value is a model-specific token
//! (`image_token`, ...), and so is every entry of an `extra_special_tokens` object. A token
//! is a string, or an `AddedToken` object whose `content` is the text.

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

/// The tokens named by one object of tokenizer keyword arguments.
pub(crate) fn from_object(kwargs: &Map<String, Json>) -> SpecialTokens {
    let mut all: Vec<(String, String)> = NAMED
        .iter()
        .filter_map(|key| Some((key.to_string(), token_text(kwargs.get(*key)?)?)))
        .collect();
    for (key, value) in kwargs {
        if key.ends_with("_token") && !NAMED.contains(&key.as_str()) {
            all.extend(typed_token(value).map(|text| (key.clone(), text)));
        }
    }
    if let Some(Json::Object(extra)) = extra_tokens(kwargs) {
        for (key, value) in extra {
            all.extend(token_text(value).map(|text| (key.clone(), text)));
        }
    }
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
