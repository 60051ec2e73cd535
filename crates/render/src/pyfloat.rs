//! Python's `repr(float)`: the shortest round-tripping digits, in Python's layout.
//!
//! Rust's `{}` for f64 already yields the shortest round-trip digits but lays them out
//! differently (`1` instead of `1.0`, `0.00001` instead of `1e-05`, no exponent for
//! `1e16`). Python switches to exponent notation when the decimal exponent is below -4 or
//! at least 16.

/// Formats a float exactly as Python's `repr()` (and so `str()`, `json.dumps`) does.
pub fn repr_float(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        }
        .into();
    }
    // `{:e}` gives the shortest round-trip digits as d.ddddde±x.
    let sci = format!("{:e}", value.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if value < 0.0 { "-" } else { "" };
    let body = if (-4..16).contains(&exponent) {
        positional(&digits, exponent)
    } else {
        exponential(&digits, exponent)
    };
    format!("{sign}{body}")
}

fn positional(digits: &str, exponent: i32) -> String {
    let point = exponent + 1;
    if point <= 0 {
        return format!("0.{}{}", "0".repeat((-point) as usize), digits);
    }
    let point = point as usize;
    if digits.len() <= point {
        format!("{}{}.0", digits, "0".repeat(point - digits.len()))
    } else {
        format!("{}.{}", &digits[..point], &digits[point..])
    }
}

fn exponential(digits: &str, exponent: i32) -> String {
    let mantissa = if digits.len() == 1 {
        digits.to_string()
    } else {
        format!("{}.{}", &digits[..1], &digits[1..])
    };
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

#[cfg(test)]
mod tests {
    use super::repr_float;

    // Each expectation is what CPython 3.11 prints for repr(x).
    #[test]
    fn matches_python_repr() {
        let cases = [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (-2.25, "-2.25"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1.5e300, "1.5e+300"),
            (-0.0, "-0.0"),
            (100.0, "100.0"),
            (f64::INFINITY, "inf"),
        ];
        for (value, expected) in cases {
            assert_eq!(repr_float(value), expected, "repr({value})");
        }
    }
}
