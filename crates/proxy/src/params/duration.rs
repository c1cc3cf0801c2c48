//! Durations in the two forms Loki's HTTP API accepts.
//!
//! `since` takes a Prometheus duration (`1h30m`, `7d`, `0`); `step` and
//! `interval` take float seconds first and a Prometheus duration second.
//! humantime disagrees with Prometheus on units, so this is hand-written.

use go::duration::Duration;

/// Why a Prometheus duration was rejected; `Display` is Prometheus' text.
pub use go::duration::PrometheusDurationError as DurationError;

/// Parses a Prometheus duration (`model.ParseDuration`) into nanoseconds.
///
/// # Errors
/// [`DurationError`] for anything but whole numbers with units in descending order.
pub fn parse_prometheus(s: &str) -> Result<i64, DurationError> {
    Duration::parse_prometheus(s).map(Duration::as_nanos)
}

/// Formats nanoseconds as Prometheus' `model.Duration` prints them (`30d1h`, `4w`, `0s`).
pub fn format_prometheus(ns: i64) -> String {
    Duration(ns).to_prometheus_string()
}

/// Formats nanoseconds as Go's `time.Duration.String` does (`748h0m0s`,
/// `1m30s`, `1.5s`, `250ms`, `0s`): Loki prints a query's length this way.
pub fn format_go(ns: i64) -> String {
    Duration(ns).to_go_string()
}

/// Why a `step` was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// Neither float seconds nor a Prometheus duration.
    #[error("cannot parse {} to a valid duration", go::strconv::quote(.0))]
    Invalid(String),
    /// Float seconds beyond Go's `time.Duration`.
    #[error("cannot parse {} to a valid duration. It overflows int64", go::strconv::quote(.0))]
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

/// `strconv.ParseFloat` (the go crate's).
fn parse_go_float(s: &str) -> Option<f64> {
    go::strconv::parse_float(s).ok()
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
        for bad in ["5", "1s1m", "1h1h", "-1s", "s"] {
            assert_eq!(
                parse_prometheus(bad),
                Err(DurationError::Invalid(bad.into())),
                "{bad}"
            );
        }
        // Prometheus names a unit it does not know (Loki 3.7.8 answers
        // `since=5minutes` with this text).
        for (bad, unit) in [("1.5s", "."), ("5minutes", "minutes"), ("1M", "M")] {
            assert_eq!(
                parse_prometheus(bad),
                Err(DurationError::UnknownUnit {
                    unit: unit.into(),
                    value: bad.into()
                }),
                "{bad}"
            );
        }
        assert_eq!(parse_prometheus(""), Err(DurationError::Empty));
        assert_eq!(
            parse_prometheus("99999999999y"),
            Err(DurationError::OutOfRange)
        );
        assert_eq!(
            parse_prometheus("1.5s").unwrap_err().to_string(),
            r#"unknown unit "." in duration "1.5s""#
        );
        assert_eq!(
            parse_prometheus("1s1m").unwrap_err().to_string(),
            r#"not a valid duration string: "1s1m""#
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
        // Go's %q, not Rust's Debug quoting; and Go's ParseFloat refuses
        // what overflows f64 (Loki then tries a Prometheus duration).
        assert_eq!(
            parse_step("\u{1}\u{a0}").unwrap_err().to_string(),
            r#"cannot parse "\x01\u00a0" to a valid duration"#
        );
        assert_eq!(
            parse_step("1e400").unwrap_err().to_string(),
            r#"cannot parse "1e400" to a valid duration"#
        );
    }
}
