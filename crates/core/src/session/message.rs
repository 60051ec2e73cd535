//! A message of the conversation: a JSON object with a string `role`, kept key for key
//! (`content` of any JSON type, as transformers takes it).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// A message: a JSON object with a string `role`, every other key kept as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Message(pub Map<String, Json>);

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let fields = super::compact::object(deserializer)?;
        // `content` may be any JSON value: transformers passes it to the template as
        // `json.loads` gives it (an object is a dict, printed and iterated as one).
        match fields.get("role") {
            Some(Json::String(_)) => Ok(Message(fields)),
            Some(_) => Err(D::Error::custom("message \"role\" must be a string")),
            None => Err(D::Error::custom("message has no \"role\"")),
        }
    }
}

impl Message {
    /// A message with just a role and text content.
    pub fn new(role: &str, content: &str) -> Self {
        let mut fields = Map::new();
        fields.insert("role".into(), Json::from(role));
        fields.insert("content".into(), Json::from(content));
        Message(fields)
    }

    /// The role (validated to be a string on load).
    pub fn role(&self) -> &str {
        self.0
            .get("role")
            .and_then(Json::as_str)
            .unwrap_or_default()
    }
}
