//! Durations in the two forms Loki's HTTP API accepts.
//!
//! `since` takes a Prometheus duration (`1h30m`, `7d`, `0`), read by
//! [`go::duration::Duration::parse_prometheus`]; `step` and `interval` take
//! float seconds first and a Prometheus duration second ([`parse_step`]).

use go::duration::Duration;

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
    if let Ok(secs) = go::strconv::parse_float(s) {
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
    Duration::parse_prometheus(s)
        .map(Duration::as_nanos)
        .map_err(|_| StepError::Invalid(s.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

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
