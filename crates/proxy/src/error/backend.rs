//! Why a VictoriaLogs call failed.
//!
//! It lives with the errors, not with the client, and imports nothing of
//! lokivl: `crate::error` keeps a [`BackendError`] as the source of an
//! answer without depending on the client, and the client (a layer above)
//! re-exports it.

use std::time::Duration;

use http::StatusCode;

/// Why a backend call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// Connecting failed (refused, reset, DNS).
    #[error("cannot reach VictoriaLogs at {authority}: {reason}")]
    Unreachable {
        /// `host:port`.
        authority: String,
        /// The connection error.
        reason: String,
    },
    /// The whole call took longer than the configured deadline.
    #[error("VictoriaLogs timeout after {0:?}")]
    Timeout(Duration),
    /// VictoriaLogs answered with a non-2xx status.
    #[error("VictoriaLogs answered {status}: {body}")]
    Status {
        /// The status.
        status: StatusCode,
        /// The (truncated) body, VictoriaLogs' error text.
        body: String,
    },
    /// The body broke off mid-way.
    #[error("reading the VictoriaLogs answer failed: {0}")]
    Body(String),
    /// The request could not even be built (a defect).
    #[error("building the VictoriaLogs request failed: {0}")]
    Request(String),
    /// The answer was larger than `--backend-max-response-bytes`.
    #[error("the VictoriaLogs answer exceeds {limit} bytes (--backend-max-response-bytes)")]
    TooLarge {
        /// The configured limit.
        limit: usize,
        /// The answer's size when VictoriaLogs declared it (`Content-Length`).
        declared: Option<u64>,
    },
    /// The circuit breaker is open after repeated failures.
    #[error("VictoriaLogs is failing; calls are paused for {}s", .retry_after.as_secs())]
    CircuitOpen {
        /// When the next probe may run.
        retry_after: Duration,
    },
    /// Every backend slot is busy and the wait queue is full.
    #[error("too many concurrent calls to VictoriaLogs; wait queue full")]
    Overloaded {
        /// A hint for `Retry-After`.
        retry_after: Duration,
    },
    /// The call cannot be made for this request (e.g. a stats call over several tenants): 400.
    #[error("{0}")]
    Unsupported(String),
}
