//! Python's `repr()` conversions in string formatting: `'%r' % x` and `'%a' % x` (used
//! by [`super::printf`]) and `'{0!r}'.format(x)`. MiniJinja's `str.format` knows `{}`
//! but not the conversions, so each converted field is pointed at a new argument that
//! holds the `repr()` (or `ascii()`) text.

use minijinja::value::Value;
use minijinja::Error;

use super::pyerror::raise;

/// Python's `repr(value)`, or `ascii(value)` (non-ASCII escaped) when `ascii` is set.
pub(crate) fn repr_of(value: &Value, ascii: bool) -> Value {
    let out = super::pyrepr::repr(value);
    if !ascii {
        return Value::from(out);
    }
    let mut escaped = String::with_capacity(out.len());
    for ch in out.chars() {
        match ch as u32 {
            0..=0x7f => escaped.push(ch),
            code @ 0x80..=0xff => escaped.push_str(&format!("\\x{code:02x}")),
            code @ 0x100..=0xffff => escaped.push_str(&format!("\\u{code:04x}")),
            code => escaped.push_str(&format!("\\U{code:08x}")),
        }
    }
    Value::from(escaped)
}

/// `str.format` with `!r` / `!a` / `!s` conversions and with string fields padded by
/// characters (MiniJinja pads by bytes). Every field reads a new argument holding its
/// converted value (and, for text with a plain width spec, its finished text).
/// Fields that look further into an argument (`{0.name!r}`) are left to MiniJinja.
pub(crate) fn str_format(
    format: &str,
    args: &[Value],
) -> Option<Result<(String, Vec<Value>), Error>> {
    let wide_text = args
        .iter()
        .any(|a| a.as_str().is_some_and(|s| !s.is_ascii()));
    let needed = format.contains('!') || (format.contains(':') && wide_text);
    if !needed {
        return None;
    }
    let (args, kwargs) = match args.split_last() {
        Some((last, rest)) if last.is_kwargs() => (rest, Some(last)),
        _ => (args, None),
    };
    let mut fields: Vec<Value> = Vec::new();
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    let mut automatic = 0;
    while let Some(open) = rest.find(['{', '}']) {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..2]);
            rest = &tail[2..];
            continue;
        }
        let close = tail.find('}')?;
        let field = &tail[1..close];
        rest = &tail[close + 1..];
        let (name, spec) = field.split_once(':').map_or((field, ""), |(n, s)| (n, s));
        let (name, conversion) = name
            .split_once('!')
            .map_or((name, None), |(n, c)| (n, Some(c)));
        let value = match field_value(name, &mut automatic, args, kwargs)? {
            Ok(value) => value,
            Err(err) => return Some(Err(err)),
        };
        let converted = match conversion {
            Some("r") => repr_of(&value, false),
            Some("a") => repr_of(&value, true),
            Some("s") => Value::from(super::pyrepr::to_str(&value)),
            None => value,
            Some(_) => return None,
        };
        let finished = converted.as_str().and_then(|text| pad_text(text, spec));
        out.push_str(&format!("{{{}", fields.len()));
        if let Some(text) = finished {
            fields.push(Value::from(text));
        } else {
            fields.push(converted);
            if !spec.is_empty() {
                out.push(':');
                out.push_str(spec);
            }
        }
        out.push('}');
    }
    out.push_str(rest);
    Some(Ok((out, fields)))
}

/// The argument a field names: by automatic numbering, position or keyword. `None` for
/// field names that look into an argument.
fn field_value(
    name: &str,
    automatic: &mut usize,
    args: &[Value],
    kwargs: Option<&Value>,
) -> Option<Result<Value, Error>> {
    let index = if name.is_empty() {
        *automatic += 1;
        Some(*automatic - 1)
    } else {
        name.parse::<usize>().ok()
    };
    if let Some(index) = index {
        // Jinja2's sandbox formats through string.Formatter, which indexes the tuple.
        return Some(
            args.get(index)
                .cloned()
                .ok_or_else(|| raise("IndexError", "tuple index out of range")),
        );
    }
    if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let found = kwargs.and_then(|kwargs| kwargs.get_item(&Value::from(name)).ok());
    Some(
        found
            .filter(|v| !v.is_undefined())
            .ok_or_else(|| raise("KeyError", super::pyerror::repr(name))),
    )
}

/// Text formatted with a plain string spec (`[[fill]align][width][.precision][s]`),
/// counting characters; `None` for anything else.
fn pad_text(text: &str, spec: &str) -> Option<String> {
    let chars: Vec<char> = spec.chars().collect();
    let is_align = |c: &char| "<>^".contains(*c);
    let (fill, align, mut i) = match chars.as_slice() {
        [fill, align, ..] if is_align(align) => (*fill, *align, 2),
        [align, ..] if is_align(align) => (' ', *align, 1),
        _ => (' ', '<', 0),
    };
    let digits = |i: &mut usize| -> Option<usize> {
        let run: String = chars[*i..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        *i += run.len();
        run.parse().ok()
    };
    if chars.get(i) == Some(&'0') {
        return None;
    }
    let width = digits(&mut i).unwrap_or(0);
    let precision = if chars.get(i) == Some(&'.') {
        i += 1;
        Some(digits(&mut i)?)
    } else {
        None
    };
    if chars.get(i) == Some(&'s') {
        i += 1;
    }
    if i != chars.len() {
        return None;
    }
    let text: String = match precision {
        Some(keep) => text.chars().take(keep).collect(),
        None => text.to_string(),
    };
    let pad = width.saturating_sub(text.chars().count());
    let (left, right) = match align {
        '>' => (pad, 0),
        '^' => (pad / 2, pad - pad / 2),
        _ => (0, pad),
    };
    let fill = |n: usize| std::iter::repeat_n(fill, n).collect::<String>();
    Some(format!("{}{text}{}", fill(left), fill(right)))
}
