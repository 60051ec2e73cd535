//! A fixture's `assert_token_round_trip`: `true` (each assistant message, as rendered,
//! must keep its tokens when parsed back and rendered again) or the output a model
//! sampled after the session's messages, `{"output": TEXT}` or `{"ids": [...]}` (both
//! may be given; they must then agree).

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// What `assert_token_round_trip` asks `chatplate check` to prove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum TokenRoundTripAssertion {
    /// `true`: every assistant message, cut out of the render as the model would have
    /// generated it, keeps its tokens (`false` asks for nothing).
    Each(bool),
    /// The model's output after the session's messages.
    Sampled {
        /// Its raw text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// The token ids the model sampled.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ids: Option<Vec<u32>>,
    },
}

impl TokenRoundTripAssertion {
    /// Whether anything is asked.
    pub fn asked(&self) -> bool {
        !matches!(self, TokenRoundTripAssertion::Each(false))
    }
}

/// What the field must be.
const WRONG: &str = "\"assert_token_round_trip\" must be true, false, or an object with \"output\" (a string) and/or \"ids\" (a list of token ids)";

impl<'de> Deserialize<'de> for TokenRoundTripAssertion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wrong = || serde::de::Error::custom(WRONG);
        let Json::Object(map) = Json::deserialize(deserializer)? else {
            return Err(wrong());
        };
        if map.is_empty() || map.keys().any(|k| k != "output" && k != "ids") {
            return Err(wrong());
        }
        let output = match map.get("output") {
            None => None,
            Some(Json::String(text)) => Some(text.clone()),
            Some(_) => return Err(wrong()),
        };
        let ids = match map.get("ids") {
            None => None,
            Some(Json::Array(items)) => Some(
                items
                    .iter()
                    .map(|item| item.as_u64().and_then(|id| u32::try_from(id).ok()))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(wrong)?,
            ),
            Some(_) => return Err(wrong()),
        };
        Ok(TokenRoundTripAssertion::Sampled { output, ids })
    }
}

/// Reads the field: a bool or an object (see [`TokenRoundTripAssertion`]).
pub(crate) fn read<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<TokenRoundTripAssertion>, D::Error> {
    match Json::deserialize(deserializer)? {
        Json::Bool(flag) => Ok(Some(TokenRoundTripAssertion::Each(flag))),
        other => TokenRoundTripAssertion::deserialize(other)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Option<TokenRoundTripAssertion>, serde_json::Error> {
        read(&mut serde_json::Deserializer::from_str(text))
    }

    #[test]
    fn reads_a_flag_or_a_sampled_output() {
        assert_eq!(
            parse("true").unwrap(),
            Some(TokenRoundTripAssertion::Each(true))
        );
        assert_eq!(
            parse(r#"{"output": "Hi", "ids": [1, 2]}"#).unwrap(),
            Some(TokenRoundTripAssertion::Sampled {
                output: Some("Hi".into()),
                ids: Some(vec![1, 2])
            })
        );
        for wrong in [r#"{"text": "Hi"}"#, r#"{"ids": [-1]}"#, "{}", "3"] {
            let err = parse(wrong).unwrap_err().to_string();
            assert!(
                err.starts_with("\"assert_token_round_trip\" must be"),
                "{err}"
            );
        }
    }
}
