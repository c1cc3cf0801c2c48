//! When blocking work gives up: the request's deadline (Loki's
//! `query_timeout`) passed, or nobody waits for its result any more.
//!
//! The admission layer answers 504 at the deadline by dropping the handler,
//! but work on the blocking pool (and a cache fill, which outlives its first
//! caller by design) is not dropped with it: it polls a [`Stop`] every
//! [`CHECK_EVERY`] rows and ends with [`Stopped`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Rows processed between two [`Stop::check`]s: a clock read per 1024 rows
/// costs nothing measurable, and even slow rows (a template per line) reach
/// the next check within milliseconds.
pub const CHECK_EVERY: usize = 1024;

/// The instant a request must be answered by, set by the admission layer
/// (`server::protect`) as a request extension; handlers pass it to the work
/// they start, so that work outliving the handler ends too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Option<Instant>,
    timeout: Duration,
}

impl Deadline {
    /// No deadline (tests, the live tail, embedding without the admission layer).
    pub const NONE: Self = Self {
        at: None,
        timeout: Duration::ZERO,
    };

    /// `timeout` from now (a timeout too long to represent means none).
    pub fn after(timeout: Duration) -> Self {
        Self {
            at: Instant::now().checked_add(timeout),
            timeout,
        }
    }

    /// The deadline of a request, [`Deadline::NONE`] when it has none.
    pub fn of(ext: Option<axum::Extension<Self>>) -> Self {
        ext.map_or(Self::NONE, |e| e.0)
    }

    /// The instant, if any.
    pub fn instant(&self) -> Option<Instant> {
        self.at
    }

    /// Whether the deadline has passed.
    pub fn passed(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
    }

    /// What work stopped by this deadline ends with.
    pub fn stopped(&self) -> Stopped {
        Stopped(self.timeout)
    }
}

/// Polled by blocking work: stop once the deadline passed or the caller left.
#[derive(Debug, Clone)]
pub struct Stop {
    deadline: Deadline,
    abandoned: Arc<AtomicBool>,
}

impl Stop {
    /// A stop that only the deadline triggers.
    pub fn at(deadline: Deadline) -> Self {
        Self {
            deadline,
            abandoned: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A stop that never triggers (tests, benches).
    pub fn never() -> Self {
        Self::at(Deadline::NONE)
    }

    /// A guard that triggers this stop when dropped (the awaiting future was
    /// dropped: client gone, or the admission layer's timeout fired).
    pub fn abandon_on_drop(&self) -> AbandonOnDrop {
        AbandonOnDrop(Arc::clone(&self.abandoned))
    }

    /// `Err` once the work should end.
    ///
    /// # Errors
    /// [`Stopped`] past the deadline or after the caller left.
    pub fn check(&self) -> Result<(), Stopped> {
        if self.abandoned.load(Ordering::Relaxed) || self.deadline.passed() {
            return Err(self.deadline.stopped());
        }
        Ok(())
    }

    /// [`Stop::check`] on every [`CHECK_EVERY`]th row `i` (counting from 0).
    ///
    /// # Errors
    /// As [`Stop::check`].
    #[inline]
    pub fn every(&self, i: usize) -> Result<(), Stopped> {
        if i.is_multiple_of(CHECK_EVERY) {
            self.check()
        } else {
            Ok(())
        }
    }
}

/// Triggers a [`Stop`] when dropped.
#[derive(Debug)]
pub struct AbandonOnDrop(Arc<AtomicBool>);

impl Drop for AbandonOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Work ended at the request's deadline (or after its caller left, when
/// nobody reads the error): the client gets Loki's `query_timeout` answer,
/// 504 with the text of [`crate::error::ApiError::QueryTimeout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request's deadline passed (query_timeout: {0:?})")]
pub struct Stopped(pub Duration);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passed_deadline_stops_with_the_timeout() {
        let d = Deadline::after(Duration::ZERO);
        let stop = Stop::at(d);
        assert_eq!(stop.check(), Err(Stopped(Duration::ZERO)));
        let e: crate::error::ApiError = Stopped(Duration::from_secs(60)).into();
        assert_eq!(e.status(), http::StatusCode::GATEWAY_TIMEOUT);
        assert!(e.to_string().starts_with("request timed out"), "{e}");
    }

    #[test]
    fn dropping_the_guard_stops_and_rows_between_checks_pass() {
        let stop = Stop::at(Deadline::after(Duration::from_secs(3600)));
        assert!(stop.check().is_ok());
        let guard = stop.abandon_on_drop();
        assert!(stop.every(1).is_ok());
        drop(guard);
        assert!(stop.every(1).is_ok(), "only every CHECK_EVERY rows");
        assert!(stop.every(CHECK_EVERY).is_err());
        assert!(Stop::never().check().is_ok());
        assert!(!Deadline::NONE.passed());
    }
}
