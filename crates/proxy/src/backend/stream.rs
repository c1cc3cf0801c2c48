//! Admission of a long-lived stream (the live tail's `/select/logsql/tail`)
//! through the breaker and the gate every other call passes.
//!
//! A tail lives up to `tail_max_duration`: holding a gate slot that long
//! would let a few tails starve every query, so the slot is held only while
//! the stream opens (connect and response head), and the open's outcome
//! counts towards the breaker like any call. The open streams themselves
//! are bounded by the tail caps (`--tail-max-concurrent[-total]`).

use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;

use super::breaker::Permit;
use super::{Backend, BackendError, Endpoint};
use crate::telemetry::Outcome;

/// Leave to open one stream; report how it went with [`StreamOpen::finish`].
#[derive(Debug)]
pub struct StreamOpen<'a> {
    backend: &'a Backend,
    name: &'static str,
    permit: Permit,
    _slot: OwnedSemaphorePermit,
    started: Instant,
}

impl Backend {
    /// Waits for leave to open a stream named `name` (the metric label).
    ///
    /// # Errors
    /// [`BackendError::CircuitOpen`] while the breaker is open,
    /// [`BackendError::Overloaded`] when the gate's queue is full.
    pub async fn admit_stream(&self, name: &'static str) -> Result<StreamOpen<'_>, BackendError> {
        let started = Instant::now();
        let refused = |e: BackendError| {
            self.metrics
                .observe_backend(name, Outcome::Refused, started.elapsed());
            e
        };
        let permit = self.breaker.admit().map_err(|open| {
            refused(BackendError::CircuitOpen {
                retry_after: open.retry_after,
            })
        })?;
        let slot = self.gate.enter().await.map_err(|_| {
            refused(BackendError::Overloaded {
                retry_after: Duration::from_secs(1),
            })
        })?;
        self.metrics.set_backend_load(
            self.gate.waiting(),
            self.gate.running(self.opts.concurrency),
        );
        Ok(StreamOpen {
            backend: self,
            name,
            permit,
            _slot: slot,
            started,
        })
    }
}

impl StreamOpen<'_> {
    /// Reports the open's outcome to the breaker and the metrics, and frees the gate slot.
    pub fn finish(self, result: Result<(), &BackendError>) {
        let outcome = match result {
            Ok(()) => Outcome::Ok,
            Err(BackendError::Status { .. }) => Outcome::Status,
            Err(BackendError::Timeout(_)) => Outcome::Timeout,
            Err(BackendError::Body(_) | BackendError::TooLarge { .. }) => Outcome::Body,
            Err(BackendError::Unreachable { .. } | BackendError::Request(_)) => {
                Outcome::Unreachable
            }
            Err(
                BackendError::CircuitOpen { .. }
                | BackendError::Overloaded { .. }
                | BackendError::Unsupported(_),
            ) => Outcome::Refused,
        };
        let b = self.backend;
        b.metrics
            .observe_backend(self.name, outcome, self.started.elapsed());
        self.permit
            // Opening a tail is a query: only health failures count, not a slow start.
            .record(!result.is_err_and(|e| e.is_backend_fault(Endpoint::Query)));
        b.metrics.set_breaker_open(b.breaker.is_open());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendOptions;
    use crate::backend::url::BackendUrl;
    use crate::telemetry::Metrics;

    fn backend(concurrency: usize, queue: usize, failures: u32) -> Backend {
        let mut opts = BackendOptions::with_timeout(Duration::from_secs(5));
        opts.concurrency = concurrency;
        opts.queue = queue;
        opts.breaker_failures = failures;
        opts.breaker_cooldown = Duration::from_secs(60);
        Backend::new(
            BackendUrl {
                authority: "127.0.0.1:1".into(),
                prefix: String::new(),
                https: false,
            },
            opts,
            Metrics::new().unwrap(),
        )
    }

    #[tokio::test]
    async fn opens_hold_a_gate_slot_and_failures_open_the_breaker() {
        let b = backend(1, 0, 2);
        let first = b.admit_stream("tail").await.unwrap();
        assert!(
            matches!(
                b.admit_stream("tail").await.unwrap_err(),
                BackendError::Overloaded { .. }
            ),
            "the only slot is held while opening"
        );
        let down = BackendError::Unreachable {
            authority: "vl".into(),
            reason: "refused".into(),
        };
        first.finish(Err(&down));
        b.admit_stream("tail").await.unwrap().finish(Err(&down));
        assert!(b.is_circuit_open());
        assert!(matches!(
            b.admit_stream("tail").await.unwrap_err(),
            BackendError::CircuitOpen { .. }
        ));
    }

    #[tokio::test]
    async fn a_refused_query_is_not_a_backend_fault() {
        let b = backend(4, 4, 1);
        let bad = BackendError::Status {
            status: http::StatusCode::BAD_REQUEST,
            body: "cannot parse query".into(),
        };
        b.admit_stream("tail").await.unwrap().finish(Err(&bad));
        assert!(!b.is_circuit_open());
        b.admit_stream("tail").await.unwrap().finish(Ok(()));
    }
}
