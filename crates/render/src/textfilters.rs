//! Jinja2 filters MiniJinja lacks or spells differently: `int`, `float` (Python's
//! conversions with a default instead of an error), `center`, `truncate` and
//! `wordcount`.

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Error, State};

use super::pyrepr::to_str_in;

/// Registers the filters on `env`.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    env.add_filter("int", int);
    env.add_filter("float", float);
    env.add_filter("center", center);
    env.add_filter("truncate", truncate);
    env.add_filter("wordcount", |state: &State, value: Value| {
        to_str_in(Some(state), &value).map(|text| wordcount(&text))
    });
}

/// A positional-or-keyword argument, as Python binds them.
fn arg(
    args: &Rest<Value>,
    kwargs: &Kwargs,
    index: usize,
    name: &str,
) -> Result<Option<Value>, Error> {
    let keyword: Option<Value> = kwargs.get(name)?;
    Ok(keyword.or_else(|| args.get(index).cloned()))
}

/// Jinja2's `int(value, default=0, base=10)`: `int(value)`, else `int(float(value))`,
/// else the default.
fn int(value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let default = arg(&args, &kwargs, 0, "default")?.unwrap_or(Value::from(0));
    let base = arg(&args, &kwargs, 1, "base")?
        .and_then(|b| b.as_i64())
        .unwrap_or(10);
    kwargs.assert_all_used()?;
    let converted = match value.kind() {
        ValueKind::Bool => Some(i128::from(value.is_true())),
        ValueKind::Number if value.is_integer() => return Ok(value),
        ValueKind::Number => f64::try_from(value.clone()).ok().and_then(float_to_int),
        ValueKind::String => {
            let text = value.as_str().unwrap_or_default();
            parse_int(text, base as u32).or_else(|| parse_float(text).and_then(float_to_int))
        }
        _ => None,
    };
    Ok(converted.map_or(default, Value::from))
}

fn float_to_int(float: f64) -> Option<i128> {
    (float.is_finite() && float.abs() < 1.7e38).then_some(float.trunc() as i128)
}

/// Python's `int(text, base)`: surrounding whitespace, a sign, underscores between digits
/// and a matching `0x`/`0o`/`0b` prefix are accepted. Values up to 128 bits stay
/// integers (Python's are unbounded).
fn parse_int(text: &str, base: u32) -> Option<i128> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let lower = digits.to_ascii_lowercase();
    // Base 0 reads the base from the prefix, as Python's int(text, 0) does.
    let base = match (base, lower.get(..2)) {
        (0, Some("0x")) => 16,
        (0, Some("0o")) => 8,
        (0, Some("0b")) => 2,
        (0, _) => 10,
        (2..=36, _) => base,
        _ => return None,
    };
    let prefix = match base {
        16 => "0x",
        8 => "0o",
        2 => "0b",
        _ => "",
    };
    let digits = if prefix.is_empty() {
        &lower[..]
    } else {
        lower.strip_prefix(prefix).unwrap_or(&lower)
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let magnitude = i128::from_str_radix(&digits.replace('_', ""), base).ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// Python's `float(text)`.
fn parse_float(text: &str) -> Option<f64> {
    let text = text.trim();
    if text.contains("__") || text.starts_with('_') || text.ends_with('_') {
        return None;
    }
    text.replace('_', "").parse::<f64>().ok()
}

/// Jinja2's `float(value, default=0.0)`.
fn float(value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let default = arg(&args, &kwargs, 0, "default")?.unwrap_or(Value::from(0.0));
    kwargs.assert_all_used()?;
    let converted = match value.kind() {
        ValueKind::Bool => Some(if value.is_true() { 1.0 } else { 0.0 }),
        ValueKind::Number => f64::try_from(value.clone()).ok(),
        ValueKind::String => parse_float(value.as_str().unwrap_or_default()),
        _ => None,
    };
    Ok(converted.map_or(default, Value::from))
}

/// Python's `str.center(width)`, including where it puts the odd space. The width is
/// the template's: it is checked against the byte budget before any padding is made.
fn center(state: &State, value: Value, width: Option<Value>) -> Result<String, Error> {
    let text = to_str_in(Some(state), &value)?;
    let width = match width {
        Some(width) => super::filters::checked_count(state, &width, 1)?,
        None => 80,
    };
    Ok(center_text(&text, width))
}

/// `text.center(width)` for a width known to be affordable.
pub(crate) fn center_text(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len >= width {
        return text.to_string();
    }
    let margin = width - len;
    let left = margin / 2 + (margin & width & 1);
    format!("{}{text}{}", " ".repeat(left), " ".repeat(margin - left))
}

/// Jinja2's `truncate(length=255, killwords=False, end='...', leeway=5)`.
fn truncate(
    state: &State,
    value: Value,
    args: Rest<Value>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let text = to_str_in(Some(state), &value)?;
    let length = arg(&args, &kwargs, 0, "length")?
        .and_then(|v| v.as_usize())
        .unwrap_or(255);
    let killwords = arg(&args, &kwargs, 1, "killwords")?.is_some_and(|v| v.is_true());
    let end = match arg(&args, &kwargs, 2, "end")? {
        Some(end) => to_str_in(Some(state), &end)?,
        None => "...".to_string(),
    };
    let leeway = arg(&args, &kwargs, 3, "leeway")?
        .and_then(|v| v.as_usize())
        .unwrap_or(5);
    kwargs.assert_all_used()?;
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= length.saturating_add(leeway) {
        return Ok(text);
    }
    let keep: String = chars[..length.saturating_sub(end.chars().count())]
        .iter()
        .collect();
    if killwords {
        return Ok(keep + &end);
    }
    let cut = keep
        .rsplit_once(' ')
        .map_or(keep.as_str(), |(head, _)| head);
    Ok(format!("{cut}{end}"))
}

/// Jinja2's `wordcount`: the number of `\w+` runs.
fn wordcount(text: &str) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for ch in text.chars() {
        let word = ch.is_alphanumeric() || ch == '_';
        if word && !in_word {
            count += 1;
        }
        in_word = word;
    }
    count
}
