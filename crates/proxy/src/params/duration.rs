//! Durations in the two forms Loki's HTTP API accepts.
//!
//! `since` takes a Prometheus duration (`1h30m`, `7d`, `0`); `step` and
//! `interval` take float seconds first and a Prometheus duration second.
//! humantime disagrees with Prometheus on units, so this is hand-written.

/// Nanoseconds per unit, in the only order Prometheus accepts them.
const UNITS: &[(&str, i64)] = &[
    ("y", 365 * 24 * 3600 * 1_000_000_000),
    ("w", 7 * 24 * 3600 * 1_000_000_000),
    ("d", 24 * 3600 * 1_000_000_000),
    ("h", 3600 * 1_000_000_000),
    ("m", 60 * 1_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
];

/// Why a Prometheus duration was rejected; `Display` is Prometheus' text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not of the form `[Ny][Nw][Nd][Nh][Nm][Ns][Nms]`.
    #[error("not a valid duration string: {0:?}")]
    Invalid(String),
    /// Larger than Go's `time.Duration`.
    #[error("duration out of range")]
    OutOfRange,
}

/// Parses a Prometheus duration (`model.ParseDuration`) into nanoseconds.
///
/// # Errors
/// [`DurationError`] for anything but whole numbers with units in descending order.
pub fn parse_prometheus(s: &str) -> Result<i64, DurationError> {
    if s == "0" {
        return Ok(0);
    }
    let invalid = || DurationError::Invalid(s.to_owned());
    if s.is_empty() {
        return Err(invalid());
    }
    let mut rest = s;
    let mut next_unit = 0;
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(invalid());
        }
        let (num, tail) = rest.split_at(digits);
        // Longest unit first so "ms" is not read as "m" followed by "s".
        let unit_len = if tail.starts_with("ms") {
            2
        } else {
            tail.chars().next().map_or(0, char::len_utf8)
        };
        let unit = &tail[..unit_len.min(tail.len())];
        let idx = UNITS[next_unit..]
            .iter()
            .position(|(u, _)| *u == unit)
            .ok_or_else(invalid)?
            + next_unit;
        let n: i64 = num.parse().map_err(|_| DurationError::OutOfRange)?;
        let part = n
            .checked_mul(UNITS[idx].1)
            .ok_or(DurationError::OutOfRange)?;
        total = total.checked_add(part).ok_or(DurationError::OutOfRange)?;
        next_unit = idx + 1;
        rest = &tail[unit.len()..];
    }
    Ok(total)
}

/// Formats nanoseconds as Prometheus' `model.Duration` prints them (`30d1h`, `4w`, `0s`).
///
/// Years and weeks appear only when they divide the value exactly, as in Prometheus.
pub fn format_prometheus(ns: i64) -> String {
    let mut ms = ns / 1_000_000;
    if ms == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    for &(unit, unit_ns) in UNITS {
        let mult = unit_ns / 1_000_000;
        if matches!(unit, "y" | "w") && ms % mult != 0 {
            continue;
        }
        let v = ms / mult;
        if v > 0 {
            out.push_str(&v.to_string());
            out.push_str(unit);
            ms -= v * mult;
        }
    }
    out
}

/// Formats nanoseconds as Go's `time.Duration.String` does (`748h0m0s`,
/// `1m30s`, `1.5s`, `250ms`, `0s`): Loki prints a query's length this way.
pub fn format_go(ns: i64) -> String {
    if ns == 0 {
        return "0s".to_owned();
    }
    let neg = ns < 0;
    let u = ns.unsigned_abs();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    // A fraction without trailing zeros, `digits` wide.
    let frac = |v: u64, digits: u32| -> String {
        if v == 0 {
            return String::new();
        }
        let s = format!("{v:0width$}", width = digits as usize);
        format!(".{}", s.trim_end_matches('0'))
    };
    if u < 1_000_000_000 {
        let (unit, div, digits) = if u < 1_000 {
            ("ns", 1, 0)
        } else if u < 1_000_000 {
            ("µs", 1_000, 3)
        } else {
            ("ms", 1_000_000, 6)
        };
        out.push_str(&(u / div).to_string());
        out.push_str(&frac(u % div, digits));
        out.push_str(unit);
        return out;
    }
    let secs = u / 1_000_000_000;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if h > 0 || m > 0 {
        out.push_str(&format!("{m}m"));
    }
    out.push_str(&s.to_string());
    out.push_str(&frac(u % 1_000_000_000, 9));
    out.push('s');
    out
}

/// Why a `step` was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// Neither float seconds nor a Prometheus duration.
    #[error("cannot parse {0:?} to a valid duration")]
    Invalid(String),
    /// Float seconds beyond Go's `time.Duration`.
    #[error("cannot parse {0:?} to a valid duration. It overflows int64")]
    Overflow(String),
}

