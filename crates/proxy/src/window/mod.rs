//! Splitting `query_range` requests (log: [`run`], metric: [`matrix`]) into time windows that are fetched
//! in parallel, cached one by one, and merged into the exact unsplit answer.
//!
//! Dashboards refresh "the last N hours" every few seconds: each refresh
//! moves `start` and `end` a little, so a cache keyed by the whole request
//! never hits. Cut at interval boundaries ([`split`]), all windows but the
//! newest are the same on every refresh; closed ones are kept for the long
//! TTL and only the live edge is asked again ([`run`]). Windows are walked in
//! `direction` order and the walk stops once `limit` entries are collected,
//! so a backward query for the newest 100 lines usually reads one window.
//! Each window is evaluated exactly as an unsplit query over that window
//! into a typed [`engine::answer::LogAnswer`], stored in lokivl's own binary
//! form ([`engine::answer::codec`]), and the typed answers are merged
//! ([`merge`]) before the one encoder writes the body.
//!
//! The live window of a range that ends near now is not evaluated whole on
//! every refresh: a metric window keeps its closed steps as a cache extent
//! (`extent`) and evaluates only the steps after them; a log window is cut
//! at the fresh mark ([`log_extent`]) so its older piece is cached as a
//! closed window. Nothing newer than `now − freshness` is kept for the
//! long TTL.

pub mod bucket;
mod extent;
pub mod fill;
pub mod log_extent;
pub mod matrix;
pub mod merge;
pub mod metric_split;
pub mod run;
pub mod split;
mod task;

use std::time::Duration;

pub use run::{WindowBody, WindowContext, WindowQuery, run};
pub use split::{Window, windows};

/// `--split-queries-by-interval` and `--split-queries-parallelism`.
#[derive(Debug, Clone, clap::Args)]
pub struct WindowFlags {
    /// `query_range` ranges (log and metric) longer than this are cut into windows aligned to it, fetched in parallel and cached one by one (0s: never split).
    #[arg(long, env = "LOKIVL_SPLIT_QUERIES_BY_INTERVAL", default_value = "1h", value_parser = humantime::parse_duration)]
    pub split_queries_by_interval: Duration,
    /// Windows of one request fetched at the same time (the global backend concurrency bound still applies).
    #[arg(long, env = "LOKIVL_SPLIT_QUERIES_PARALLELISM", default_value_t = 4)]
    pub split_queries_parallelism: usize,
}

impl WindowFlags {
    /// The settings these flags describe.
    pub fn settings(&self) -> WindowSettings {
        WindowSettings {
            interval: self.split_queries_by_interval,
            parallelism: self.split_queries_parallelism.max(1),
        }
    }
}

/// How log ranges are split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSettings {
    /// Window length; zero disables splitting.
    pub interval: Duration,
    /// Windows in flight per request (at least 1).
    pub parallelism: usize,
}

impl WindowSettings {
    /// The interval in nanoseconds (0 when splitting is off).
    pub fn interval_ns(&self) -> i64 {
        i64::try_from(self.interval.as_nanos()).unwrap_or(i64::MAX)
    }
}

impl Default for WindowSettings {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(3600),
            parallelism: 4,
        }
    }
}
