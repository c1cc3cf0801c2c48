//! Byte sizes as go-humanize v1.0.1 (Loki 3.7's) reads them (`ParseBytes`)
//! and prints them (`Bytes`, `IBytes`).

use crate::strconv::{ParseFloatError, parse_float};

/// Why go-humanize's `ParseBytes` refused a size; `Display` is its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseBytesError {
    /// The number part is not a float (Go's `strconv.ParseFloat` error).
    #[error(transparent)]
    Number(#[from] ParseFloatError),
    /// The unit is none of go-humanize's (lower-cased as it reports it).
    #[error("unhandled size name: {0}")]
    UnknownUnit(String),
    /// The size does not fit in a `u64`.
    #[error("too large: {0}")]
    TooLarge(String),
}

/// Parses `10KB`, `5MiB`, `1.5GB`, `42` as go-humanize's `ParseBytes` does:
/// units are case-insensitive, SI and IEC, and may follow a space.
///
/// Public because the proxy types and rewrites byte values the same way
/// (detected fields), and there must be one reading of a byte size.
pub fn parse_bytes(s: &str) -> Option<u64> {
    try_parse_bytes(s).ok()
}

/// [`parse_bytes`] with go-humanize's error: the number (digits, `.` and
/// `,`, commas dropped) must be a Go float, and the rest, trimmed and
/// lower-cased, a unit. Leading spaces are not skipped, as in Go.
///
/// # Errors
/// [`ParseBytesError`] with go-humanize's text.
pub fn try_parse_bytes(s: &str) -> Result<u64, ParseBytesError> {
    // Go counts Unicode digits here; lokivl only ASCII ones (no size seen
    // in the wild has other digits).
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(s.len());
    let value = if s[..split].contains(',') {
        parse_float(&s[..split].replace(',', ""))?
    } else {
        parse_float(&s[..split])?
    };
    let unit = s[split..].trim().to_lowercase();
    let mult: f64 = match unit.as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "ki" | "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mi" | "mib" => 1024f64.powi(2),
        "g" | "gb" => 1e9,
        "gi" | "gib" => 1024f64.powi(3),
        "t" | "tb" => 1e12,
        "ti" | "tib" => 1024f64.powi(4),
        "p" | "pb" => 1e15,
        "pi" | "pib" => 1024f64.powi(5),
        "e" | "eb" => 1e18,
        "ei" | "eib" => 1024f64.powi(6),
        _ => return Err(ParseBytesError::UnknownUnit(unit)),
    };
    let bytes = value * mult;
    if bytes >= u64::MAX as f64 {
        return Err(ParseBytesError::TooLarge(s.to_owned()));
    }
    // Truncation is what Go's uint64(f) conversion does.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(bytes as u64)
}

/// The value Loki's queriers compare a bytes label filter with: Loki's
/// frontend sends a log selector to the queriers as its printed text, and
/// prints a byte size with go-humanize `Bytes` (SI units, one decimal), so
/// `size < 3KiB` arrives as `size<3.1kB` and compares with 3,100 bytes, not
/// 3,072. The filter stays as written in the AST (and in `format_query`).
pub fn effective_bytes(v: u64) -> u64 {
    parse_bytes(&format_bytes(v)).unwrap_or(v)
}

/// go-humanize `Bytes` without its space (`1.5kB`), as Loki prints a
/// bytes filter's value in a query.
pub fn format_bytes(v: u64) -> String {
    bytes(v).replacen(' ', "", 1)
}

/// go-humanize `Bytes`: SI units, one decimal below 10 (`1.5 kB`, `12 MB`, `999 B`).
pub fn bytes(n: u64) -> String {
    humanate(n, 1000.0, &["B", "kB", "MB", "GB", "TB", "PB", "EB"])
}

