//! Loki's per-query limits as configured (`--max-query-length`,
//! `--max-entries-limit-per-query`, `--max-query-series`), and lokivl's
//! `--max-series-matchers`.
//!
//! The values live in [`crate::config::Settings`] and reach the request path
//! in the request's [`crate::context::RequestContext`], so two routers built
//! with different settings in one process (tests, embedding) each see their
//! own values, and work spawned for a window or a tenant keeps them.

use std::time::Duration;

/// Loki's default `max_query_length` (721 h).
pub const DEFAULT_MAX_QUERY_LENGTH: Duration = Duration::from_secs(721 * 3600);
/// Loki's default `max_entries_limit_per_query`.
pub const DEFAULT_MAX_ENTRIES_LIMIT: u32 = 5000;
/// Loki's default `max_query_series`.
pub const DEFAULT_MAX_QUERY_SERIES: usize = 500;
/// Default most distinct `match[]` selectors of one `series` request.
pub const DEFAULT_MAX_SERIES_MATCHERS: usize = 100;

/// The per-query limits one router enforces; 0 disables a limit, as in Loki.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryLimits {
    /// Longest `end - start` in nanoseconds (0 = unlimited).
    pub max_query_length_ns: i64,
    /// Largest `limit` of a log query (0 = unlimited).
    pub max_entries_limit: u32,
    /// Most series in a metric answer (0 = unlimited).
    pub max_query_series: usize,
    /// Most distinct `match[]` selectors of a `series` request (0 = unlimited).
    pub max_series_matchers: usize,
}

impl Default for QueryLimits {
    fn default() -> Self {
        Self {
            max_query_length_ns: duration_ns(DEFAULT_MAX_QUERY_LENGTH),
            max_entries_limit: DEFAULT_MAX_ENTRIES_LIMIT,
            max_query_series: DEFAULT_MAX_QUERY_SERIES,
            max_series_matchers: DEFAULT_MAX_SERIES_MATCHERS,
        }
    }
}

/// `d` in nanoseconds, saturating (a limit of centuries means "no limit" anyway).
pub fn duration_ns(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

/// `--max-query-length`, `--max-entries-limit-per-query`, `--max-query-series`, `--max-series-matchers`.
#[derive(Debug, Clone, clap::Args)]
pub struct QueryLimitFlags {
    /// Loki's `max_query_length`: longest `end - start` of a query (400 past it; 0 disables).
    #[arg(long, env = "LOKIVL_MAX_QUERY_LENGTH", default_value = "721h", value_parser = humantime::parse_duration)]
    pub max_query_length: Duration,
    /// Loki's `max_entries_limit_per_query`: largest `limit` of a log query (400 past it; 0 disables).
    #[arg(long, env = "LOKIVL_MAX_ENTRIES_LIMIT_PER_QUERY", default_value_t = DEFAULT_MAX_ENTRIES_LIMIT)]
    pub max_entries_limit_per_query: u32,
    /// Loki's `max_query_series`: most series in a metric answer (400 past it; 0 disables).
    #[arg(long, env = "LOKIVL_MAX_QUERY_SERIES", default_value_t = DEFAULT_MAX_QUERY_SERIES)]
    pub max_query_series: usize,
    /// Most distinct `match[]` selectors of one `series` request (400 past it; 0 disables; Loki has no such limit).
    #[arg(long, env = "LOKIVL_MAX_SERIES_MATCHERS", default_value_t = DEFAULT_MAX_SERIES_MATCHERS)]
    pub max_series_matchers: usize,
}

impl QueryLimitFlags {
    /// The limits these flags describe (every value is valid, 0 meaning unlimited).
    pub fn limits(&self) -> QueryLimits {
        QueryLimits {
            max_query_length_ns: duration_ns(self.max_query_length),
            max_entries_limit: self.max_entries_limit_per_query,
            max_query_series: self.max_query_series,
            max_series_matchers: self.max_series_matchers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_lokis() {
        assert_eq!(
            QueryLimits::default().max_query_length_ns,
            721 * 3600 * 1_000_000_000
        );
        assert_eq!(QueryLimits::default().max_entries_limit, 5000);
        assert_eq!(QueryLimits::default().max_query_series, 500);
    }

    #[test]
    fn flags_parse_durations_and_zero() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            f: QueryLimitFlags,
        }
        let c = Cli::try_parse_from(["x"]).unwrap();
        assert_eq!(c.f.limits(), QueryLimits::default());
        let c = Cli::try_parse_from([
            "x",
            "--max-query-length",
            "2h",
            "--max-entries-limit-per-query",
            "0",
            "--max-query-series",
            "3",
        ])
        .unwrap();
        let l = c.f.limits();
        assert_eq!(l.max_query_length_ns, 7200 * 1_000_000_000);
        assert_eq!(l.max_entries_limit, 0);
        assert_eq!(l.max_query_series, 3);
    }
}
