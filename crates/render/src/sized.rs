//! Template-controlled sizes, checked before anything is allocated.
//!
//! A template picks widths, counts and repetitions (`'x'|center(10**12)`,
//! `'{:>1000000000}'.format(x)`, `[1]|batch(10**12)`, `s.replace('', s)`): each is
//! charged to the render's byte budget before the work starts, since a single
//! allocation of that size would abort the process. The builtin filters keep
//! MiniJinja's implementation; this layer only checks the size first. String methods
//! that allocate by a template-chosen amount are implemented here with Python's
//! semantics (`replace`, `join`, `center`, `ljust`, `rjust`), and `str.format` is
//! checked before MiniJinja's formatter runs.

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Error, ErrorKind, State};

use super::filters::{checked_count, ITEM_BYTES};
use super::pytype::type_name;
use super::scope;

/// Checks a filter's input and arguments before the builtin runs.
type SizeCheck = fn(&State, &Value, &[Value]) -> Result<(), Error>;

/// Registers the size-checked versions of MiniJinja's builtin filters.
pub(crate) fn register(env: &mut minijinja::Environment<'static>) {
    let wrapped: [(&'static str, Value, SizeCheck); 13] = [
        (
            "upper",
            Value::from_function(minijinja::filters::upper),
            case_mapped,
        ),
        (
            "lower",
            Value::from_function(minijinja::filters::lower),
            case_mapped,
        ),
        (
            "batch",
            Value::from_function(minijinja::filters::batch),
            count_arg_items,
        ),
        (
            "slice",
            Value::from_function(minijinja::filters::slice),
            count_arg_items,
        ),
        (
            "list",
            Value::from_function(minijinja::filters::list),
            items_only,
        ),
        (
            "sort",
            Value::from_function(minijinja::filters::sort),
            sorted_items,
        ),
        (
            "unique",
            Value::from_function(minijinja::filters::unique),
            compared_items,
        ),
        (
            "dictsort",
            Value::from_function(minijinja::filters::dictsort),
            compared_items,
        ),
        (
            "groupby",
            Value::from_function(minijinja::filters::groupby),
            sorted_items,
        ),
        (
            "min",
            Value::from_function(minijinja::filters::min),
            compared_items,
        ),
        (
            "max",
            Value::from_function(minijinja::filters::max),
            compared_items,
        ),
        (
            "pprint",
            Value::from_function(minijinja::filters::pprint),
            items_only,
        ),
        (
            "replace",
            Value::from_function(minijinja::filters::replace),
            replace_filter,
        ),
    ];
    for (name, builtin, check) in wrapped {
        // pprint prints its value: it gets it as it is.
        let walks = name != "pprint";
        env.add_filter(
            name,
            move |state: &mut State, value: Value, args: Rest<Value>, kwargs: Kwargs| {
                scope::tick(Some(state))?;
                check(state, &value, &args)?;
                let value = if walks {
                    scope::stoppable(value)
                } else {
                    value
                };
                builtin.call(state, &super::generators::with_subject(value, args, kwargs))
            },
        );
    }
    let format = Value::from_function(minijinja::filters::format);
    env.add_filter(
        "format",
        move |state: &mut State, value: Value, args: Rest<Value>| {
            scope::tick(Some(state))?;
            let mut call = vec![value];
            call.extend(args.0);
            check_format(state, &call)?;
            format.call(state, &call)
        },
    );
}

/// The items of the filtered value are collected or visited.
fn items_only(state: &State, value: &Value, _args: &[Value]) -> Result<(), Error> {
    scope::reserve_items(Some(state), value.len().unwrap_or(0), ITEM_BYTES)
}

/// `unique`, `min`, `max`, `dictsort`: the items, and comparing or hashing each once
/// (see [`charge_comparisons`]).
fn compared_items(state: &State, value: &Value, args: &[Value]) -> Result<(), Error> {
    items_only(state, value, args)?;
    charge_comparisons(state, value, 1)
}

/// `sort`, `groupby`: the items, and comparing each about log₂ n times.
fn sorted_items(state: &State, value: &Value, args: &[Value]) -> Result<(), Error> {
    items_only(state, value, args)?;
    let count = value.len().unwrap_or(0);
    charge_comparisons(state, value, u64::from(usize::BITS - count.leading_zeros()))
}

/// The work of comparing the items of `value` (a string's bytes each, `rounds` times),
/// charged as steps before MiniJinja's filter starts, one per 64 bytes as MiniJinja
/// charges for data it makes. A comparison inside MiniJinja has no checkpoint: two
/// long strings take as long as they are, and a stopped render would go on comparing
/// millions of them; so many are refused up front instead. The items are counted in
/// runs, so a list too costly to compare is refused after its first few thousand.
fn charge_comparisons(state: &State, value: &Value, rounds: u64) -> Result<(), Error> {
    const RUN: usize = 4096;
    let mut bytes = 0u64;
    for (index, item) in value.try_iter()?.enumerate() {
        bytes = bytes.saturating_add(item.as_str().map_or(1, str::len) as u64);
        if index % RUN == RUN - 1 {
            state.consume_fuel(bytes.saturating_mul(rounds) / 64)?;
            scope::tick(Some(state))?;
            bytes = 0;
        }
    }
    state.consume_fuel(bytes.saturating_mul(rounds) / 64)
}

/// `batch(n)` / `slice(n)`: up to `n` filler slots or `n` new lists, plus the items.
fn count_arg_items(state: &State, value: &Value, args: &[Value]) -> Result<(), Error> {
    items_only(state, value, args)?;
    if let Some(count) = args.first() {
        checked_count(state, count, ITEM_BYTES)?;
    }
    Ok(())
}

/// `upper` / `lower` (and the other case mappings): the result, and its copy into a
/// template value.
fn case_mapped(state: &State, value: &Value, _args: &[Value]) -> Result<(), Error> {
    let text = value.as_str().unwrap_or_default();
    scope::reserve(Some(state), case_mapped_len(text).saturating_mul(2))
}

/// The most bytes a case mapping of `text` can take: a character's upper, lower or
/// title case is at most three times its UTF-8 length (`ΐ`, two bytes, upper-cases
/// to three characters of two), and ASCII maps to ASCII.
pub(crate) fn case_mapped_len(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.len().saturating_mul(3)
    }
}

