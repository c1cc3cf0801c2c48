//! Go's `strconv.ParseInt`: the integer syntax Loki's handlers and template
//! functions read numbers with, and the error texts they answer with.

use super::quote;

/// Why Go's `strconv.ParseInt` refused `s`; `Display` is Go's text
/// (`strconv.ParseInt: parsing "x": invalid syntax`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseIntError {
    /// Not an integer in the base (empty, a stray sign or character, or
    /// misplaced `_` separators).
    #[error("strconv.ParseInt: parsing {}: invalid syntax", quote(.0))]
    Syntax(String),
    /// An integer beyond the bit size (Go also returns the clamped value).
    #[error("strconv.ParseInt: parsing {}: value out of range", quote(.0))]
    Range(String),
    /// A base other than 0 or 2 to 36.
    #[error("strconv.ParseInt: parsing {}: invalid base {}", quote(.0), .1)]
    Base(String, u32),
    /// A bit size above 64.
    #[error("strconv.ParseInt: parsing {}: invalid bit size {}", quote(.0), .1)]
    BitSize(String, u32),
}

/// Go's `strconv.ParseInt(s, base, bit_size)`: an optional `+`/`-`, then
/// digits of `base` (letters either case above 9). Base 0 reads Go's
/// prefixes (`0x`, `0o`, `0b`, a leading `0` for octal) and allows `_`
/// between digits; no other base allows `_`. `bit_size` 0 means 64.
///
/// # Errors
/// [`ParseIntError`] with Go's text.
pub fn parse_int(s: &str, base: u32, bit_size: u32) -> Result<i64, ParseIntError> {
    let (neg, body) = match s.as_bytes().first() {
        None => return Err(ParseIntError::Syntax(String::new())),
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        Some(_) => (false, s),
    };
    let bit_size = if bit_size == 0 { 64 } else { bit_size };
    let un = match parse_uint(body, base, bit_size) {
        Ok(un) => un,
        Err(UintError::Range) => u64::MAX,
        Err(UintError::Syntax) => return Err(ParseIntError::Syntax(s.to_owned())),
        Err(UintError::Base) => return Err(ParseIntError::Base(s.to_owned(), base)),
        Err(UintError::BitSize) => return Err(ParseIntError::BitSize(s.to_owned(), bit_size)),
    };
    let cutoff = 1u64 << (bit_size - 1);
    if (!neg && un >= cutoff) || (neg && un > cutoff) {
        return Err(ParseIntError::Range(s.to_owned()));
    }
    // `un` fits: below 2^63, or exactly 2^63 when negative.
    #[allow(clippy::cast_possible_wrap)]
    let n = un as i64;
    Ok(if neg { n.wrapping_neg() } else { n })
}

/// Why Go's `strconv.Atoi` refused `s`; `Display` is Go's text
/// (`strconv.Atoi: parsing "x": value out of range`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AtoiError {
    /// Not a decimal integer.
    #[error("strconv.Atoi: parsing {}: invalid syntax", quote(.0))]
    Syntax(String),
    /// A decimal integer beyond 64 bits.
    #[error("strconv.Atoi: parsing {}: value out of range", quote(.0))]
    Range(String),
}

/// Go's `strconv.Atoi` on a 64-bit platform: `ParseInt(s, 10, 0)` with the
/// error naming `Atoi` (Go's fast path for short input answers the same).
///
/// # Errors
/// [`AtoiError`] with Go's text.
pub fn atoi(s: &str) -> Result<i64, AtoiError> {
    parse_int(s, 10, 64).map_err(|e| match e {
        ParseIntError::Range(s) => AtoiError::Range(s),
        // Base 10 and 64 bits are valid, so only syntax is left.
        ParseIntError::Syntax(s) | ParseIntError::Base(s, _) | ParseIntError::BitSize(s, _) => {
            AtoiError::Syntax(s)
        }
    })
}

/// How Go's `ParseUint` failed (its texts are [`ParseIntError`]'s).
enum UintError {
    Syntax,
    Range,
    Base,
    BitSize,
}

