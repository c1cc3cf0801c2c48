//! Conversions as spf13/cast (sprig's `int`, `float64` and math functions)
//! and Go's `strconv` perform them.

use crate::template::value::Value;

/// spf13/cast `ToInt64`: strings parse with base prefixes, failures are 0.
pub(super) fn to_int64(v: &Value<'_>) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        Value::Float(f) => *f as i64,
        Value::Bool(b) => *b as i64,
        Value::Str(s) => {
            // cast drops a decimal part: `^([-+]?\d*)(\.\d*)?$` keeps group 1.
            let mut t: &str = s;
            if let Some(dot) = t.find('.') {
                let (ip, fp) = (&t[..dot], &t[dot + 1..]);
                let digits = ip.strip_prefix(['-', '+']).unwrap_or(ip);
                if digits.bytes().all(|b| b.is_ascii_digit())
                    && fp.bytes().all(|b| b.is_ascii_digit())
                {
                    t = if digits.is_empty() {
                        if ip.is_empty() { "0" } else { return 0 }
                    } else {
                        ip
                    };
                }
            }
            parse_int_base0(t).unwrap_or(0)
        }
        _ => 0,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`.
fn parse_int_base0(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d.to_string())
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d.to_string())
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower.clone())
    };
    if digits.is_empty() || digits.starts_with('_') || digits.contains("__") {
        return None;
    }
    if radix == 10 && digits.contains('_') {
        return None;
    }
    let digits: String = digits.chars().filter(|c| *c != '_').collect();
    let v = i128::from_str_radix(&digits, radix).ok()?;
    i64::try_from(if neg { -v } else { v }).ok()
}

/// spf13/cast `ToFloat64`.
pub(super) fn to_float64(v: &Value<'_>) -> f64 {
    match v {
        Value::Int(i, _) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => *b as i64 as f64,
        Value::Str(s) => crate::strconv::parse_float(s).unwrap_or(0.0),
        _ => 0.0,
    }
}