/// The `replace` filter: `(old, new, count)`.
fn replace_filter(state: &State, value: &Value, args: &[Value]) -> Result<(), Error> {
    let text = value.as_str().unwrap_or_default();
    let old = args.first().and_then(Value::as_str).unwrap_or_default();
    let new = args.get(1).and_then(Value::as_str).unwrap_or_default();
    let count = args.get(2).and_then(Value::as_i64);
    scope::reserve(Some(state), replaced_len(text, old, new, count))
}

/// The length of `text` with `old` replaced by `new` at most `count` times.
fn replaced_len(text: &str, old: &str, new: &str, count: Option<i64>) -> usize {
    let matches = if old.is_empty() {
        text.chars().count() + 1
    } else {
        text.matches(old).count()
    };
    let matches = match count {
        Some(n) if n >= 0 => matches.min(usize::try_from(n).unwrap_or(usize::MAX)),
        _ => matches,
    };
    text.len().saturating_add(matches.saturating_mul(new.len()))
}

/// String methods whose result size the template chooses. `None` for other methods.
pub(crate) fn string_method(
    state: &State,
    text: &str,
    method: &str,
    args: &[Value],
) -> Option<Result<Value, Error>> {
    Some(match method {
        "replace" => replace(state, text, args),
        "join" => join(state, text, args),
        "center" | "ljust" | "rjust" => pad(state, text, method, args),
        // Checked here; the method itself (pycompat's or chatplate's) does the work.
        "upper" | "lower" | "title" | "capitalize" | "swapcase" | "casefold" => {
            return case_mapped(state, &Value::from(text), args).err().map(Err);
        }
        "format" => {
            let mut call = vec![Value::from(text)];
            call.extend(args.iter().cloned());
            // Checked here; MiniJinja's `str.format` (through pycompat) does the work.
            return check_str_format(state, &call).err().map(Err);
        }
        _ => return None,
    })
}

