//! Jinja2's `filesizeformat`: a byte count the way people read it.

use minijinja::value::{Kwargs, Value, ValueKind};
use minijinja::Error;

use super::pyerror::raise;

/// Registers the filter.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    env.add_filter("filesizeformat", filesizeformat);
}

/// `filesizeformat(value, binary=False)`: `1 Byte`, `12 Bytes`, `1.5 kB` (or `KiB`),
/// up to yotta-, with one decimal.
fn filesizeformat(value: Value, binary: Option<Value>, kwargs: Kwargs) -> Result<String, Error> {
    let binary = kwargs.get::<Option<Value>>("binary")?.or(binary);
    kwargs.assert_all_used()?;
    let bytes = python_float(&value)?;
    Ok(format_size(bytes, binary.is_some_and(|b| b.is_true())))
}

fn format_size(bytes: f64, binary: bool) -> String {
    let base: u128 = if binary { 1024 } else { 1000 };
    let prefixes = if binary {
        ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"]
    } else {
        ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"]
    };
    if bytes == 1.0 {
        return "1 Byte".to_string();
    }
    if bytes < base as f64 {
        return format!("{} Bytes", bytes.trunc() as i64);
    }
    // Python computes the unit as an exact integer and converts it once.
    let mut unit = base;
    for prefix in prefixes {
        unit *= base;
        if bytes < unit as f64 {
            return format!("{:.1} {prefix}", base as f64 * bytes / unit as f64);
        }
    }
    let last = prefixes[prefixes.len() - 1];
    format!("{:.1} {last}", base as f64 * bytes / unit as f64)
}

/// Python's `float(value)` for numbers, booleans and numeric strings.
fn python_float(value: &Value) -> Result<f64, Error> {
    match value.kind() {
        ValueKind::Number => f64::try_from(value.clone()),
        ValueKind::Bool => Ok(if value.is_true() { 1.0 } else { 0.0 }),
        ValueKind::String => {
            let text = value.as_str().unwrap_or_default();
            text.trim().parse::<f64>().map_err(|_| {
                raise(
                    "ValueError",
                    format!(
                        "could not convert string to float: {}",
                        super::pyerror::repr(text)
                    ),
                )
            })
        }
        _ => Err(raise(
            "TypeError",
            format!(
                "float() argument must be a string or a real number, not '{}'",
                super::pytype::type_name(value)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::format_size;

    // Jinja2 3.1.6: 1000|filesizeformat == "1.0 kB", 1024|filesizeformat(true) ==
    // "1.0 KiB", 123456789 -> "123.5 MB", 1 -> "1 Byte", 0 -> "0 Bytes", 1e30 -> "1000000.0 YB"
    #[test]
    fn formats_like_jinja2() {
        assert_eq!(format_size(1000.0, false), "1.0 kB");
        assert_eq!(format_size(1024.0, true), "1.0 KiB");
        assert_eq!(format_size(123456789.0, false), "123.5 MB");
        assert_eq!(format_size(1.0, false), "1 Byte");
        assert_eq!(format_size(0.0, false), "0 Bytes");
        assert_eq!(format_size(1e30, false), "1000000.0 YB");
    }
}