/// Go's `strconv.ParseUint` (`bit_size` already defaulted): the first
/// offending byte decides between a syntax and a range error, as in Go.
fn parse_uint(s0: &str, base: u32, bit_size: u32) -> Result<u64, UintError> {
    if s0.is_empty() {
        return Err(UintError::Syntax);
    }
    let base0 = base == 0;
    let (base, digits) = match base {
        2..=36 => (base, s0),
        0 => match s0.as_bytes() {
            [b'0', p, _, ..] if p.eq_ignore_ascii_case(&b'b') => (2, &s0[2..]),
            [b'0', p, _, ..] if p.eq_ignore_ascii_case(&b'o') => (8, &s0[2..]),
            [b'0', p, _, ..] if p.eq_ignore_ascii_case(&b'x') => (16, &s0[2..]),
            [b'0', ..] => (8, &s0[1..]),
            _ => (10, s0),
        },
        _ => return Err(UintError::Base),
    };
    if bit_size > 64 {
        return Err(UintError::BitSize);
    }
    let max = if bit_size == 64 {
        u64::MAX
    } else {
        (1u64 << bit_size) - 1
    };
    let mut underscores = false;
    let mut n: u64 = 0;
    for &c in digits.as_bytes() {
        let d = match c {
            b'_' if base0 => {
                underscores = true;
                continue;
            }
            b'0'..=b'9' => u32::from(c - b'0'),
            b'a'..=b'z' | b'A'..=b'Z' => u32::from(c.to_ascii_lowercase() - b'a') + 10,
            _ => return Err(UintError::Syntax),
        };
        if d >= base {
            return Err(UintError::Syntax);
        }
        n = n
            .checked_mul(u64::from(base))
            .and_then(|n| n.checked_add(u64::from(d)))
            .filter(|&n| n <= max)
            .ok_or(UintError::Range)?;
    }
    if underscores && !underscore_ok(s0) {
        return Err(UintError::Syntax);
    }
    Ok(n)
}

