//! Why a request parameter is rejected.
//!
//! A leaf module, so that `crate::error` can keep a [`ParamError`] as the
//! source of an answer without depending on the parameter readers.

use go::duration::Duration;

use super::duration;

/// A request parameter Loki would reject; `Display` is Loki's exact text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// `start`, `end` or `since` did not parse.
    #[error("could not parse '{param}' parameter: {reason}")]
    Bound {
        /// The parameter name.
        param: &'static str,
        /// Go's parse error text.
        reason: String,
    },
    /// `time` did not parse (Loki does not prefix this one).
    #[error("{0}")]
    Time(String),
    /// `limit` is not a 64-bit integer (Go's `strconv.Atoi` text).
    #[error("{0}")]
    LimitInvalid(go::strconv::AtoiError),
    /// `limit` ≤ 0.
    #[error("limit must be a positive value")]
    LimitNotPositive,
    /// `limit` above `max_entries_limit_per_query` on a log query.
    #[error(
        "max entries limit per query exceeded, limit > max_entries_limit_per_query ({limit} > {max})"
    )]
    LimitTooLarge {
        /// The requested `limit`.
        limit: u32,
        /// The configured `max_entries_limit_per_query`.
        max: u32,
    },
    /// `direction` is neither forward nor backward.
    #[error("invalid direction '{0}'")]
    Direction(String),
    /// `end` < `start`.
    #[error("end timestamp must not be before or equal to start time")]
    EndBeforeStart,
    /// `step` did not parse.
    #[error("{0}")]
    Step(#[from] duration::StepError),
    /// `step` ≤ 0.
    #[error(
        "zero or negative query resolution step widths are not accepted. Try a positive integer"
    )]
    StepNotPositive,
    /// `interval` is negative.
    #[error("interval must be >= 0")]
    NegativeInterval,
    /// The range is longer than `max_query_length`.
    #[error("the query time range exceeds the limit (query length: {}, limit: {})", Duration(*.len).to_go_string(), Duration(*.max).to_prometheus_string())]
    QueryTooLong {
        /// `end - start` in nanoseconds, of the times cut to milliseconds
        /// (Loki's frontend compares millisecond times).
        len: i64,
        /// The configured `max_query_length` in nanoseconds.
        max: i64,
    },
    /// More than 11 000 points per series.
    #[error(
        "exceeded maximum resolution of 11,000 points per time series. Try increasing the value of the step parameter"
    )]
    TooManyPoints,
}
