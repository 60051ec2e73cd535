//! JSON values read at their exact size.
//!
//! serde_json builds a [`Json`] tree by growing each object and list as it reads it: an
//! object of two keys keeps room for three (each slot over a hundred bytes with
//! `preserve_order`), a list of five items room for eight. Chat data is mostly small
//! objects, so the slack is a large share of a loaded conversation. Here each object
//! and list is first collected on a scratch stack reused by every value of the thread,
//! then allocated once, at the size it has. The values, and serde's errors for values
//! of the wrong kind, are the same as serde_json's own.
//!
//! A tree of small values still takes many times the bytes they are written in (a
//! two-key object costs hundreds of bytes, a one-digit number a slot and a string), so
//! reading is also bounded ([`bounded`]): a file may take at most [`LOAD_HALVES`]
//! halves of its size in memory (at least [`LOAD_FLOOR`]), counted as it is read, and a
//! file past that is refused where it crosses the bound instead of taking gigabytes.
//! Real conversations are mostly text and stay far below it.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::mem::size_of;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value as Json};

/// serde_json's name for a number read as text (`arbitrary_precision`).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Scratch space larger than this is given back once the outermost value is read.
const KEEP_SCRATCH: usize = 1024;

/// How many halves of its size a file's values may take in memory once read (5: two
/// and a half times). The text itself is held while it is read, so a file of N bytes
/// peaks at about 3.5 N plus the program: under 400 MB for the densest 100 MB file.
pub const LOAD_HALVES: usize = 5;

/// The memory any file's values may take, however small the file: a bound that only
/// dense files of tens of megabytes reach (a 10 MB file of the tiniest tool calls is
/// read whole). Files from about 54 MB up have two and a half times their size.
pub const LOAD_FLOOR: usize = 128 << 20;

/// What an object costs besides its entries: its hash table's header and smallest
/// allocation.
const OBJECT_BYTES: usize = 64;

/// What each entry of an object costs besides its key's and value's own heap bytes:
/// the entry (hash, key, value) and its slot in the hash table.
const ENTRY_BYTES: usize = size_of::<(u64, String, Json)>() + size_of::<usize>() + 1;

thread_local! {
    /// The bound of the read in progress on this thread, and what it has used so far.
    static LOAD: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
    /// Items of the lists being read, innermost last.
    static ITEMS: RefCell<Vec<Json>> = const { RefCell::new(Vec::new()) };
    /// Entries of the objects being read, innermost last.
    static ENTRIES: RefCell<Vec<(String, Json)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `read` (which reads JSON text of `len` bytes through this module) under the
/// load bound: [`LOAD_HALVES`] halves of `len`, at least [`LOAD_FLOOR`].
pub(crate) fn bounded<T>(len: usize, read: impl FnOnce() -> T) -> T {
    bounded_to(load_bound(len), read)
}

/// The memory the values of a file of `len` bytes may take.
pub fn load_bound(len: usize) -> usize {
    (len.saturating_mul(LOAD_HALVES) / 2).max(LOAD_FLOOR)
}

/// Runs `read` with at most `budget` bytes of values.
fn bounded_to<T>(budget: usize, read: impl FnOnce() -> T) -> T {
    let outer = LOAD.replace(Some((budget, 0)));
    let result = read();
    LOAD.set(outer);
    result
}

/// What a string of `len` bytes allocates: allocators hand out blocks in steps (16
/// bytes here; a one-digit number kept as text takes a block too).
fn heap(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        len.div_ceil(16) * 16
    }
}

/// Counts `bytes` against the load bound, if one is set.
fn charge<E: de::Error>(bytes: usize) -> Result<(), E> {
    let Some((budget, used)) = LOAD.get() else {
        return Ok(());
    };
    let used = used.saturating_add(bytes);
    LOAD.set(Some((budget, used)));
    if used <= budget {
        return Ok(());
    }
    Err(E::custom(format!(
        "too many small values: reading this file would take more than {} MiB of memory \
         ({} × its size, at least {} MiB), far more than a conversation of \
         its size needs",
        budget >> 20,
        LOAD_HALVES as f64 / 2.0,
        LOAD_FLOOR >> 20
    )))
}

