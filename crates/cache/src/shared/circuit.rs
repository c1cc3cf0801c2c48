//! Per-server circuit: a server that failed [`FAILURES`] times in a row is
//! skipped for a while, so a dead memcached costs no timeout per request.
//!
//! After the open period the next operation tries the server again; one
//! more failure opens the circuit again at once, a success closes it.
//! A server's refusal (`SERVER_ERROR`, `NOT_STORED`) is an answer from a
//! healthy server and counts as a success here.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures in a row that open the circuit.
pub(crate) const FAILURES: u32 = 3;

/// The circuit of one server.
#[derive(Debug)]
pub(crate) struct Circuit {
    period: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    failures: u32,
    open_until: Option<Instant>,
}

impl Circuit {
    /// A closed circuit that stays open `period` once opened.
    pub(crate) fn new(period: Duration) -> Self {
        Self {
            period,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether an operation may try the server at `now`.
    pub(crate) fn allows(&self, now: Instant) -> bool {
        self.state().open_until.is_none_or(|until| now >= until)
    }

    /// Whether the circuit is open at `now` (the gauge).
    pub(crate) fn is_open(&self, now: Instant) -> bool {
        !self.allows(now)
    }

    /// The server answered.
    pub(crate) fn success(&self) {
        let mut s = self.state();
        s.failures = 0;
        s.open_until = None;
    }

    /// The server failed or timed out at `now`.
    pub(crate) fn failure(&self, now: Instant) {
        let mut s = self.state();
        s.failures = s.failures.saturating_add(1);
        if s.failures >= FAILURES {
            s.open_until = Some(now + self.period);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_three_failures_and_closes_after_the_period() {
        let c = Circuit::new(Duration::from_secs(10));
        let t0 = Instant::now();
        c.failure(t0);
        c.failure(t0);
        assert!(c.allows(t0), "two failures keep it closed");
        c.failure(t0);
        assert!(!c.allows(t0));
        assert!(c.is_open(t0 + Duration::from_millis(9_999)));
        assert!(c.allows(t0 + Duration::from_secs(10)));
        // The probe after the period fails: open again at once.
        let t1 = t0 + Duration::from_secs(10);
        c.failure(t1);
        assert!(!c.allows(t1));
        assert!(c.allows(t1 + Duration::from_secs(10)));
        // A success closes it and resets the count.
        c.success();
        c.failure(t1);
        c.failure(t1);
        assert!(c.allows(t1));
    }
}
