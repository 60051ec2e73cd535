//! Python's `int(text)` and `float(text)` on strings: the `int`/`float` content parsers
//! and the casting of tool-call arguments use them.
//!
//! Digits are ASCII only: Python also accepts other scripts' decimal digits (`int("٣")`),
//! which model output practically never contains.

use super::pyvalue::shown_repr;

/// The result of `int(text)`, as its canonical decimal text (any size).
pub(crate) fn parse_int(text: &str) -> Result<String, String> {
    let fail = || {
        format!(
            "invalid literal for int() with base 10: {}",
            shown_repr(text)
        )
    };
    let (negative, body) = split_sign(text.trim());
    let digits = plain_digits(body).ok_or_else(fail)?;
    let trimmed = digits.trim_start_matches('0');
    Ok(match (trimmed.is_empty(), negative) {
        (true, _) => "0".to_string(),
        (false, true) => format!("-{trimmed}"),
        (false, false) => trimmed.to_string(),
    })
}

/// The result of `float(text)`.
pub(crate) fn parse_float(text: &str) -> Result<f64, String> {
    let fail = || format!("could not convert string to float: {}", shown_repr(text));
    let (negative, body) = split_sign(text.trim());
    let magnitude = match body.to_ascii_lowercase().as_str() {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => decimal(body).ok_or_else(fail)?,
    };
    Ok(if negative { -magnitude } else { magnitude })
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// ASCII digits with single underscores between them (Python's grouping), without
/// the underscores; `None` when the text is anything else.
fn plain_digits(text: &str) -> Option<String> {
    let valid = !text.is_empty()
        && !text.starts_with('_')
        && !text.ends_with('_')
        && !text.contains("__")
        && text.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    valid.then(|| text.replace('_', ""))
}

/// `digits[.digits][e[+-]digits]`, with at least one mantissa digit.
fn decimal(text: &str) -> Option<f64> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let whole = if whole.is_empty() {
        String::new()
    } else {
        plain_digits(whole)?
    };
    let fraction = match fraction {
        Some("") | None => String::new(),
        Some(f) => plain_digits(f)?,
    };
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let exponent = match exponent {
        None => String::new(),
        Some(e) => {
            let (negative, digits) = split_sign(e);
            format!(
                "e{}{}",
                if negative { "-" } else { "" },
                plain_digits(digits)?
            )
        }
    };
    format!("{whole}.{fraction}0{exponent}").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_follow_python() {
        assert_eq!(parse_int(" +007 ").unwrap(), "7");
        assert_eq!(parse_int("1_000").unwrap(), "1000");
        assert_eq!(parse_int("-0").unwrap(), "0");
        assert_eq!(
            parse_int("3.0").unwrap_err(),
            "invalid literal for int() with base 10: '3.0'"
        );
        assert!(parse_int("1__0").is_err());
    }

    #[test]
    fn floats_follow_python() {
        assert_eq!(parse_float("1e3").unwrap(), 1000.0);
        assert_eq!(parse_float(".5").unwrap(), 0.5);
        assert_eq!(parse_float("5.").unwrap(), 5.0);
        assert!(parse_float("-Infinity").unwrap().is_infinite());
        assert_eq!(
            parse_float("abc").unwrap_err(),
            "could not convert string to float: 'abc'"
        );
        assert!(parse_float(".").is_err());
        assert!(parse_float("1e").is_err());
    }
}
