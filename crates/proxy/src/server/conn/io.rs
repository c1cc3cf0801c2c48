//! The socket side of the connection bounds: read and write deadlines.
//!
//! hyper's own `header_read_timeout` also runs while a keep-alive connection
//! waits for its next request, so it cannot give a short head deadline and
//! a long idle one at once. This wrapper does both, as Go's
//! `ReadHeaderTimeout` and `IdleTimeout` do:
//! - before a request (from accept, or from the first byte after an idle
//!   period) the head must be complete within `header_read_timeout`; past
//!   it reads fail and hyper drops the connection without an answer;
//! - between requests the next one must begin within `idle_timeout`; past
//!   it reads end (EOF) and hyper closes the connection quietly;
//! - while a request is served, or after a WebSocket upgrade, reads have no
//!   deadline (`query_timeout` and the tail's own bounds apply);
//! - a write (or flush) the socket does not accept for `write_timeout`
//!   fails, whatever the phase: a client that stops reading is dropped.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};

use super::ConnLimits;
use super::activity::{Activity, ReadDeadline};

/// A socket under the connection deadlines, holding its connection slot.
#[derive(Debug)]
pub struct Watched<IO> {
    io: IO,
    activity: Activity,
    limits: ConnLimits,
    read_timer: Timer,
    write_timer: Timer,
    /// The listener's connection slot (`--http-max-connections`), freed with
    /// the socket: an upgraded tail keeps it after hyper hands the socket on.
    _slot: Option<OwnedSemaphorePermit>,
}

/// A lazily allocated sleep with the deadline it is set to.
#[derive(Debug, Default)]
struct Timer {
    sleep: Option<Pin<Box<Sleep>>>,
    armed: Option<Instant>,
}

impl Timer {
    /// Whether `deadline` has passed (registering the waker if not).
    fn expired(&mut self, deadline: Instant, cx: &mut Context<'_>) -> bool {
        if self.armed != Some(deadline) {
            match &mut self.sleep {
                Some(s) => s.as_mut().reset(deadline),
                None => self.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
            self.armed = Some(deadline);
        }
        self.sleep
            .as_mut()
            .is_some_and(|s| s.as_mut().poll(cx).is_ready())
    }

    fn disarm(&mut self) {
        self.armed = None;
    }
}

impl<IO> Watched<IO> {
    /// Wraps `io`, accepted just now, with the connection's `activity` and its `slot`.
    pub fn new(
        io: IO,
        activity: Activity,
        limits: ConnLimits,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Self {
        Self {
            io,
            activity,
            limits,
            read_timer: Timer::default(),
            write_timer: Timer::default(),
            _slot: slot,
        }
    }

    /// A write that could not proceed: fails once it has stalled `write_timeout`.
    fn stalled<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let deadline = match self.write_timer.armed {
            Some(d) => d,
            None => Instant::now() + self.limits.write_timeout,
        };
        if self.write_timer.expired(deadline, cx) {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "client did not read within the write timeout",
            )));
        }
        Poll::Pending
    }

    fn wrote<T>(&mut self, r: io::Result<T>) -> Poll<io::Result<T>> {
        self.write_timer.disarm();
        Poll::Ready(r)
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Watched<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.activity.bytes_read();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let limits = this.limits;
                let Some(deadline) = this.activity.read_deadline(
                    limits.header_read_timeout,
                    limits.idle_timeout,
                    cx.waker(),
                ) else {
                    this.read_timer.disarm();
                    return Poll::Pending;
                };
                let (at, idle) = match deadline {
                    ReadDeadline::Head(at) => (at, false),
                    ReadDeadline::Idle(at) => (at, true),
                };
                if !this.read_timer.expired(at, cx) {
                    return Poll::Pending;
                }
                if idle {
                    // EOF: hyper closes an idle connection quietly.
                    return Poll::Ready(Ok(()));
                }
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "request head not received within the header read timeout",
                )))
            }
        }
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Watched<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.io).poll_write(cx, buf) {
            Poll::Ready(r) => self.wrote(r),
            Poll::Pending => self.stalled(cx),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.io).poll_write_vectored(cx, bufs) {
            Poll::Ready(r) => self.wrote(r),
            Poll::Pending => self.stalled(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.io).poll_flush(cx) {
            Poll::Ready(r) => self.wrote(r),
            Poll::Pending => self.stalled(cx),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = match Pin::new(&mut self.io).poll_shutdown(cx) {
            Poll::Ready(r) => r,
            Poll::Pending => ready!(self.stalled(cx)),
        };
        self.wrote(r)
    }
}