/// Python's `str.replace(old, new, count=-1)`.
fn replace(state: &State, text: &str, args: &[Value]) -> Result<Value, Error> {
    let string = |index: usize| match args.get(index) {
        Some(v) if v.kind() == ValueKind::String => Ok(v.as_str().unwrap_or_default()),
        Some(v) => Err(type_error(&format!(
            "replace() argument {} must be str, not {}",
            index + 1,
            type_name(v)
        ))),
        None => Err(type_error(&format!(
            "replace() takes at least 2 arguments ({} given)",
            args.len()
        ))),
    };
    let (old, new) = (string(0)?, string(1)?);
    let count = args.get(2).and_then(Value::as_i64);
    scope::reserve(Some(state), replaced_len(text, old, new, count))?;
    Ok(Value::from(match count {
        Some(n) if n >= 0 => text.replacen(old, new, usize::try_from(n).unwrap_or(usize::MAX)),
        _ => text.replace(old, new),
    }))
}

/// Python's `str.join(iterable)`: every item must be a string.
fn join(state: &State, separator: &str, args: &[Value]) -> Result<Value, Error> {
    let items = super::filters::iterate(state, args.first().unwrap_or(&Value::UNDEFINED))?;
    let mut joined = String::new();
    for (index, item) in items.iter().enumerate() {
        let Some(text) = item.as_str().filter(|_| item.kind() == ValueKind::String) else {
            return Err(type_error(&format!(
                "sequence item {index}: expected str instance, {} found",
                type_name(item)
            )));
        };
        scope::reserve(Some(state), separator.len() + text.len())?;
        if index > 0 {
            joined.push_str(separator);
        }
        joined.push_str(text);
    }
    Ok(Value::from(joined))
}

/// Python's `str.center` / `ljust` / `rjust(width, fillchar=' ')`.
fn pad(state: &State, text: &str, method: &str, args: &[Value]) -> Result<Value, Error> {
    let Some(width) = args.first() else {
        return Err(type_error(&format!(
            "{method}() takes at least 1 argument (0 given)"
        )));
    };
    if !width.is_integer() && width.kind() != ValueKind::Bool {
        return Err(type_error(&format!(
            "'{}' object cannot be interpreted as an integer",
            type_name(width)
        )));
    }
    let fill = match args.get(1) {
        None => ' ',
        Some(v) => {
            let mut chars = v.as_str().unwrap_or_default().chars();
            match (v.kind(), chars.next(), chars.next()) {
                (ValueKind::String, Some(c), None) => c,
                _ => {
                    return Err(type_error(
                        "The fill character must be exactly one character long",
                    ))
                }
            }
        }
    };
    let width = checked_count(state, width, fill.len_utf8())?;
    let margin = width.saturating_sub(text.chars().count());
    let (left, right) = match method {
        "ljust" => (0, margin),
        "rjust" => (margin, 0),
        // Python puts the odd space on the right unless the width is odd too.
        _ => {
            let left = margin / 2 + (margin & width & 1);
            (left, margin - left)
        }
    };
    let fill = |n: usize| std::iter::repeat_n(fill, n).collect::<String>();
    Ok(Value::from(format!("{}{text}{}", fill(left), fill(right))))
}

/// Checks printf-style formatting (`'%5s' % x`, the `format` filter) against the byte
/// budget: `call` is the format string followed by the arguments. Each conversion may
/// print any argument (`'%(a)s%(a)s' % {'a': s}` prints one value twice), so the
/// arguments count as often as there are conversions, or once each if that is more.
pub(crate) fn check_format(state: &State, call: &[Value]) -> Result<(), Error> {
    let format = call.first().and_then(Value::as_str).unwrap_or_default();
    let args = call.get(1..).unwrap_or_default();
    let star_widths = format.contains('*');
    let widths = spec_numbers(format, '%', |c| c.is_ascii_alphabetic() || c == '%');
    let conversions = format.matches('%').count();
    let (mut each, mut largest) = (0usize, 0usize);
    for arg in args {
        let printed = printed_len(arg);
        each = each.saturating_add(printed);
        largest = largest.max(printed);
        if super::pytype::type_name(arg) == "dict" {
            // `%(name)s` prints one of its values.
            for key in arg.try_iter().into_iter().flatten() {
                let item = arg.get_item(&key).unwrap_or_default();
                largest = largest.max(printed_len(&item));
            }
        }
        if star_widths {
            each = each.saturating_add(arg.as_i64().map_or(0, |n| n.unsigned_abs() as usize));
        }
    }
    let fields = each.max(conversions.saturating_mul(largest));
    let bound = format.len().saturating_add(widths).saturating_add(fields);
    scope::reserve(Some(state), bound)
}