/// Parses JSON text of one value at its exact size (the text is all of it, as
/// `serde_json::from_str` has it).
pub(crate) fn from_str(text: &str) -> Result<Json, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let json = value(&mut deserializer)?;
    deserializer.end()?;
    Ok(json)
}

/// `deserialize_with` for a list of anything (a session's messages): each slot counted
/// against the load bound, and the room the list grew beyond its length given back.
pub(crate) fn list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    struct Slots<T>(std::marker::PhantomData<T>);
    impl<'de, T: serde::Deserialize<'de>> Visitor<'de> for Slots<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a sequence")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                charge(size_of::<T>())?;
                items.push(item);
            }
            items.shrink_to_fit();
            Ok(items)
        }
    }
    deserializer.deserialize_seq(Slots(std::marker::PhantomData))
}

/// Reads one JSON value at its exact size.
pub(crate) fn value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
    deserializer.deserialize_any(AnyValue)
}

/// Reads a JSON object at its exact size (serde's errors for anything else, as
/// `Map::deserialize` words them).
pub(crate) fn object<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Map<String, Json>, D::Error> {
    deserializer.deserialize_map(ObjectOnly)
}

/// `deserialize_with` for an `Option<Vec<Json>>` field: `null` is `None`, as serde's
/// own reading has it, and its errors too.
pub(crate) fn optional_list<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<Json>>, D::Error> {
    deserializer.deserialize_option(OptionalList)
}

/// `deserialize_with` for an `Option<Json>` field: `null` is `None`, as serde's own
/// reading has it.
pub(crate) fn optional_value<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Json>, D::Error> {
    match value(deserializer)? {
        Json::Null => Ok(None),
        other => Ok(Some(other)),
    }
}

/// [`value`] as a seed, for the items and entries read here.
struct Seed;

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Json;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        value(deserializer)
    }
}

/// Any JSON value.
struct AnyValue;

