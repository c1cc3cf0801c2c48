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
            // cast v1.10.0: `strconv.ParseInt(s, 0, 0)`.
            crate::strconv::parse_int(t, 0, 64).unwrap_or(0)
        }
        _ => 0,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `(s, cast.ToInt64(s))` as spf13/cast v1.10.0 (Loki 3.7.8's) answered.
    const TO_INT64_CASES: &[(&str, i64)] = &[
        ("42", 42),
        ("1_000", 1000),
        ("0_17", 15),
        ("0x_1f", 31),
        ("+-5", 0),
        ("-+5", 0),
        ("0x1F", 31),
        ("017", 15),
        ("10_", 0),
        ("1.5", 1),
        ("-0.5", 0),
        (".5", 0),
        ("0b101", 5),
        ("9223372036854775808", 0),
        ("-9223372036854775808", -9223372036854775808),
    ];

    #[test]
    fn strings_convert_as_spf13_cast() {
        for (s, want) in TO_INT64_CASES {
            assert_eq!(to_int64(&Value::Str((*s).into())), *want, "{s:?}");
        }
    }
}
