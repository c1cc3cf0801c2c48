//! What one connection is doing, shared between its socket ([`super::io::Watched`])
//! and its service ([`super::service::Tracked`]).
//!
//! The socket alone cannot tell a client that trickles a request head from a
//! handler that takes a minute: both read nothing. The service marks the
//! time a request is being served (busy), and a WebSocket upgrade, so the
//! socket applies the head deadline only before a request and the idle
//! deadline only between requests.

use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use std::time::Duration;

use tokio::time::Instant;

/// The shared state of one connection; clones share it.
#[derive(Debug, Clone)]
pub struct Activity {
    inner: Arc<Mutex<State>>,
}

#[derive(Debug)]
struct State {
    /// A request is being served (head parsed, response not yet fully handed over).
    busy: bool,
    /// The connection was upgraded (the live tail): HTTP deadlines no longer apply.
    upgraded: bool,
    /// When the current request head began (accept time on a new connection).
    head_started: Option<Instant>,
    /// When the last response was handed over.
    idle_since: Instant,
    /// The socket's reader, parked while busy; woken when the request ends
    /// so the idle deadline starts.
    reader: Option<Waker>,
}

/// Which deadline a reading socket is under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadDeadline {
    /// A request head must be complete by then.
    Head(Instant),
    /// The next request must begin by then.
    Idle(Instant),
}

impl Activity {
    /// A new connection: its first head is due `header_timeout` after accept.
    pub fn new() -> Self {
        let now = Instant::now();
        Self {
            inner: Arc::new(Mutex::new(State {
                busy: false,
                upgraded: false,
                head_started: Some(now),
                idle_since: now,
                reader: None,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Bytes arrived: between requests they start a head.
    pub fn bytes_read(&self) {
        let mut s = self.lock();
        if !s.busy && !s.upgraded && s.head_started.is_none() {
            s.head_started = Some(Instant::now());
        }
    }

    /// The deadline for a read that found nothing, or `None` while a request
    /// is served or after an upgrade (then `waker` is kept, to be woken when
    /// the request ends).
    pub fn read_deadline(
        &self,
        header: Duration,
        idle: Duration,
        waker: &Waker,
    ) -> Option<ReadDeadline> {
        let mut s = self.lock();
        if s.upgraded {
            return None;
        }
        if s.busy {
            match &mut s.reader {
                Some(w) => w.clone_from(waker),
                None => s.reader = Some(waker.clone()),
            }
            return None;
        }
        Some(match s.head_started {
            Some(t) => ReadDeadline::Head(t + header),
            None => ReadDeadline::Idle(s.idle_since + idle),
        })
    }

    /// A request head was parsed and handed to the service.
    pub fn request_started(&self) -> Busy {
        let mut s = self.lock();
        s.busy = true;
        s.head_started = None;
        Busy(self.clone())
    }

    /// The response switched protocols: the socket is the tail's now.
    pub fn upgraded(&self) {
        self.lock().upgraded = true;
    }

    fn request_ended(&self) {
        let waker = {
            let mut s = self.lock();
            s.busy = false;
            s.idle_since = Instant::now();
            s.reader.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl Default for Activity {
    fn default() -> Self {
        Self::new()
    }
}

/// A request being served; dropping it (response body finished or
/// abandoned) makes the connection idle.
#[derive(Debug)]
pub struct Busy(Activity);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waker() -> Waker {
        std::task::Waker::noop().clone()
    }

    #[tokio::test]
    async fn head_then_busy_then_idle_then_head() {
        let (h, i) = (Duration::from_secs(10), Duration::from_secs(120));
        let a = Activity::new();
        assert!(matches!(
            a.read_deadline(h, i, &waker()),
            Some(ReadDeadline::Head(_))
        ));
        let busy = a.request_started();
        assert_eq!(a.read_deadline(h, i, &waker()), None);
        drop(busy);
        let Some(ReadDeadline::Idle(t)) = a.read_deadline(h, i, &waker()) else {
            panic!("idle after the response")
        };
        assert!(t > Instant::now() + Duration::from_secs(60));
        a.bytes_read();
        assert!(matches!(
            a.read_deadline(h, i, &waker()),
            Some(ReadDeadline::Head(_))
        ));
        let _busy = a.request_started();
        a.upgraded();
        drop(_busy);
        assert_eq!(
            a.read_deadline(h, i, &waker()),
            None,
            "no HTTP deadline after an upgrade"
        );
    }
}
