//! Conversion of JSON input into template values with Python semantics.
//!
//! Dicts become [`PyDict`]: insertion-ordered like Python's dict, with a linear key
//! lookup. Chat data is many small dicts (a message has a handful of keys), where a
//! scan beats hashing every key with SipHash, and renders of long conversations spend
//! a large share of their time building these values.

use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value};
use serde_json::Value as Json;

use super::none::python_none;
use super::traced::Probe;

/// An insertion-ordered dict built from JSON.
#[derive(Debug)]
pub(crate) struct PyDict {
    /// Keys and values side by side, as they were given: one allocation per dict.
    entries: Vec<(Value, Value)>,
    /// A traced render's message: notes every look at it (see `traced`).
    probe: Option<Box<Probe>>,
}

impl PyDict {
    fn from_entries(entries: Vec<(Value, Value)>) -> Self {
        PyDict {
            entries,
            probe: None,
        }
    }

    /// Tells a traced render's probe that the template looked at this dict.
    fn looked_at(&self) {
        if let Some(probe) = &self.probe {
            probe.touch();
        }
    }

    /// Tells a traced render's probe that a `for` loop inside `enclosing` loops over
    /// messages reached this dict; whether it is a traced render's message.
    pub(crate) fn reached(&self, enclosing: usize) -> bool {
        match &self.probe {
            Some(probe) => {
                probe.reach(enclosing);
                true
            }
            None => false,
        }
    }

    /// The keys and values in order, for code that reads the whole dict (`tojson`).
    pub(crate) fn entries(&self) -> &[(Value, Value)] {
        self.looked_at();
        &self.entries
    }

    /// The value under `key`, without noting a miss: `key in dict` makes no undefined
    /// value, so it leaves no hint behind (see [`super::undefined`]).
    pub(crate) fn find(&self, key: &Value) -> Option<&Value> {
        self.looked_at();
        match key.as_str() {
            Some(wanted) => self.find_str(wanted),
            None => self
                .entries
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, value)| value),
        }
    }

    /// The value under the string key `wanted` (a string key equals only a string).
    fn find_str(&self, wanted: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(wanted))
            .map(|(_, value)| value)
    }
}

impl Object for PyDict {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let found = self.find(key).cloned();
        if found.is_none() {
            super::undefined::note_miss(key, "dict object");
        }
        found
    }

    /// `message.role` and `message['role']` arrive here: no temporary key value unless
    /// the key is missing (the miss is noted with it).
    fn get_value_by_str(self: &Arc<Self>, key: &str) -> Option<Value> {
        self.looked_at();
        let found = self.find_str(key).cloned();
        if found.is_none() && super::undefined::noting() {
            super::undefined::note_miss(&Value::from(key), "dict object");
        }
        found
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.looked_at();
        Enumerator::Values(self.entries.iter().map(|(key, _)| key.clone()).collect())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        self.looked_at();
        Some(self.entries.len())
    }
}

/// Converts JSON into a template value: key order kept, `null` as Python's `None`
/// (see [`super::none`]), integers as integers and other numbers as floats.
pub(crate) fn json_to_value(json: &Json) -> Value {
    match json {
        Json::Null => python_none(),
        Json::Bool(flag) => Value::from(*flag),
        Json::Number(number) => number_to_value(number),
        Json::String(text) => Value::from(text.as_str()),
        Json::Array(items) => items.iter().map(json_to_value).collect(),
        Json::Object(map) => dict(
            map.iter()
                .map(|(key, item)| (Value::from(key.as_str()), json_to_value(item)))
                .collect(),
        ),
    }
}

/// Wraps ordered entries as a dict value.
pub(crate) fn dict(entries: Vec<(Value, Value)>) -> Value {
    Value::from_object(PyDict::from_entries(entries))
}

/// Wraps ordered entries as a dict value that tells `probe` whenever it is looked at.
pub(crate) fn probed_dict(entries: Vec<(Value, Value)>, probe: Probe) -> Value {
    let mut dict = PyDict::from_entries(entries);
    dict.probe = Some(Box::new(probe));
    Value::from_object(dict)
}

/// What Python's `json.loads` makes of a number: an integer stays an integer (up to 128
/// bits here; Python's are unbounded), anything with a fraction or exponent is a float.
fn number_to_value(number: &serde_json::Number) -> Value {
    if let Some(int) = number.as_i64() {
        return Value::from(int);
    }
    if let Some(uint) = number.as_u64() {
        return Value::from(uint);
    }
    let text = number.to_string();
    let digits = text.strip_prefix('-').unwrap_or(&text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(wide) = text.parse::<i128>() {
            return Value::from(wide);
        }
    }
    // With `arbitrary_precision`, `as_f64` refuses what overflows to infinity; Python's
    // `json.loads("1e400")` is `inf`, and Rust's parse gives the same.
    Value::from(
        number
            .as_f64()
            .or_else(|| text.parse::<f64>().ok())
            .unwrap_or(f64::NAN),
    )
}
