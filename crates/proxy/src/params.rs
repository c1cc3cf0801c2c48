//! Loki's request parameters: defaults, validation order and exact error texts.
//!
//! The checks run in the order Loki's `ParseRangeQuery` runs them, so a
//! request with several faults gets the same message from lokivl as from Loki.

pub mod duration;
pub mod error;
pub mod form;
pub mod limits;
pub mod timestamp;

use engine::direction::Direction;

pub use error::ParamError;
pub use form::Form;
pub use limits::QueryLimits;

/// Loki's default `limit` for query, query_range and tail.
pub const DEFAULT_LIMIT: u32 = 100;
/// Loki's default `max_entries_limit_per_query` (the configured value is [`QueryLimits`]).
pub const MAX_ENTRIES_LIMIT: u32 = limits::DEFAULT_MAX_ENTRIES_LIMIT;
/// Loki's default lookback when `start` is absent.
pub const DEFAULT_SINCE_NS: i64 = 3600 * 1_000_000_000;
/// Loki's default `max_query_length` (721 h; the configured value is [`QueryLimits`]).
pub const MAX_QUERY_LENGTH_NS: i64 = 721 * 3600 * 1_000_000_000;
/// Loki's cap on points per series.
pub const MAX_POINTS: i64 = 11_000;

/// A time range in nanoseconds, `start` and `end` as the client meant them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Inclusive start.
    pub start: i64,
    /// End (exclusive for log queries, inclusive for metric steps).
    pub end: i64,
}

/// Parameters of `query_range`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeParams {
    /// The LogQL text.
    pub query: String,
    /// Time range.
    pub bounds: Bounds,
    /// Entry limit (log queries only).
    pub limit: u32,
    /// Entry order (log queries only).
    pub direction: Direction,
    /// Step in nanoseconds (metric queries only), always > 0.
    pub step: i64,
    /// Loki's `interval` (keep one entry per interval) in nanoseconds, ≥ 0; 0 when absent.
    pub interval: i64,
}

/// Parameters of the instant `query`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstantParams {
    /// The LogQL text.
    pub query: String,
    /// Evaluation time in nanoseconds.
    pub time: i64,
    /// Entry limit.
    pub limit: u32,
    /// Entry order.
    pub direction: Direction,
}

/// `start`/`end`/`since` with Loki's defaults: `end` = now, `start` = min(end, now) − since.
///
/// # Errors
/// [`ParamError::Bound`] when a value does not parse.
pub fn bounds(form: &Form, now: i64) -> Result<Bounds, ParamError> {
    let since = match form.get("since") {
        "" => DEFAULT_SINCE_NS,
        s => go::duration::Duration::parse_prometheus(s)
            .map(go::duration::Duration::as_nanos)
            .map_err(|e| ParamError::Bound {
                param: "since",
                reason: e.to_string(),
            })?,
    };
    let end = timestamp::parse_timestamp(form.get("end"), now).map_err(|e| ParamError::Bound {
        param: "end",
        reason: e.to_string(),
    })?;
    let base = end.min(now);
    let start =
        timestamp::parse_timestamp(form.get("start"), base.saturating_sub(since)).map_err(|e| {
            ParamError::Bound {
                param: "start",
                reason: e.to_string(),
            }
        })?;
    Ok(Bounds { start, end })
}

