//! Python's `%` operator, reached through [`super::rewrite`]: string formatting when
//! the left operand is a string (MiniJinja's `%` is numeric only), Python's modulo when
//! it is a number.
//!
//! The rewrite sends every `%` whose left operand is not plainly numeric (a number
//! literal, `loop.index`, `|length`, arithmetic on those) here, so `'%s' % x`,
//! `fmt % x` with `fmt` a string variable, and `n % 2` with `n` a number all work. The
//! fields are resolved as Python resolves them ([`super::printf`]) and the numbers are
//! formatted by MiniJinja's own `format` filter.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, State};

use super::printf::prepare;
use super::pyerror::raise;
use super::pytype::type_name;

/// Registers the runtime helper under this template's name for it.
pub(crate) fn register(
    env: &mut minijinja::Environment<'static>,
    helpers: &super::helpers::Helpers,
) {
    env.add_filter(helpers.percent_format(), percent);
}

fn percent(state: &mut State, left: Value, right: Value) -> Result<Value, Error> {
    super::scope::tick(Some(state))?;
    // `Undefined.__mod__` raises; so does `__rmod__`, which Python reaches for any left
    // operand but a string (`str % x` formats, whatever `x` is).
    if left.is_undefined() || (right.is_undefined() && left.kind() != ValueKind::String) {
        let undefined = if left.is_undefined() { &left } else { &right };
        return Err(super::markup::undefined_error(undefined));
    }
    match left.kind() {
        ValueKind::String => format(state, left, right),
        ValueKind::Number | ValueKind::Bool if is_number(&right) => modulo(&left, &right),
        _ => Err(raise(
            "TypeError",
            format!(
                "unsupported operand type(s) for %: '{}' and '{}'",
                type_name(&left),
                type_name(&right)
            ),
        )),
    }
}

fn is_number(value: &Value) -> bool {
    matches!(value.kind(), ValueKind::Number | ValueKind::Bool)
}

/// `format % args`: Python's walk over the fields (see [`super::printf`]), then
/// MiniJinja's printf for the numbers.
fn format(state: &mut State, format: Value, args: Value) -> Result<Value, Error> {
    let prepared = prepare(
        format.as_str().unwrap_or_default(),
        &args,
        super::scope::remaining_bytes(),
    )?;
    let mut call = vec![if format.is_safe() {
        Value::from_safe_string(prepared.format)
    } else {
        Value::from(prepared.format)
    }];
    call.extend(prepared.args);
    super::sized::check_format(state, &call)?;
    state.apply_filter("format", &call)
}

/// Python's `%` on numbers: the remainder takes the divisor's sign.
fn modulo(left: &Value, right: &Value) -> Result<Value, Error> {
    let int = |v: &Value| match v.kind() {
        ValueKind::Bool => Some(i128::from(v.is_true())),
        _ if v.is_integer() => i128::try_from(v.clone()).ok(),
        _ => None,
    };
    if let (Some(a), Some(b)) = (int(left), int(right)) {
        if b == 0 {
            return Err(raise("ZeroDivisionError", "integer modulo by zero"));
        }
        let remainder = a.checked_rem_euclid(b).unwrap_or(0);
        let floored = if remainder != 0 && b < 0 {
            remainder + b
        } else {
            remainder
        };
        return Ok(match i64::try_from(floored) {
            Ok(small) => Value::from(small),
            Err(_) => Value::from(floored),
        });
    }
    let float = |v: &Value| match v.kind() {
        ValueKind::Bool => Ok(if v.is_true() { 1.0 } else { 0.0 }),
        _ => f64::try_from(v.clone()),
    };
    let (a, b) = (float(left)?, float(right)?);
    if b == 0.0 {
        return Err(raise("ZeroDivisionError", "float modulo"));
    }
    let mut remainder = a % b;
    if remainder != 0.0 && (remainder < 0.0) != (b < 0.0) {
        remainder += b;
    } else if remainder == 0.0 {
        remainder = 0.0f64.copysign(b);
    }
    Ok(Value::from(remainder))
}
