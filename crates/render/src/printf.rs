//! Python's printf-style formatting (`'%-5s|%r|%(key)d' % args`), driven here and
//! finished by MiniJinja's `format` filter.
//!
//! Python walks the format once, taking an argument (or a mapping key) per field and
//! checking its type as it goes; only then does it complain about arguments left over.
//! This layer does that walk, so errors come in Python's order and words. String
//! fields (`%s`, `%r`, `%a`) are formatted here completely (Python pads and truncates
//! by characters, MiniJinja by bytes, and knows no `%r`); numeric fields are handed to
//! MiniJinja's printf with their argument.

use std::borrow::Cow;

use minijinja::value::{Value, ValueKind};
use minijinja::Error;

use super::conversions::repr_of;
use super::none::is_python_none;
use super::pyerror::raise;
use super::pyrepr::to_str;
use super::pytype::type_name;

/// One `%` field.
#[derive(Debug, Default)]
struct Field {
    key: Option<String>,
    flags: String,
    width: Option<Count>,
    precision: Option<Count>,
    conversion: char,
}

/// A width or precision: written out, or `*` (taken from the arguments).
#[derive(Debug, Clone, Copy)]
enum Count {
    Fixed(usize),
    Star,
}

enum Piece {
    Text(String),
    Field(Field),
}

/// The format for MiniJinja's `format` filter and its arguments: `format % args` with
/// every field resolved.
pub(crate) struct Prepared {
    /// The format, string fields reduced to plain `%s`.
    pub format: String,
    /// One argument per field, in order.
    pub args: Vec<Value>,
}

/// Resolves `format % args` as Python does, up to the numeric formatting.
/// `budget` bounds widths and precisions (the bytes the render may still produce).
pub(crate) fn prepare(format: &str, args: &Value, budget: usize) -> Result<Prepared, Error> {
    let pieces = parse(format)?;
    let mapping = (args.kind() == ValueKind::Map).then_some(args);
    let positional: Vec<Value> = if args.is_tuple() {
        args.try_iter()?.collect()
    } else {
        vec![args.clone()]
    };
    let mut next = 0;
    let mut take = || -> Result<Value, Error> {
        let value = positional
            .get(next)
            .cloned()
            .ok_or_else(|| raise("TypeError", "not enough arguments for format string"))?;
        next += 1;
        Ok(value)
    };
    let mut out = Prepared {
        format: String::with_capacity(format.len()),
        args: Vec::new(),
    };
    let mut used_key = false;
    for piece in pieces {
        let field = match piece {
            Piece::Text(text) => {
                out.format.push_str(&text.replace('%', "%%"));
                continue;
            }
            Piece::Field(field) => field,
        };
        let width = count(field.width, &mut take)?;
        let precision = count(field.precision, &mut take)?;
        if let Some(n) = width.max(precision).filter(|n| *n > budget) {
            // Refused as the memory limit it would exceed, before any padding is built.
            super::scope::reserve(None, n)?;
        }
        let value = match &field.key {
            Some(key) => {
                used_key = true;
                if args.kind() == ValueKind::Seq && !args.is_tuple() {
                    return Err(raise(
                        "TypeError",
                        "list indices must be integers or slices, not str",
                    ));
                }
                if args.is_undefined() {
                    // Jinja2's Undefined is a mapping to `%`, whose `__getitem__` raises.
                    return Err(super::markup::undefined_error(args));
                }
                let map = mapping.ok_or_else(|| raise("TypeError", "format requires a mapping"))?;
                map.get_item(&Value::from(key.as_str()))
                    .ok()
                    .filter(|v| !v.is_undefined())
                    .ok_or_else(|| raise("KeyError", super::pyerror::repr(key)))?
            }
            None => take()?,
        };
        emit(&mut out, &field, width, precision, value)?;
    }
    // Python accepts leftovers only when the argument is a mapping (a list counts, and
    // so does Jinja2's Undefined, which defines `__getitem__`).
    let mapping_like = matches!(
        args.kind(),
        ValueKind::Map | ValueKind::Seq | ValueKind::Undefined
    ) && !args.is_tuple();
    if next < positional.len() && !used_key && (args.is_tuple() || !mapping_like) {
        return Err(raise(
            "TypeError",
            "not all arguments converted during string formatting",
        ));
    }
    Ok(out)
}

/// A `*` count takes the next argument, which must be an integer.
fn count(
    count: Option<Count>,
    take: &mut impl FnMut() -> Result<Value, Error>,
) -> Result<Option<usize>, Error> {
    match count {
        Some(Count::Fixed(n)) => Ok(Some(n)),
        Some(Count::Star) => {
            let value = take()?;
            match value.as_i64() {
                Some(n) if value.is_integer() => Ok(Some(n.max(0) as usize)),
                _ => Err(raise("TypeError", "* wants int")),
            }
        }
        None => Ok(None),
    }
}

