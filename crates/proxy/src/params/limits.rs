//! Loki's per-query limits as configured (`--max-query-length`,
//! `--max-entries-limit-per-query`, `--max-query-series`), and lokivl's
//! `--max-series-matchers`.
//!
//! The values live in [`crate::config::Settings`] and reach the request path
//! through a middleware ([`layer`]) that runs each request inside [`scope`]. Handlers keep calling [`super::check_max_entries`] and
//! [`super::check_query_length`] without threading the settings through every
//! signature, and two routers built with different settings in one process
//! (tests, embedding) each see their own values, which a global would not give.

use std::future::Future;
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

impl QueryLimits {
    /// The limits of the request being served, or Loki's defaults outside a [`scope`].
    pub fn current() -> Self {
        CURRENT.try_with(|l| *l).unwrap_or_default()
    }

    /// Applies the settings that are still process-wide in the metric engine
    /// (`max_query_series`); the binary calls this once at start-up.
    pub fn install_process_wide(&self) {
        crate::handler::metric::set_max_query_series(self.max_query_series);
    }
}

/// `d` in nanoseconds, saturating (a limit of centuries means "no limit" anyway).
pub fn duration_ns(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

tokio::task_local! {
    static CURRENT: QueryLimits;
}

/// Runs `fut` with `limits` as the [`QueryLimits::current`] values.
pub async fn scope<F: Future>(limits: QueryLimits, fut: F) -> F::Output {
    CURRENT.scope(limits, fut).await
}

/// Middleware: serves the request with `limits` as [`QueryLimits::current`].
pub async fn layer(
    axum::extract::State(limits): axum::extract::State<QueryLimits>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    scope(limits, next.run(req)).await
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

    #[tokio::test]
    async fn scope_sets_current_and_defaults_apply_outside() {
        assert_eq!(QueryLimits::current(), QueryLimits::default());
        assert_eq!(
            QueryLimits::current().max_query_length_ns,
            721 * 3600 * 1_000_000_000
        );
        let custom = QueryLimits {
            max_query_length_ns: 5,
            max_entries_limit: 7,
            max_query_series: 9,
            max_series_matchers: 11,
        };
        let seen = scope(custom, async { QueryLimits::current() }).await;
        assert_eq!(seen, custom);
        assert_eq!(QueryLimits::current(), QueryLimits::default());
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
