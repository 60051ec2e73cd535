//! What a failed parse reports: the Python exception transformers raises, by class and
//! message, so that a mismatch with the reference is a plain string comparison.

use serde_json::{json, Value};

/// A failed `parse_response`: an invalid `response_template`, or an output the template
/// cannot turn into a message.
///
/// `class` and `message` are the Python exception's class name and `str()` as
/// transformers 5.23 raises them (`ValueError`, `KeyError`, ...), except for the bounds
/// chatplate adds (class [`LIMIT_CLASS`]), which Python does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{class}: {message}")]
pub struct ParseError {
    /// The Python exception class (`ValueError`, `KeyError`, `TypeError`, ...).
    pub class: String,
    /// The exception's `str()`.
    pub message: String,
}

/// The class of errors that are chatplate's own bounds on untrusted input (a regex that
/// backtracks too much, an input too large), where Python would simply keep going.
pub const LIMIT_CLASS: &str = "LimitExceeded";

impl ParseError {
    /// A `ValueError`, the class of nearly every failure the format defines.
    pub(crate) fn value(message: impl Into<String>) -> Self {
        Self::new("ValueError", message)
    }

    /// An error of any Python class.
    pub(crate) fn new(class: &str, message: impl Into<String>) -> Self {
        Self {
            class: class.to_string(),
            message: message.into(),
        }
    }

    /// A bound of chatplate's own was hit.
    pub(crate) fn limit(message: impl Into<String>) -> Self {
        Self::new(LIMIT_CLASS, message)
    }

    /// The error as the goldens and `chatplate parse --json` show it:
    /// `{"error": {"class": ..., "message": ...}}`.
    pub fn to_json(&self) -> Value {
        json!({"error": {"class": self.class, "message": self.message}})
    }
}