/// go-humanize `IBytes`: binary units, one decimal below 10 (`1.0 MiB`, `64 MiB`).
pub fn ibytes(n: u64) -> String {
    humanate(n, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"])
}

/// go-humanize's `humanateBytes`.
fn humanate(n: u64, base: f64, units: &[&str; 7]) -> String {
    if n < 10 {
        return format!("{n} B");
    }
    let e = ((n as f64).ln() / base.ln()).floor();
    let idx = (e as usize).min(units.len() - 1);
    let val = ((n as f64) / base.powf(e) * 10.0 + 0.5).floor() / 10.0;
    if val < 10.0 {
        format!("{val:.1} {}", units[idx])
    } else {
        format!("{val:.0} {}", units[idx])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `humanize.ParseBytes(input)` as go-humanize v1.0.1 answered.
    const PARSE_CASES: &[(&str, Result<u64, &str>)] = &[
        ("42", Ok(42)),
        ("10KB", Ok(10000)),
        ("5MiB", Ok(5242880)),
        ("1.5kB", Ok(1500)),
        ("42 MiB", Ok(44040192)),
        ("1,000 B", Ok(1000)),
        ("1,024 kib", Ok(1048576)),
        (
            "abc",
            Err(r#"strconv.ParseFloat: parsing "": invalid syntax"#),
        ),
        ("12 parsecs", Err(r#"unhandled size name: parsecs"#)),
        ("", Err(r#"strconv.ParseFloat: parsing "": invalid syntax"#)),
        (
            ",",
            Err(r#"strconv.ParseFloat: parsing "": invalid syntax"#),
        ),
        (
            "1.2.3kb",
            Err(r#"strconv.ParseFloat: parsing "1.2.3": invalid syntax"#),
        ),
        ("10 5", Err(r#"unhandled size name: 5"#)),
        ("20EiB", Err(r#"too large: 20EiB"#)),
        (
            "18446744073709551616",
            Err(r#"too large: 18446744073709551616"#),
        ),
        (
            "18446744073709551615",
            Err(r#"too large: 18446744073709551615"#),
        ),
        (
            " 10KB",
            Err(r#"strconv.ParseFloat: parsing "": invalid syntax"#),
        ),
        ("10KB ", Ok(10000)),
        ("1K", Ok(1000)),
        ("2.5B", Ok(2)),
        ("0.5", Ok(0)),
        ("1e3", Err(r#"unhandled size name: e3"#)),
        ("1_000", Err(r#"unhandled size name: _000"#)),
        ("3XB", Err(r#"unhandled size name: xb"#)),
        ("16EiB", Err(r#"too large: 16EiB"#)),
        ("15.99EiB", Ok(18435214858663483392)),
        (".5k", Ok(500)),
        ("5.", Ok(5)),
        ("1.5 GB", Ok(1500000000)),
    ];

    /// `(n, humanize.Bytes(n), humanize.IBytes(n))`.
    const FORMAT_CASES: &[(u64, &str, &str)] = &[
        (0, "0 B", "0 B"),
        (5, "5 B", "5 B"),
        (9, "9 B", "9 B"),
        (10, "10 B", "10 B"),
        (999, "999 B", "999 B"),
        (1000, "1.0 kB", "1000 B"),
        (1023, "1.0 kB", "1023 B"),
        (1024, "1.0 kB", "1.0 KiB"),
        (1500, "1.5 kB", "1.5 KiB"),
        (1536, "1.5 kB", "1.5 KiB"),
        (9999, "10 kB", "9.8 KiB"),
        (10000, "10 kB", "9.8 KiB"),
        (82854982, "83 MB", "79 MiB"),
        (1000000, "1.0 MB", "977 KiB"),
        (5242880, "5.2 MB", "5.0 MiB"),
        (67108864, "67 MB", "64 MiB"),
        (1048576, "1.0 MB", "1.0 MiB"),
        (51381224, "51 MB", "49 MiB"),
        (1099511627776, "1.1 TB", "1.0 TiB"),
        (18446744073709551615, "18 EB", "16 EiB"),
        (999999, "1000 kB", "977 KiB"),
        (999950, "1000 kB", "976 KiB"),
        (1099511627776, "1.1 TB", "1.0 TiB"),
    ];

    #[test]
    fn parse_bytes_matches_go_humanize() {
        for (input, want) in PARSE_CASES {
            let got = try_parse_bytes(input).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned), "{input:?}");
        }
    }

    #[test]
    fn bytes_and_ibytes_match_go_humanize() {
        for (n, si, iec) in FORMAT_CASES {
            assert_eq!(bytes(*n), *si, "{n}");
            assert_eq!(ibytes(*n), *iec, "{n}");
        }
    }

    #[test]
    fn effective_bytes_follow_lokis_printed_form() {
        assert_eq!(effective_bytes(3 * 1024), 3_100);
        assert_eq!(effective_bytes(10_000), 10_000);
        assert_eq!(effective_bytes(5 * 1024 * 1024), 5_200_000);
        assert_eq!(effective_bytes(9), 9);
        assert_eq!(effective_bytes(1_536), 1_500);
    }

    #[test]
    fn parses_si_and_iec() {
        assert_eq!(parse_bytes("10KB"), Some(10_000));
        assert_eq!(parse_bytes("5MiB"), Some(5 * 1024 * 1024));
        assert_eq!(parse_bytes("1.5kB"), Some(1500));
        assert_eq!(parse_bytes("3XB"), None);
    }

    #[test]
    fn formats_like_humanize() {
        assert_eq!(format_bytes(5), "5B");
        assert_eq!(format_bytes(10_000), "10kB");
        assert_eq!(format_bytes(5 * 1024 * 1024), "5.2MB");
        assert_eq!(format_bytes(1_000_000), "1.0MB");
    }
}