/// Parses `step`/`interval`: float seconds (`15`, `0.5`) or a Prometheus duration (`15000ms`).
///
/// The result may be zero or negative; the caller rejects those with Loki's own text.
///
/// # Errors
/// [`StepError`] with Loki's wording.
pub fn parse_step(s: &str) -> Result<i64, StepError> {
    if let Some(secs) = parse_go_float(s) {
        let ns = secs * 1e9;
        if ns.is_nan() {
            // Go converts NaN to MinInt64, which the caller then rejects as negative.
            return Ok(i64::MIN);
        }
        if ns > i64::MAX as f64 || ns < i64::MIN as f64 {
            return Err(StepError::Overflow(s.to_owned()));
        }
        return Ok(ns as i64);
    }
    parse_prometheus(s).map_err(|_| StepError::Invalid(s.to_owned()))
}

/// `strconv.ParseFloat` for the decimal forms: Rust's parser also accepts
/// `inf`/`nan` spellings Go accepts, but rejects empty strings the same way.
fn parse_go_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let word = body.to_ascii_lowercase();
    if matches!(word.as_str(), "inf" | "infinity" | "nan") {
        return s.parse().ok().or(Some(f64::NAN));
    }
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn go_duration_strings() {
        for (ns, want) in [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (250_000_000, "250ms"),
            (1_500_000_000, "1.5s"),
            (90_000_000_000, "1m30s"),
            (3_600_000_000_000, "1h0m0s"),
            (748 * 3_600_000_000_000, "748h0m0s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (-90_000_000_000, "-1m30s"),
        ] {
            assert_eq!(format_go(ns), want, "{ns}");
        }
    }

    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn prometheus_units() {
        assert_eq!(parse_prometheus("0"), Ok(0));
        assert_eq!(parse_prometheus("5m"), Ok(300 * S));
        assert_eq!(parse_prometheus("1h30m"), Ok(5400 * S));
        assert_eq!(parse_prometheus("15000ms"), Ok(15 * S));
        assert_eq!(parse_prometheus("1y"), Ok(365 * 86400 * S));
        assert_eq!(parse_prometheus("2w1d"), Ok(15 * 86400 * S));
        assert_eq!(parse_prometheus("1m1s1ms"), Ok(61 * S + 1_000_000));
    }

    #[test]
    fn prometheus_rejects() {
        for bad in [
            "", "1.5s", "5", "1s1m", "1h1h", "5minutes", "-1s", "1M", "s",
        ] {
            assert_eq!(
                parse_prometheus(bad),
                Err(DurationError::Invalid(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(
            parse_prometheus("99999999999y"),
            Err(DurationError::OutOfRange)
        );
        assert_eq!(
            parse_prometheus("1.5s").unwrap_err().to_string(),
            r#"not a valid duration string: "1.5s""#
        );
    }

    #[test]
    fn prometheus_format() {
        assert_eq!(format_prometheus(0), "0s");
        assert_eq!(format_prometheus(721 * 3600 * S), "30d1h");
        assert_eq!(format_prometheus(745 * 3600 * S), "31d1h");
        assert_eq!(format_prometheus(14 * 86400 * S), "2w");
        assert_eq!(format_prometheus(365 * 86400 * S), "1y");
        assert_eq!(format_prometheus(90 * 86400 * S), "90d");
        assert_eq!(format_prometheus(61 * S + 5_000_000), "1m1s5ms");
    }

    #[test]
    fn step_forms() {
        assert_eq!(parse_step("15"), Ok(15 * S));
        assert_eq!(parse_step("0.5"), Ok(S / 2));
        assert_eq!(parse_step("15000ms"), Ok(15 * S));
        assert_eq!(parse_step("1m"), Ok(60 * S));
        assert_eq!(parse_step("0"), Ok(0));
        assert_eq!(parse_step("-10"), Ok(-10 * S));
        assert_eq!(parse_step("1e3"), Ok(1000 * S));
    }

    #[test]
    fn step_errors_use_loki_text() {
        assert_eq!(
            parse_step("1.5s").unwrap_err().to_string(),
            r#"cannot parse "1.5s" to a valid duration"#
        );
        assert_eq!(
            parse_step("abc").unwrap_err().to_string(),
            r#"cannot parse "abc" to a valid duration"#
        );
        assert_eq!(
            parse_step("1e20").unwrap_err().to_string(),
            r#"cannot parse "1e20" to a valid duration. It overflows int64"#
        );
        assert!(matches!(parse_step("+Inf"), Err(StepError::Overflow(_))));
    }
}
