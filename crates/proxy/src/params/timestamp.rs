//! Loki's timestamp parameter formats (`start`, `end`, `time`).
//!
//! Values are nanoseconds since the Unix epoch as `i64` (years 1677–2262),
//! saturating outside that range rather than wrapping.

use time::OffsetDateTime;

/// Why a timestamp was rejected: Go's `strconv.ParseInt` error, the text Loki returns.
pub use go::strconv::ParseIntError as TimeError;

/// Parses a timestamp the way Loki does, or returns `default` for an empty value.
///
/// * contains `.` and is a float (Go's `strconv.ParseFloat`): seconds,
///   fraction rounded to milliseconds;
/// * an integer (Go's `strconv.ParseInt`) of at most 10 characters:
///   seconds; longer: nanoseconds;
/// * otherwise RFC3339 with optional fraction (`2026-08-22T10:00:00.000Z`).
///
/// # Errors
/// [`TimeError`]: the integer parse's error, as Loki answers it.
pub fn parse_timestamp(value: &str, default: i64) -> Result<i64, TimeError> {
    if value.is_empty() {
        return Ok(default);
    }
    if value.contains('.')
        && let Ok(t) = go::strconv::parse_float(value)
        && t.is_finite()
    {
        let secs = t.trunc();
        let frac = ((t - secs) * 1000.0).round() / 1000.0;
        return Ok(sat_secs(secs).saturating_add((frac * 1e9) as i64));
    }
    match go::strconv::parse_int(value, 10, 64) {
        Ok(n) if value.len() <= 10 => Ok(n.saturating_mul(1_000_000_000)),
        Ok(n) => Ok(n),
        Err(e) => match go::time::parse_rfc3339(value) {
            Some(t) => Ok(i64::try_from(t.unix_nanos_i128()).unwrap_or(if t.secs < 0 {
                i64::MIN
            } else {
                i64::MAX
            })),
            None => Err(e),
        },
    }
}

fn sat_secs(secs: f64) -> i64 {
    let ns = secs * 1e9;
    if ns >= i64::MAX as f64 {
        i64::MAX
    } else if ns <= i64::MIN as f64 {
        i64::MIN
    } else {
        ns as i64
    }
}

/// The current time in nanoseconds.
pub fn now_ns() -> i64 {
    i64::try_from(OffsetDateTime::now_utc().unix_timestamp_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn empty_is_default() {
        assert_eq!(parse_timestamp("", 42), Ok(42));
    }

    #[test]
    fn ten_digits_are_seconds() {
        assert_eq!(parse_timestamp("4000000000", 0), Ok(4_000_000_000 * S));
        assert_eq!(parse_timestamp("1724325600", 0), Ok(1_724_325_600 * S));
        assert_eq!(parse_timestamp("0", 0), Ok(0));
        assert_eq!(parse_timestamp("-100", 0), Ok(-100 * S));
    }

    #[test]
    fn longer_integers_are_nanoseconds() {
        assert_eq!(
            parse_timestamp("1724325600123456789", 0),
            Ok(1_724_325_600_123_456_789)
        );
        // A 13-digit millisecond value is read as nanoseconds, as Loki does.
        assert_eq!(parse_timestamp("1724325600123", 0), Ok(1_724_325_600_123));
    }

    #[test]
    fn floats_are_seconds_rounded_to_ms() {
        assert_eq!(
            parse_timestamp("1724325600.5", 0),
            Ok(1_724_325_600 * S + 500_000_000)
        );
        assert_eq!(
            parse_timestamp("1724325600.1234", 0),
            Ok(1_724_325_600 * S + 123_000_000)
        );
        assert_eq!(parse_timestamp("10.0006", 0), Ok(10 * S + 1_000_000));
    }

    /// Go's `time.Parse(time.RFC3339Nano, …)` is more lenient than RFC 3339.
    #[test]
    fn rfc3339_as_go_reads_it() {
        assert_eq!(
            parse_timestamp("2026-08-22T10:00:00,5Z", 0),
            Ok(1_787_392_800 * S + 500_000_000)
        );
        assert!(parse_timestamp("2026-08-22t10:00:00Z", 0).is_err());
    }

    #[test]
    fn rfc3339() {
        assert_eq!(
            parse_timestamp("2026-08-22T10:00:00.000Z", 0),
            Ok(1_787_392_800 * S)
        );
        assert_eq!(
            parse_timestamp("2026-08-22T10:00:00Z", 0),
            Ok(1_787_392_800 * S)
        );
        assert_eq!(
            parse_timestamp("2026-08-22T12:00:00.123456789+02:00", 0),
            Ok(1_787_392_800 * S + 123_456_789)
        );
    }

    #[test]
    fn errors_use_go_text() {
        assert_eq!(
            parse_timestamp("yesterday", 0).unwrap_err().to_string(),
            r#"strconv.ParseInt: parsing "yesterday": invalid syntax"#
        );
        assert_eq!(
            parse_timestamp("99999999999999999999", 0)
                .unwrap_err()
                .to_string(),
            r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#
        );
        assert_eq!(
            parse_timestamp("\u{1}", 0).unwrap_err().to_string(),
            r#"strconv.ParseInt: parsing "\x01": invalid syntax"#
        );
        // Go's first offending byte decides: a digit run past 64 bits is a
        // range error even when a letter follows.
        assert_eq!(
            parse_timestamp("99999999999999999999x", 0)
                .unwrap_err()
                .to_string(),
            r#"strconv.ParseInt: parsing "99999999999999999999x": value out of range"#
        );
        assert_eq!(
            parse_timestamp("1_000", 0).unwrap_err().to_string(),
            r#"strconv.ParseInt: parsing "1_000": invalid syntax"#
        );
    }
}
