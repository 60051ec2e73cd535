//! How a session's fields are written in the file: `continue_final_message` (a flag or a
//! field name), `expected_tokens` (a count or the ids), and the checks serde runs while
//! reading (`version`, `clock`) so that their errors carry a position.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::FORMAT_VERSION;

/// `continue_final_message` as written in the file: a flag or a field name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ContinueSetting {
    /// `true` continues `content`, `false` is off.
    Flag(bool),
    /// Continue this field of the final message.
    Field(String),
}

impl Default for ContinueSetting {
    fn default() -> Self {
        ContinueSetting::Flag(false)
    }
}

impl<'de> Deserialize<'de> for ContinueSetting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Json::deserialize(deserializer)? {
            Json::Bool(flag) => Ok(ContinueSetting::Flag(flag)),
            Json::String(field) => Ok(ContinueSetting::Field(field)),
            other => Err(D::Error::custom(format!(
                "\"continue_final_message\" must be true, false or the name of a field \
                 (like \"content\"), not {}",
                json_kind(&other)
            ))),
        }
    }
}

/// `expected_tokens` as written: a count (`1234`) or the ids (`[128000, 9906, ...]`).
///
/// (De)serialized by hand through `serde_json::Value`, not as an untagged enum: untagged
/// enums holding numbers break when serde_json's `arbitrary_precision` feature is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpectedTokens {
    /// The number of tokens.
    Count(usize),
    /// The exact token ids.
    Ids(Vec<u32>),
}

impl Serialize for ExpectedTokens {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ExpectedTokens::Count(count) => serializer.serialize_u64(*count as u64),
            ExpectedTokens::Ids(ids) => ids.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ExpectedTokens {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TokensVisitor)
    }
}

/// Reads `expected_tokens` straight into its count or ids: a tree of JSON numbers would
/// take many times the bytes of the list as written.
struct TokensVisitor;

impl<'de> serde::de::Visitor<'de> for TokensVisitor {
    type Value = ExpectedTokens;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(WRONG_TOKENS)
    }

    fn visit_u64<E: serde::de::Error>(self, count: u64) -> Result<ExpectedTokens, E> {
        usize::try_from(count)
            .map(ExpectedTokens::Count)
            .map_err(|_| E::custom(WRONG_TOKENS))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<ExpectedTokens, E> {
        Err(E::custom(WRONG_TOKENS))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<ExpectedTokens, E> {
        Err(E::custom(WRONG_TOKENS))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<ExpectedTokens, E> {
        Err(E::custom(WRONG_TOKENS))
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<ExpectedTokens, E> {
        Err(E::custom(WRONG_TOKENS))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<ExpectedTokens, E> {
        Err(E::custom(WRONG_TOKENS))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<ExpectedTokens, A::Error> {
        // A number kept as text (`arbitrary_precision`), or anything else: read as JSON.
        let value = Json::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        value.as_u64().map_or_else(
            || Err(serde::de::Error::custom(WRONG_TOKENS)),
            |n| self.visit_u64(n),
        )
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<ExpectedTokens, A::Error> {
        let mut ids = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(item) = seq.next_element::<Json>()? {
            let id = item.as_u64().and_then(|id| u32::try_from(id).ok());
            ids.push(id.ok_or_else(|| serde::de::Error::custom(WRONG_TOKENS))?);
        }
        ids.shrink_to_fit();
        Ok(ExpectedTokens::Ids(ids))
    }
}

/// What `expected_tokens` must be.
const WRONG_TOKENS: &str = "\"expected_tokens\" must be a token count or a list of token ids";

/// How a JSON value is described in a message.
fn json_kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

/// `version`: the number 1, checked while reading so the error has a position.
pub(super) fn read_version<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<u32, D::Error> {
    use serde::de::Error;
    let value = Json::deserialize(deserializer)?;
    match value.as_u64() {
        Some(found) if found == u64::from(FORMAT_VERSION) => Ok(FORMAT_VERSION),
        Some(found) => Err(D::Error::custom(format!(
            "unsupported session version {found} (this chatplate reads version {FORMAT_VERSION})"
        ))),
        None => Err(D::Error::custom(format!(
            "\"version\" must be the number {FORMAT_VERSION}, not {}",
            json_kind(&value)
        ))),
    }
}

/// `clock`: a `YYYY-MM-DDTHH:MM:SS` date-time, checked while reading.
pub(super) fn read_clock<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    use serde::de::Error;
    let text = String::deserialize(deserializer)?;
    match text.parse::<jiff::civil::DateTime>() {
        Ok(_) => Ok(Some(text)),
        Err(_) => Err(D::Error::custom(format!(
            "clock {} is not a date-time like 2026-01-15T00:00:00",
            chatplate_render::visible::quoted(&text)
        ))),
    }
}

/// Whether a flag is off (`skip_serializing_if`: off flags are not written).
pub(super) fn is_false(flag: &bool) -> bool {
    !flag
}

/// Whether `continue_final_message` is off (then it is not written).
pub(super) fn is_off(setting: &ContinueSetting) -> bool {
    *setting == ContinueSetting::Flag(false)
}