/// Go's `underscoreOK` for an unsigned integer literal: a base prefix
/// counts as a digit, and every `_` sits between two digits.
fn underscore_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let (mut i, mut saw, mut hex) = (0, b'^', false);
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1] | 0x20, b'b' | b'o' | b'x') {
        (i, saw, hex) = (2, b'0', b[1] | 0x20 == b'x');
    }
    for &c in &b[i..] {
        if c.is_ascii_digit() || (hex && matches!(c | 0x20, b'a'..=b'f')) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else if saw == b'_' {
            return false;
        } else {
            saw = b'!';
        }
    }
    saw != b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(s, base, bitSize, strconv.ParseInt(s, base, bitSize))` as Go
    /// 1.26.8 answered.
    const CASES: &[(&str, u32, u32, Result<i64, &str>)] = &[
        ("0", 10, 64, Ok(0)),
        ("1", 10, 64, Ok(1)),
        ("-1", 10, 64, Ok(-1)),
        ("+5", 10, 64, Ok(5)),
        ("-0", 10, 64, Ok(0)),
        (
            "",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "": invalid syntax"#),
        ),
        (
            "-",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "-": invalid syntax"#),
        ),
        (
            "+",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "+": invalid syntax"#),
        ),
        (
            "+-5",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "+-5": invalid syntax"#),
        ),
        (
            " 5",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing " 5": invalid syntax"#),
        ),
        (
            "5 ",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "5 ": invalid syntax"#),
        ),
        (
            "1_000",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "1_000": invalid syntax"#),
        ),
        (
            "12345678901234567890",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "12345678901234567890": value out of range"#),
        ),
        ("9223372036854775807", 10, 64, Ok(9223372036854775807)),
        (
            "9223372036854775808",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "9223372036854775808": value out of range"#),
        ),
        ("-9223372036854775808", 10, 64, Ok(-9223372036854775808)),
        (
            "-9223372036854775809",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "-9223372036854775809": value out of range"#),
        ),
        (
            "99999999999999999999x",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "99999999999999999999x": value out of range"#),
        ),
        (
            "1x99999999999999999999",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "1x99999999999999999999": invalid syntax"#),
        ),
        (
            "0x10",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "0x10": invalid syntax"#),
        ),
        ("1724325600", 10, 64, Ok(1724325600)),
        (
            "\u{1}",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "\x01": invalid syntax"#),
        ),
        (
            "\u{661}\u{662}",
            10,
            64,
            Err(r#"strconv.ParseInt: parsing "١٢": invalid syntax"#),
        ),
        ("007", 10, 64, Ok(7)),
        ("0x1F", 0, 64, Ok(31)),
        ("0X1f", 0, 64, Ok(31)),
        ("0b101", 0, 64, Ok(5)),
        ("0o17", 0, 64, Ok(15)),
        ("017", 0, 64, Ok(15)),
        ("0", 0, 64, Ok(0)),
        (
            "0x",
            0,
            64,
            Err(r#"strconv.ParseInt: parsing "0x": invalid syntax"#),
        ),
        (
            "08",
            0,
            64,
            Err(r#"strconv.ParseInt: parsing "08": invalid syntax"#),
        ),
        ("1_000", 0, 64, Ok(1000)),
        ("-1_000", 0, 64, Ok(-1000)),
        (
            "1__0",
            0,
            64,
            Err(r#"strconv.ParseInt: parsing "1__0": invalid syntax"#),
        ),
        (
            "_10",
            0,
            64,
            Err(r#"strconv.ParseInt: parsing "_10": invalid syntax"#),
        ),
        (
            "10_",
            0,
            64,
            Err(r#"strconv.ParseInt: parsing "10_": invalid syntax"#),
        ),
        ("0x_1f", 0, 64, Ok(31)),
        ("0_17", 0, 64, Ok(15)),
        ("-0x8000000000000000", 0, 64, Ok(-9223372036854775808)),
        ("ff", 16, 64, Ok(255)),
        ("FF", 16, 64, Ok(255)),
        ("z", 36, 64, Ok(35)),
        (
            "12",
            2,
            64,
            Err(r#"strconv.ParseInt: parsing "12": invalid syntax"#),
        ),
        ("101", 2, 64, Ok(5)),
        ("127", 10, 8, Ok(127)),
        (
            "128",
            10,
            8,
            Err(r#"strconv.ParseInt: parsing "128": value out of range"#),
        ),
        ("-128", 10, 8, Ok(-128)),
        (
            "-129",
            10,
            8,
            Err(r#"strconv.ParseInt: parsing "-129": value out of range"#),
        ),
        (
            "2147483648",
            10,
            32,
            Err(r#"strconv.ParseInt: parsing "2147483648": value out of range"#),
        ),
        (
            "5",
            1,
            64,
            Err(r#"strconv.ParseInt: parsing "5": invalid base 1"#),
        ),
        (
            "5",
            37,
            64,
            Err(r#"strconv.ParseInt: parsing "5": invalid base 37"#),
        ),
        (
            "5",
            10,
            65,
            Err(r#"strconv.ParseInt: parsing "5": invalid bit size 65"#),
        ),
        (
            "",
            1,
            64,
            Err(r#"strconv.ParseInt: parsing "": invalid syntax"#),
        ),
        (
            "x",
            1,
            64,
            Err(r#"strconv.ParseInt: parsing "x": invalid base 1"#),
        ),
        ("42", 10, 0, Ok(42)),
    ];

    /// `strconv.Atoi(s)` as Go 1.26.8 answers on amd64.
    #[test]
    fn atoi_matches_go() {
        for (s, want) in [
            ("42", Ok(42)),
            ("-7", Ok(-7)),
            ("+3", Ok(3)),
            ("007", Ok(7)),
            ("", Err(r#"strconv.Atoi: parsing "": invalid syntax"#)),
            ("ten", Err(r#"strconv.Atoi: parsing "ten": invalid syntax"#)),
            (
                "1_000",
                Err(r#"strconv.Atoi: parsing "1_000": invalid syntax"#),
            ),
            (
                "0x10",
                Err(r#"strconv.Atoi: parsing "0x10": invalid syntax"#),
            ),
            ("9223372036854775807", Ok(i64::MAX)),
            (
                "9223372036854775808",
                Err(r#"strconv.Atoi: parsing "9223372036854775808": value out of range"#),
            ),
            (
                "-99999999999999999999",
                Err(r#"strconv.Atoi: parsing "-99999999999999999999": value out of range"#),
            ),
            (
                "\u{1}",
                Err(r#"strconv.Atoi: parsing "\x01": invalid syntax"#),
            ),
        ] {
            assert_eq!(
                atoi(s).map_err(|e| e.to_string()),
                want.map_err(str::to_owned),
                "{s:?}"
            );
        }
    }

    #[test]
    fn parse_int_matches_go() {
        for (s, base, bits, want) in CASES {
            let got = parse_int(s, *base, *bits).map_err(|e| e.to_string());
            assert_eq!(
                got,
                want.map_err(str::to_owned),
                "{s:?} base {base} bits {bits}"
            );
        }
    }
}