/// Adds one resolved field to the output.
fn emit(
    out: &mut Prepared,
    field: &Field,
    width: Option<usize>,
    precision: Option<usize>,
    value: Value,
) -> Result<(), Error> {
    let is_number = matches!(value.kind(), ValueKind::Number | ValueKind::Bool);
    let integral = matches!(field.conversion, 'd' | 'i' | 'u');
    let number = |value: Value| match value.kind() {
        ValueKind::Bool => Value::from(i64::from(value.is_true())),
        // `%d` of a float truncates it, as int() does.
        ValueKind::Number if integral && !value.is_integer() => f64::try_from(value.clone())
            .ok()
            .filter(|f| f.is_finite() && f.abs() < 9.2e18)
            .map_or(value, |f| Value::from(f.trunc() as i64)),
        _ => value,
    };
    let python_type = || type_name(&value);
    match field.conversion {
        's' | 'r' | 'a' => {
            let text: Cow<str> = match (field.conversion, value.as_str()) {
                ('s', Some(text)) if value.kind() == ValueKind::String => Cow::Borrowed(text),
                ('s', _) => Cow::Owned(to_str(&value)),
                (other, _) => Cow::Owned(to_str(&repr_of(&value, other == 'a'))),
            };
            let text: Cow<str> = match precision {
                Some(keep) => Cow::Owned(text.chars().take(keep).collect()),
                None => text,
            };
            let pad = width.unwrap_or(0).saturating_sub(text.chars().count());
            // The field's text becomes an argument of its own (a field naming one value
            // many times holds it many times), charged before it is made: padded, it is
            // built and then copied into the value.
            let made = text.len().saturating_add(pad);
            super::scope::reserve(
                None,
                if pad == 0 {
                    made
                } else {
                    made.saturating_mul(2)
                },
            )?;
            let arg = match pad {
                0 => Value::from(&*text),
                _ if field.flags.contains('-') => Value::from(format!("{text}{}", " ".repeat(pad))),
                _ => Value::from(format!("{}{text}", " ".repeat(pad))),
            };
            out.format.push_str("%s");
            out.args.push(arg);
            return Ok(());
        }
        'd' | 'i' | 'u' if !is_number => {
            return Err(raise(
                "TypeError",
                format!(
                    "%{} format: a real number is required, not {}",
                    field.conversion,
                    python_type()
                ),
            ))
        }
        'o' | 'x' | 'X'
            if !(is_number && value.is_integer() || value.kind() == ValueKind::Bool) =>
        {
            return Err(raise(
                "TypeError",
                format!(
                    "%{} format: an integer is required, not {}",
                    field.conversion,
                    python_type()
                ),
            ))
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' if !is_number => {
            return Err(raise(
                "TypeError",
                format!("must be real number, not {}", python_type()),
            ))
        }
        _ if is_python_none(&value) => {
            return Err(raise(
                "TypeError",
                format!(
                    "%{} format: a number is required, not NoneType",
                    field.conversion
                ),
            ))
        }
        _ => {}
    }
    let conversion = if field.conversion == 'u' {
        'd'
    } else {
        field.conversion
    };
    out.format.push('%');
    out.format.push_str(&field.flags);
    if let Some(width) = width {
        out.format.push_str(&width.to_string());
    }
    if let Some(precision) = precision {
        out.format.push_str(&format!(".{precision}"));
    }
    out.format.push(conversion);
    out.args.push(number(value));
    Ok(())
}

/// The pieces of a format: literal text (with `%%` already turned into `%`) and fields.
fn parse(format: &str) -> Result<Vec<Piece>, Error> {
    let chars: Vec<char> = format.chars().collect();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '%' {
            text.push(chars[i]);
            i += 1;
            continue;
        }
        i += 1;
        if chars.get(i) == Some(&'%') {
            text.push('%');
            i += 1;
            continue;
        }
        let mut field = Field::default();
        if chars.get(i) == Some(&'(') {
            let close = chars[i..]
                .iter()
                .position(|&c| c == ')')
                .ok_or_else(|| raise("ValueError", "incomplete format key"))?;
            field.key = Some(chars[i + 1..i + close].iter().collect());
            i += close + 1;
        }
        while let Some(&flag) = chars.get(i).filter(|c| "#0- +".contains(**c)) {
            field.flags.push(flag);
            i += 1;
        }
        field.width = parse_count(&chars, &mut i);
        if chars.get(i) == Some(&'.') {
            i += 1;
            field.precision = Some(parse_count(&chars, &mut i).unwrap_or(Count::Fixed(0)));
        }
        while chars.get(i).is_some_and(|c| "hlL".contains(*c)) {
            i += 1;
        }
        let Some(&conversion) = chars.get(i) else {
            return Err(raise("ValueError", "incomplete format"));
        };
        if !"diouxXeEfFgGcrsa".contains(conversion) {
            return Err(raise(
                "ValueError",
                format!(
                    "unsupported format character {} (0x{:x}) at index {i}",
                    super::pyerror::repr(&conversion.to_string()),
                    conversion as u32
                ),
            ));
        }
        field.conversion = conversion;
        i += 1;
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        pieces.push(Piece::Field(field));
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

fn parse_count(chars: &[char], i: &mut usize) -> Option<Count> {
    if chars.get(*i) == Some(&'*') {
        *i += 1;
        return Some(Count::Star);
    }
    let digits: String = chars[*i..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    *i += digits.len();
    digits.parse().ok().map(Count::Fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    // CPython 3.11: '%5s|%-5r' % ('é', [2]) == '    é|[2]  '
    #[test]
    fn refuses_widths_beyond_the_budget() {
        assert!(prepare("%999999999s", &Value::from("x"), 1000).is_err());
        assert!(prepare("%.999999999f", &Value::from(1.5), 1000).is_err());
    }

    #[test]
    fn pads_strings_by_characters() {
        let args = Value::from(minijinja::value::Tuple::from(vec![
            Value::from("é"),
            Value::from(vec![Value::from(2)]),
        ]));
        let prepared = prepare("%5s|%-5r", &args, usize::MAX).unwrap();
        assert_eq!(prepared.format, "%s|%s");
        assert_eq!(prepared.args[0].as_str(), Some("    é"));
        assert_eq!(prepared.args[1].as_str(), Some("[2]  "));
    }
}
