//! At most N log-query evaluations run at once; the others wait their turn,
//! as queries wait in Loki's frontend queue for one of a querier's
//! `querier.max-concurrent` slots.
//!
//! A log query holds its VictoriaLogs answers, its decoded windows and the
//! answer it writes (thousands of entries, each with its labels) until it
//! is done; under many clients the sum of those, not any one of them, is
//! what grows the process. Metric queries hold series and step values,
//! far less, and are not made to wait: slots cost them rate. Cache hits and
//! coalesced waiters never reach the handler, so they take no slot; waiting
//! is bounded in time by `query_timeout` and in number by `--max-inflight`,
//! like every request.

use std::future::Future;
use std::sync::Arc;

use prometheus::IntGauge;
use tokio::sync::Semaphore;

use crate::telemetry::{GaugeUnit, Metrics};

/// The slots of the process; clones share them.
#[derive(Debug, Clone)]
pub struct Evaluations {
    slots: Option<Arc<Semaphore>>,
    running: IntGauge,
    waiting: IntGauge,
}

impl Evaluations {
    /// `n` slots; 0 lets every evaluation run at once.
    pub fn new(n: usize, metrics: &Metrics) -> Self {
        Self {
            slots: (n > 0).then(|| Arc::new(Semaphore::new(n))),
            running: metrics.evaluations("running"),
            waiting: metrics.evaluations("waiting"),
        }
    }

    /// Runs `evaluation` in a slot, waiting for one first. Dropping the
    /// returned future (the client left, the deadline passed) gives the
    /// place or the slot back.
    pub async fn run<F: Future>(&self, evaluation: F) -> F::Output {
        let _slot = match &self.slots {
            None => None,
            Some(slots) => {
                let _waiting = GaugeUnit::hold(&self.waiting);
                // The semaphore is never closed: acquiring cannot fail.
                slots.acquire().await.ok()
            }
        };
        let _running = GaugeUnit::hold(&self.running);
        evaluation.await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_second_evaluation_waits_for_the_first_slot() {
        let metrics = Metrics::new().unwrap_or_else(|e| panic!("{e}"));
        let gate = Evaluations::new(1, &metrics);
        let (release, held) = tokio::sync::oneshot::channel::<()>();
        let first = tokio::spawn({
            let gate = gate.clone();
            async move { gate.run(async { held.await.ok() }).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(metrics.evaluations("running").get(), 1);
        let second = tokio::spawn({
            let gate = gate.clone();
            async move { gate.run(async { 2 }).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !second.is_finished(),
            "the second waits while the slot is held"
        );
        assert_eq!(metrics.evaluations("waiting").get(), 1);
        release.send(()).ok();
        assert_eq!(first.await.ok().flatten(), Some(()));
        assert_eq!(second.await.ok(), Some(2));
        assert_eq!(metrics.evaluations("running").get(), 0);
        assert_eq!(metrics.evaluations("waiting").get(), 0);
    }

    #[tokio::test]
    async fn a_dropped_evaluation_gives_its_slot_back() {
        let metrics = Metrics::new().unwrap_or_else(|e| panic!("{e}"));
        let gate = Evaluations::new(1, &metrics);
        let held = tokio::spawn({
            let gate = gate.clone();
            async move { gate.run(std::future::pending::<()>()).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        held.abort();
        let next = tokio::time::timeout(Duration::from_secs(5), gate.run(async { 3 })).await;
        assert_eq!(next.ok(), Some(3));
    }

    #[tokio::test]
    async fn zero_slots_means_no_limit() {
        let metrics = Metrics::new().unwrap_or_else(|e| panic!("{e}"));
        let gate = Evaluations::new(0, &metrics);
        let _never = tokio::spawn({
            let gate = gate.clone();
            async move { gate.run(std::future::pending::<()>()).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let next = tokio::time::timeout(Duration::from_secs(5), gate.run(async { 4 })).await;
        assert_eq!(next.ok(), Some(4));
    }
}
