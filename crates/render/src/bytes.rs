//! Python's `str.encode` and `bytes.decode`: bytes values (printed `b'...'`) for the
//! codecs a chat template could reasonably name.

use minijinja::value::{from_args, Kwargs, Value};
use minijinja::Error;

use super::pyerror::raise;

/// `bytes.decode(encoding='utf-8')`.
pub(crate) fn decode(bytes: &[u8], args: &[Value]) -> Result<Value, Error> {
    let (encoding,): (Option<String>,) = from_args(args)?;
    match codec(encoding.as_deref())? {
        Codec::Utf8 => String::from_utf8(bytes.to_vec()).map(Value::from).map_err(|err| {
            let at = err.utf8_error().valid_up_to();
            raise(
                "UnicodeDecodeError",
                format!(
                    "'utf-8' codec can't decode byte 0x{:02x} in position {at}: invalid start byte",
                    bytes[at]
                ),
            )
        }),
        Codec::Latin1 => Ok(Value::from(bytes.iter().map(|&b| char::from(b)).collect::<String>())),
        Codec::Ascii => match bytes.iter().position(|b| !b.is_ascii()) {
            None => Ok(Value::from(String::from_utf8_lossy(bytes).into_owned())),
            Some(at) => Err(raise(
                "UnicodeDecodeError",
                format!(
                    "'ascii' codec can't decode byte 0x{:02x} in position {at}: ordinal not in range(128)",
                    bytes[at]
                ),
            )),
        },
    }
}

enum Codec {
    Utf8,
    Ascii,
    Latin1,
}

/// The codecs chat templates could reasonably name, spelled any way Python accepts.
fn codec(name: Option<&str>) -> Result<Codec, Error> {
    let normalized = name
        .unwrap_or("utf-8")
        .to_ascii_lowercase()
        .replace('_', "-");
    match normalized.as_str() {
        "utf-8" | "utf8" => Ok(Codec::Utf8),
        "ascii" | "us-ascii" => Ok(Codec::Ascii),
        "latin-1" | "latin1" | "iso-8859-1" => Ok(Codec::Latin1),
        _ => Err(raise(
            "LookupError",
            format!("unknown encoding: {}", name.unwrap_or_default()),
        )),
    }
}

/// `str.encode(encoding='utf-8')`.
pub(crate) fn encode(text: &str, args: &[Value]) -> Result<Value, Error> {
    let (encoding, kwargs): (Option<String>, Kwargs) = from_args(args)?;
    let encoding = kwargs.get::<Option<String>>("encoding")?.or(encoding);
    let _errors: Option<String> = kwargs.get("errors")?;
    kwargs.assert_all_used()?;
    let limit = match codec(encoding.as_deref())? {
        Codec::Utf8 => return Ok(Value::from_bytes(text.as_bytes().to_vec())),
        Codec::Ascii => (128, "ascii"),
        Codec::Latin1 => (256, "latin-1"),
    };
    match text.chars().position(|c| (c as u32) >= limit.0) {
        None => Ok(Value::from_bytes(text.chars().map(|c| c as u8).collect())),
        Some(at) => {
            let code = text.chars().nth(at).map_or(0, u32::from);
            // Python writes the character as an escape, whatever it is.
            let escaped = match code {
                0..=0xff => format!("\\x{code:02x}"),
                0x100..=0xffff => format!("\\u{code:04x}"),
                _ => format!("\\U{code:08x}"),
            };
            Err(raise(
                "UnicodeEncodeError",
                format!(
                    "'{}' codec can't encode character '{escaped}' in position {at}: ordinal not in range({})",
                    limit.1, limit.0
                ),
            ))
        }
    }
}