impl<'de> Visitor<'de> for AnyValue {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, flag: bool) -> Result<Json, E> {
        Ok(Json::Bool(flag))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
        Ok(Number::from_f64(n).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Json, E> {
        charge(heap(text.len()))?;
        Ok(Json::String(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Json, E> {
        charge(heap(text.len()))?;
        Ok(Json::String(text))
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        value(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Json, A::Error> {
        read_list(seq).map(Json::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Json::Object(Map::new()));
        };
        if first == NUMBER_TOKEN {
            // A number kept as written (`arbitrary_precision`).
            let text: String = map.next_value()?;
            charge(heap(text.len()))?;
            return text
                .parse::<Number>()
                .map(Json::Number)
                .map_err(de::Error::custom);
        }
        read_object(first, map).map(Json::Object)
    }
}

/// An object, and nothing else.
struct ObjectOnly;

impl<'de> Visitor<'de> for ObjectOnly {
    type Value = Map<String, Json>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        match map.next_key::<String>()? {
            Some(first) => read_object(first, map),
            None => Ok(Map::new()),
        }
    }
}

/// A list or `null`.
struct OptionalList;

impl<'de> Visitor<'de> for OptionalList {
    type Value = Option<Vec<Json>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(ListOnly).map(Some)
    }
}

/// A list, and nothing else.
struct ListOnly;

impl<'de> Visitor<'de> for ListOnly {
    type Value = Vec<Json>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        read_list(seq)
    }
}

/// A list's items, collected on the scratch stack and then moved into a list of their
/// number. The stack is left as it was found, error or not.
fn read_list<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Vec<Json>, A::Error> {
    let start = ITEMS.with_borrow(Vec::len);
    let read = loop {
        match seq.next_element_seed(Seed) {
            Ok(Some(item)) => {
                ITEMS.with_borrow_mut(|items| items.push(item));
                if let Err(err) = charge(size_of::<Json>()) {
                    break Err(err);
                }
            }
            Ok(None) => break Ok(()),
            Err(err) => break Err(err),
        }
    };
    let items = ITEMS.with_borrow_mut(|items| {
        if start == 0 {
            // The outermost list (a request body's messages) is the scratch itself:
            // taken rather than copied, which would hold it twice.
            let mut list = std::mem::take(items);
            list.shrink_to_fit();
            return list;
        }
        let list: Vec<Json> = items.drain(start..).collect();
        release(items, start);
        list
    });
    read.map(|()| items)
}

/// An object's entries, the first key already read, collected on the scratch stack
/// and then moved into an object of their number.
fn read_object<'de, A: MapAccess<'de>>(
    first: String,
    mut map: A,
) -> Result<Map<String, Json>, A::Error> {
    let start = ENTRIES.with_borrow(Vec::len);
    let mut key = first;
    let read = charge(OBJECT_BYTES).and_then(|()| loop {
        if let Err(err) = charge(ENTRY_BYTES + heap(key.len())) {
            break Err(err);
        }
        let item = match map.next_value_seed(Seed) {
            Ok(item) => item,
            Err(err) => break Err(err),
        };
        ENTRIES.with_borrow_mut(|entries| entries.push((key, item)));
        match map.next_key::<String>() {
            Ok(Some(next)) => key = next,
            Ok(None) => break Ok(()),
            Err(err) => break Err(err),
        }
    });
    let object = ENTRIES.with_borrow_mut(|entries| {
        let mut object = Map::with_capacity(entries.len() - start);
        object.extend(entries.drain(start..));
        release(entries, start);
        object
    });
    read.map(|()| object)
}

/// Once the outermost value is read (`start` 0), gives back a scratch buffer that grew
/// large, so one long list does not keep its room for the life of the thread.
fn release<T>(scratch: &mut Vec<T>, start: usize) {
    if start == 0 && scratch.capacity() > KEEP_SCRATCH {
        *scratch = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Json, serde_json::Error> {
        value(&mut serde_json::Deserializer::from_str(text))
    }

    #[test]
    fn reads_what_serde_json_reads_in_the_same_order() {
        let text = r#"{"b": [1, -2, 3.50, 1e400, -0, 123456789012345678901234567890, true, null],
            "a": {"z": "x\u00e9", "y": {}}, "c": [], "d": [[], [{}]], "a": 2}"#;
        let ours = read(text).unwrap();
        let theirs: Json = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs);
        assert_eq!(ours.to_string(), theirs.to_string());
    }

    #[test]
    fn objects_and_lists_have_no_spare_room() {
        let Json::Object(map) = read(r#"{"role": "user", "content": [1, 2, 3, 4, 5]}"#).unwrap()
        else {
            panic!("an object");
        };
        assert_eq!(map["content"].as_array().unwrap().capacity(), 5);
    }

    #[test]
    fn an_error_inside_leaves_the_scratch_stacks_empty() {
        assert!(read(r#"{"a": [1, {"b": [2, 3, }]}"#).is_err());
        assert!(read(r#"[{"a": 1, "b": [2, {"c": ]}]"#).is_err());
        assert_eq!(ITEMS.with_borrow(Vec::len), 0);
        assert_eq!(ENTRIES.with_borrow(Vec::len), 0);
    }

    #[test]
    fn a_dense_text_is_refused_where_it_crosses_the_bound_and_text_is_not() {
        // 1,000 numbers written in 2 bytes each take 80 bytes each as values.
        let numbers = format!("[{}]", vec!["1"; 1000].join(","));
        let err = bounded_to(numbers.len() * LOAD_HALVES / 2, || from_str(&numbers)).unwrap_err();
        assert!(
            err.to_string().starts_with("too many small values"),
            "{err}"
        );
        let column = err.column();
        assert!(column > 1 && column < numbers.len(), "{column}");
        // Text costs about its own size.
        let text = format!("[\"{}\"]", "x".repeat(10_000));
        assert!(bounded_to(text.len() * 2, || from_str(&text)).is_ok());
        // The bound ends with the read.
        assert!(from_str(&numbers).is_ok());
    }

    #[test]
    fn the_wrong_kind_is_worded_as_serde_words_it() {
        let ours = object(&mut serde_json::Deserializer::from_str("[1]")).unwrap_err();
        let theirs = serde_json::from_str::<Map<String, Json>>("[1]").unwrap_err();
        assert_eq!(ours.to_string(), theirs.to_string());
        let ours = optional_list(&mut serde_json::Deserializer::from_str("\"x\"")).unwrap_err();
        let theirs = serde_json::from_str::<Option<Vec<Json>>>("\"x\"").unwrap_err();
        assert_eq!(ours.to_string(), theirs.to_string());
        assert_eq!(
            optional_list(&mut serde_json::Deserializer::from_str("null")).unwrap(),
            None
        );
    }
}
