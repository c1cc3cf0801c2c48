//! A circuit breaker in front of VictoriaLogs.
//!
//! After `threshold` consecutive failures the breaker opens: calls fail at once
//! (503 with `Retry-After`) instead of piling up on a dead backend and holding
//! client connections for a whole timeout each. After `cooldown` one probe call
//! is let through (half-open); its success closes the breaker, its failure
//! opens it for another `cooldown`.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

/// The breaker's state, shared by every clone of the backend handle.
#[derive(Debug, Clone)]
pub struct Breaker {
    inner: Arc<Mutex<State>>,
    threshold: u32,
    cooldown: Duration,
}

#[derive(Debug)]
struct State {
    consecutive_failures: u32,
    /// `Some` while open: calls are refused until this instant.
    open_until: Option<Instant>,
    /// A half-open probe is in flight; other calls are refused meanwhile.
    probing: bool,
}

/// The breaker refused a call; retry after the given time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Open {
    /// Time until the next probe may run (at least one second for `Retry-After`).
    pub retry_after: Duration,
}

/// Permission to make one call; report its outcome with [`Permit::record`].
///
/// Dropping it unreported (the client went away) frees a probe slot without
/// counting a failure: a cancelled call says nothing about the backend.
#[derive(Debug)]
pub struct Permit {
    breaker: Breaker,
    probe: bool,
    reported: bool,
}

impl Breaker {
    /// A closed breaker; `threshold` 0 disables it.
    pub fn new(threshold: u32, cooldown: Duration) -> Self {
        Self {
            inner: Arc::new(Mutex::new(State {
                consecutive_failures: 0,
                open_until: None,
                probing: false,
            })),
            threshold,
            cooldown,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere; the counters stay usable.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Asks to make a call now.
    ///
    /// # Errors
    /// [`Open`] while the breaker is open or a half-open probe is running.
    pub fn admit(&self) -> Result<Permit, Open> {
        if self.threshold == 0 {
            return Ok(self.permit(false));
        }
        let now = Instant::now();
        let mut st = self.lock();
        match st.open_until {
            None => Ok(self.permit(false)),
            Some(until) if now < until => Err(Open {
                retry_after: round_up(until - now),
            }),
            Some(_) if st.probing => Err(Open {
                retry_after: round_up(self.cooldown),
            }),
            Some(_) => {
                st.probing = true;
                Ok(self.permit(true))
            }
        }
    }

    fn permit(&self, probe: bool) -> Permit {
        Permit {
            breaker: self.clone(),
            probe,
            reported: false,
        }
    }

    /// Whether calls are currently refused (for the metrics gauge and `/ready`).
    pub fn is_open(&self) -> bool {
        self.lock().open_until.is_some()
    }
}

impl Permit {
    /// Reports whether the call reached a healthy backend.
    pub fn record(mut self, healthy: bool) {
        self.reported = true;
        let b = &self.breaker;
        if b.threshold == 0 {
            return;
        }
        let mut st = b.lock();
        if self.probe {
            st.probing = false;
        }
        if healthy {
            st.consecutive_failures = 0;
            st.open_until = None;
        } else {
            st.consecutive_failures = st.consecutive_failures.saturating_add(1);
            if self.probe || st.consecutive_failures >= b.threshold {
                st.open_until = Some(Instant::now() + b.cooldown);
            }
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if self.probe && !self.reported {
            self.breaker.lock().probing = false;
        }
    }
}

/// `Retry-After` is whole seconds; never advertise 0.
fn round_up(d: Duration) -> Duration {
    Duration::from_secs(d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn opens_after_threshold_probes_and_closes() {
        let b = Breaker::new(3, Duration::from_secs(2));
        for _ in 0..2 {
            b.admit().unwrap().record(false);
        }
        assert!(!b.is_open());
        b.admit().unwrap().record(false);
        assert!(b.is_open());
        let open = b.admit().unwrap_err();
        assert_eq!(open.retry_after, Duration::from_secs(2));

        tokio::time::advance(Duration::from_millis(2100)).await;
        let probe = b.admit().unwrap();
        // Only one probe at a time.
        assert!(b.admit().is_err());
        probe.record(true);
        assert!(!b.is_open());
        assert!(b.admit().is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn failed_probe_reopens_and_dropped_probe_frees_the_slot() {
        let b = Breaker::new(1, Duration::from_secs(1));
        b.admit().unwrap().record(false);
        tokio::time::advance(Duration::from_secs(1)).await;
        b.admit().unwrap().record(false);
        assert!(b.admit().is_err());
        tokio::time::advance(Duration::from_secs(1)).await;
        drop(b.admit().unwrap());
        // The cancelled probe did not count; a new probe may run.
        b.admit().unwrap().record(true);
        assert!(!b.is_open());
    }

    #[test]
    fn success_resets_the_count_and_zero_disables() {
        let b = Breaker::new(2, Duration::from_secs(1));
        b.admit().unwrap().record(false);
        b.admit().unwrap().record(true);
        b.admit().unwrap().record(false);
        assert!(!b.is_open());
        let off = Breaker::new(0, Duration::from_secs(1));
        for _ in 0..10 {
            off.admit().unwrap().record(false);
        }
        assert!(off.admit().is_ok());
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(round_up(Duration::from_millis(1)), Duration::from_secs(1));
        assert_eq!(
            round_up(Duration::from_millis(1500)),
            Duration::from_secs(2)
        );
        assert_eq!(round_up(Duration::ZERO), Duration::from_secs(1));
    }
}