/// Checks `str.format`: the field widths, and each field as large as the largest
/// argument (a field can name the same argument many times).
fn check_str_format(state: &State, call: &[Value]) -> Result<(), Error> {
    let format = call.first().and_then(Value::as_str).unwrap_or_default();
    let args = call.get(1..).unwrap_or_default();
    let fields = format.matches('{').count();
    let largest = args.iter().map(printed_len).max().unwrap_or(0);
    let mut bound = format
        .len()
        .saturating_add(spec_numbers(format, ':', |c| c == '}'))
        .saturating_add(fields.saturating_mul(largest));
    // `{:{}}` takes a width from the arguments.
    if format.contains(":{") {
        for arg in args {
            bound = bound.saturating_add(arg.as_i64().map_or(0, |n| n.unsigned_abs() as usize));
        }
    }
    scope::reserve(Some(state), bound)
}

/// The sum of the numbers in every format spec: from `start` up to the first
/// character `end` accepts.
fn spec_numbers(format: &str, start: char, end: impl Fn(char) -> bool) -> usize {
    let mut total = 0usize;
    let mut in_spec = false;
    let mut number = 0usize;
    for ch in format.chars() {
        if !in_spec {
            in_spec = ch == start;
            continue;
        }
        if let Some(digit) = ch.to_digit(10) {
            number = number.saturating_mul(10).saturating_add(digit as usize);
        } else {
            total = total.saturating_add(number);
            number = 0;
            if end(ch) {
                in_spec = false;
            }
        }
    }
    total.saturating_add(number)
}

/// At most how long a value is as text: a string exactly, a list or dict as long as
/// its repr can be (every item counted), anything else as long as a number's text.
fn printed_len(value: &Value) -> usize {
    match value.kind() {
        ValueKind::String => value.as_str().map_or(0, str::len),
        _ => repr_len(value, 0),
    }
}

/// At most how long `repr(value)` is; a container nested deeper than a repr may go is
/// as long as can be (printing it fails anyway).
fn repr_len(value: &Value, depth: usize) -> usize {
    const DEEPEST: usize = 64;
    match value.kind() {
        ValueKind::String => super::pyrepr::str_repr_len(value.as_str().unwrap_or_default()),
        ValueKind::Seq | ValueKind::Map if depth >= DEEPEST => usize::MAX / 4,
        ValueKind::Seq | ValueKind::Iterable if !super::generators::is_generator(value) => {
            let items = value.try_iter().into_iter().flatten();
            items.fold(2usize, |len, item| {
                len.saturating_add(repr_len(&item, depth + 1))
                    .saturating_add(2)
            })
        }
        ValueKind::Map => {
            let keys = value.try_iter().into_iter().flatten();
            keys.fold(2usize, |len, key| {
                let item = value.get_item(&key).unwrap_or_default();
                len.saturating_add(repr_len(&key, depth + 1))
                    .saturating_add(repr_len(&item, depth + 1))
                    .saturating_add(4)
            })
        }
        _ => 48,
    }
}

fn type_error(message: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("TypeError: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_numbers_add_up_widths_and_precisions() {
        assert_eq!(
            spec_numbers("%5s-%.3f %%", '%', |c| c.is_ascii_alphabetic() || c == '%'),
            8
        );
        assert_eq!(spec_numbers("{:>100}{0:10.2f}", ':', |c| c == '}'), 112);
        assert_eq!(replaced_len("abc", "", "xy", None), 3 + 4 * 2);
    }
}