/// `limit`, default 100, must be positive.
///
/// # Errors
/// [`ParamError::LimitInvalid`] or [`ParamError::LimitNotPositive`].
pub fn limit(form: &Form) -> Result<u32, ParamError> {
    let raw = form.get("limit");
    if raw.is_empty() {
        return Ok(DEFAULT_LIMIT);
    }
    let n = go::strconv::atoi(raw).map_err(ParamError::LimitInvalid)?;
    if n <= 0 {
        return Err(ParamError::LimitNotPositive);
    }
    // Loki keeps it as uint32; anything larger fails the max-entries check anyway.
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// `direction`, case-insensitive, default backward.
///
/// # Errors
/// [`ParamError::Direction`].
pub fn direction(form: &Form) -> Result<Direction, ParamError> {
    let raw = form.get("direction");
    if raw.is_empty() || raw.eq_ignore_ascii_case("backward") {
        Ok(Direction::Backward)
    } else if raw.eq_ignore_ascii_case("forward") {
        Ok(Direction::Forward)
    } else {
        Err(ParamError::Direction(raw.to_owned()))
    }
}

/// Rejects a log query `limit` above `limits.max_entries_limit` (the
/// request's `max_entries_limit_per_query`); a zero maximum disables the
/// check, as in Loki.
///
/// # Errors
/// [`ParamError::LimitTooLarge`].
pub fn check_max_entries(limits: QueryLimits, limit: u32) -> Result<(), ParamError> {
    let max = limits.max_entries_limit;
    if max != 0 && limit > max {
        Err(ParamError::LimitTooLarge { limit, max })
    } else {
        Ok(())
    }
}

/// Rejects a range longer than `limits.max_query_length_ns` (the request's
/// `max_query_length`; checked after LogQL parsing, as Loki does); a zero
/// maximum disables the check, as in Loki.
///
/// # Errors
/// [`ParamError::QueryTooLong`].
pub fn check_query_length(limits: QueryLimits, b: Bounds) -> Result<(), ParamError> {
    let ms = |t: i64| t / 1_000_000 * 1_000_000;
    let len = ms(b.end).saturating_sub(ms(b.start));
    let max = limits.max_query_length_ns;
    if max > 0 && len > max {
        Err(ParamError::QueryTooLong { len, max })
    } else {
        Ok(())
    }
}

/// Parses `query_range` parameters in Loki's order.
///
/// # Errors
/// The first [`ParamError`] Loki would report.
pub fn range_params(form: &Form, now: i64) -> Result<RangeParams, ParamError> {
    let bounds = bounds(form, now)?;
    if bounds.end < bounds.start {
        return Err(ParamError::EndBeforeStart);
    }
    let limit = limit(form)?;
    let direction = direction(form)?;
    let step = match form.get("step") {
        "" => default_step(bounds),
        s => duration::parse_step(s)?,
    };
    if step <= 0 {
        return Err(ParamError::StepNotPositive);
    }
    // Saturating, as Go's `time.Time.Sub` is: far-apart bounds must not overflow.
    if bounds.end.saturating_sub(bounds.start) / step > MAX_POINTS {
        return Err(ParamError::TooManyPoints);
    }
    let interval = match form.get("interval") {
        "" => 0,
        s => duration::parse_step(s)?,
    };
    if interval < 0 {
        return Err(ParamError::NegativeInterval);
    }
    Ok(RangeParams {
        query: form.get("query").to_owned(),
        bounds,
        limit,
        direction,
        step,
        interval,
    })
}

/// Parses instant `query` parameters in Loki's order.
///
/// # Errors
/// The first [`ParamError`] Loki would report.
pub fn instant_params(form: &Form, now: i64) -> Result<InstantParams, ParamError> {
    let limit = limit(form)?;
    let time = timestamp::parse_timestamp(form.get("time"), now)
        .map_err(|e| ParamError::Time(e.to_string()))?;
    let direction = direction(form)?;
    Ok(InstantParams {
        query: form.get("query").to_owned(),
        time,
        limit,
        direction,
    })
}

/// Loki's default step: `max(floor(range_seconds / 250), 1)` seconds.
fn default_step(b: Bounds) -> i64 {
    let secs = (b.end.saturating_sub(b.start) as f64 / 1e9 / 250.0)
        .floor()
        .max(1.0);
    secs as i64 * 1_000_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;
    const NOW: i64 = 1_787_392_800 * S;

    fn form(q: &str) -> Form {
        let mut f = Form::default();
        f.extend_urlencoded(q.as_bytes());
        f
    }

    fn range_err(q: &str) -> String {
        range_params(&form(q), NOW).unwrap_err().to_string()
    }

    #[test]
    fn range_defaults() {
        let p = range_params(&form("query=x"), NOW).unwrap();
        assert_eq!(
            p.bounds,
            Bounds {
                start: NOW - 3600 * S,
                end: NOW
            }
        );
        assert_eq!(p.limit, 100);
        assert_eq!(p.direction, Direction::Backward);
        assert_eq!(p.step, 14 * S); // floor(3600 / 250)
        assert_eq!(p.query, "x");
    }

    #[test]
    fn default_step_is_at_least_one_second() {
        let p = range_params(&form("start=100&end=200"), NOW).unwrap();
        assert_eq!(p.step, S);
    }

    #[test]
    fn since_and_future_end() {
        let p = range_params(&form("since=5m"), NOW).unwrap();
        assert_eq!(p.bounds.start, NOW - 300 * S);
        // An end in the future: the default start is still based on now.
        let future = NOW / S + 7200;
        let p = range_params(&form(&format!("end={future}")), NOW).unwrap();
        assert_eq!(
            p.bounds,
            Bounds {
                start: NOW - 3600 * S,
                end: future * S
            }
        );
        // An explicit start beats since.
        let p = range_params(&form("since=5m&start=1787390000"), NOW).unwrap();
        assert_eq!(p.bounds.start, 1_787_390_000 * S);
    }

    #[test]
    fn grafana_shape() {
        let p = range_params(
            &form("query=%7Ba%3D%22b%22%7D&direction=BACKWARD&limit=1000&start=1787389200000000000&end=1787392800000000000&step=15000ms"),
            NOW,
        )
        .unwrap();
        assert_eq!(
            p.bounds,
            Bounds {
                start: 1_787_389_200 * S,
                end: 1_787_392_800 * S
            }
        );
        assert_eq!(p.limit, 1000);
        assert_eq!(p.step, 15 * S);
    }

    #[test]
    fn bound_errors() {
        assert_eq!(
            range_err("start=abc"),
            r#"could not parse 'start' parameter: strconv.ParseInt: parsing "abc": invalid syntax"#
        );
        assert_eq!(
            range_err("end=abc&start=abc"),
            r#"could not parse 'end' parameter: strconv.ParseInt: parsing "abc": invalid syntax"#
        );
        // Loki 3.7.8's answers, checked against the live binary.
        assert_eq!(
            range_err("since=1.5h"),
            r#"could not parse 'since' parameter: unknown unit "." in duration "1.5h""#
        );
        assert_eq!(
            range_err("since=1s1m"),
            r#"could not parse 'since' parameter: not a valid duration string: "1s1m""#
        );
    }

    #[test]
    fn end_before_start() {
        assert_eq!(
            range_err("start=200&end=100"),
            "end timestamp must not be before or equal to start time"
        );
        // Equal is accepted, as in Loki (only strictly-before is rejected).
        assert!(range_params(&form("start=200&end=200&step=1"), NOW).is_ok());
    }

    #[test]
    fn limit_rules() {
        assert_eq!(range_err("limit=0"), "limit must be a positive value");
        assert_eq!(range_err("limit=-5"), "limit must be a positive value");
        assert_eq!(
            range_err("limit=ten"),
            r#"strconv.Atoi: parsing "ten": invalid syntax"#
        );
        // Past 64 bits Go's Atoi says so (not "invalid syntax").
        assert_eq!(
            range_err("limit=99999999999999999999"),
            r#"strconv.Atoi: parsing "99999999999999999999": value out of range"#
        );
        // Far past u32 but within i64: capped, then refused by max entries.
        assert_eq!(
            range_params(&form("limit=9999999999"), NOW).unwrap().limit,
            u32::MAX
        );
        assert_eq!(range_params(&form("limit=5000"), NOW).unwrap().limit, 5000);
        assert_eq!(
            check_max_entries(QueryLimits::default(), 10000)
                .unwrap_err()
                .to_string(),
            "max entries limit per query exceeded, limit > max_entries_limit_per_query (10000 > 5000)"
        );
        assert!(check_max_entries(QueryLimits::default(), 5000).is_ok());
    }

    #[test]
    fn direction_rules() {
        assert_eq!(
            range_params(&form("direction=FORWARD"), NOW)
                .unwrap()
                .direction,
            Direction::Forward
        );
        assert_eq!(
            range_params(&form("direction=Backward"), NOW)
                .unwrap()
                .direction,
            Direction::Backward
        );
        assert_eq!(
            range_err("direction=sideways"),
            "invalid direction 'sideways'"
        );
    }

    #[test]
    fn step_rules() {
        assert_eq!(
            range_err("step=0"),
            "zero or negative query resolution step widths are not accepted. Try a positive integer"
        );
        assert_eq!(
            range_err("step=-1"),
            "zero or negative query resolution step widths are not accepted. Try a positive integer"
        );
        assert_eq!(
            range_err("step=1.5s"),
            r#"cannot parse "1.5s" to a valid duration"#
        );
        assert_eq!(range_params(&form("step=0.5"), NOW).unwrap().step, S / 2);
        assert_eq!(
            range_err("start=0&end=11001&step=1"),
            "exceeded maximum resolution of 11,000 points per time series. Try increasing the value of the step parameter"
        );
        assert!(range_params(&form("start=0&end=11000&step=1"), NOW).is_ok());
    }

    #[test]
    fn interval_rules() {
        assert_eq!(
            range_params(&form("interval=5s"), NOW).unwrap().interval,
            5 * S
        );
        assert_eq!(range_params(&form(""), NOW).unwrap().interval, 0);
        assert_eq!(range_err("interval=-1"), "interval must be >= 0");
        assert_eq!(
            range_err("interval=1.5s"),
            r#"cannot parse "1.5s" to a valid duration"#
        );
    }

    #[test]
    fn query_length_limit() {
        assert!(
            check_query_length(
                QueryLimits::default(),
                Bounds {
                    start: 0,
                    end: MAX_QUERY_LENGTH_NS
                }
            )
            .is_ok()
        );
        assert_eq!(
            check_query_length(
                QueryLimits::default(),
                Bounds {
                    start: 0,
                    end: 745 * 3600 * S
                }
            )
            .unwrap_err()
            .to_string(),
            "the query time range exceeds the limit (query length: 745h0m0s, limit: 30d1h)"
        );
    }

    /// Found by the params fuzz target: bounds ~1.7e19 ns apart overflowed `end - start`.
    #[test]
    fn far_apart_bounds_do_not_overflow() {
        // The range saturates at i64::MAX ns, as Go's `Time.Sub` does: the default
        // step is then floor(9223372036.85 s / 250) s, and max_query_length refuses it.
        let p = range_params(&form("start=-8888888880353470020"), NOW).unwrap();
        assert_eq!(p.step, 36_893_488 * S);
        assert!(check_query_length(QueryLimits::default(), p.bounds).is_err());
        assert_eq!(
            range_err("start=-8888888880353470020&step=1"),
            "exceeded maximum resolution of 11,000 points per time series. Try increasing the value of the step parameter"
        );
    }

    #[test]
    fn configured_limits_change_checks_and_texts() {
        let l = QueryLimits {
            max_query_length_ns: 2 * 3600 * S,
            max_entries_limit: 50,
            max_query_series: 1,
            max_series_matchers: 1,
        };
        assert_eq!(
            check_max_entries(l, 51).unwrap_err().to_string(),
            "max entries limit per query exceeded, limit > max_entries_limit_per_query (51 > 50)"
        );
        assert!(check_max_entries(l, 50).is_ok());
        let b = Bounds {
            start: 0,
            end: 3 * 3600 * S,
        };
        assert_eq!(
            check_query_length(l, b).unwrap_err().to_string(),
            "the query time range exceeds the limit (query length: 3h0m0s, limit: 2h)"
        );
        // 0 disables either limit, as in Loki.
        let off = QueryLimits {
            max_query_length_ns: 0,
            max_entries_limit: 0,
            max_query_series: 0,
            max_series_matchers: 0,
        };
        assert!(check_max_entries(off, u32::MAX).is_ok());
        let huge = Bounds {
            start: i64::MIN,
            end: i64::MAX,
        };
        assert!(check_query_length(off, huge).is_ok());
    }

    #[test]
    fn validation_order_matches_loki() {
        // Bounds before limit, limit before direction, direction before step.
        assert_eq!(
            range_err("start=x&limit=0"),
            r#"could not parse 'start' parameter: strconv.ParseInt: parsing "x": invalid syntax"#
        );
        assert_eq!(
            range_err("start=2&end=1&limit=0"),
            "end timestamp must not be before or equal to start time"
        );
        assert_eq!(
            range_err("limit=0&direction=x"),
            "limit must be a positive value"
        );
        assert_eq!(range_err("direction=x&step=0"), "invalid direction 'x'");
    }

    #[test]
    fn instant() {
        let p = instant_params(
            &form("query=vector(1)%2Bvector(1)&time=4000000000&direction=backward"),
            NOW,
        )
        .unwrap();
        assert_eq!(p.time, 4_000_000_000 * S);
        assert_eq!(p.query, "vector(1)+vector(1)");
        assert_eq!(instant_params(&form(""), NOW).unwrap().time, NOW);
        assert_eq!(
            instant_params(&form("time=soon"), NOW)
                .unwrap_err()
                .to_string(),
            r#"strconv.ParseInt: parsing "soon": invalid syntax"#
        );
        assert_eq!(
            instant_params(&form("limit=0"), NOW).unwrap_err(),
            ParamError::LimitNotPositive
        );
    }
}
