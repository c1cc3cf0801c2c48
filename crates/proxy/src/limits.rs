//! Request-level limits: what one client or tenant may ask of lokivl.
//!
//! Backend-side bounds (slots, queue, answer size, breaker) live with the
//! client in [`crate::backend`]; these are checked before a handler runs.

pub mod evaluations;
pub mod rate;

use std::time::Duration;

/// Default of `--max-concurrent-log-queries`: at 50 clients it lowers the
/// peak memory of long log ranges and costs no rate (docs/benchmarks.md).
pub const DEFAULT_MAX_CONCURRENT_LOG_QUERIES: usize = 16;

/// Limits enforced by the server layer, each set by a flag (see `docs/configuration.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Loki's `query_timeout`: the whole request, queueing included (504 past it).
    pub query_timeout: Duration,
    /// Requests served at once; more are refused with 429 (0 = unlimited).
    pub max_inflight: usize,
    /// Log-query evaluations running at once; more wait (0 = unlimited).
    pub max_concurrent_log_queries: usize,
    /// Sustained requests per second per tenant (0 = unlimited).
    pub tenant_rate: f64,
    /// Requests a tenant may burst above its rate.
    pub tenant_burst: u32,
    /// Longest request URL (path plus query), in bytes; Drilldown needs 64 KiB.
    pub max_url_bytes: usize,
    /// Largest sum of header names and values, in bytes.
    pub max_header_bytes: usize,
    /// Largest request body (forms, pushes), in bytes.
    pub max_body_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            query_timeout: Duration::from_secs(60),
            max_inflight: 1024,
            max_concurrent_log_queries: DEFAULT_MAX_CONCURRENT_LOG_QUERIES,
            tenant_rate: 0.0,
            tenant_burst: 100,
            max_url_bytes: 64 * 1024,
            max_header_bytes: 64 * 1024,
            max_body_bytes: 16 << 20,
        }
    }
}
