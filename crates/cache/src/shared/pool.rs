//! A small pool of connections per memcached server.
//!
//! memcached answers one request per connection at a time (no
//! multiplexing in the text protocol), so concurrent fills need several
//! connections; idle ones are kept for reuse. Both numbers are bounded:
//! at most `size` connections per server exist at once (a caller beyond
//! that waits for one, inside its operation timeout), and a connection
//! that failed in any way is dropped, never reused.

use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::conn::{Conn, ConnError};

/// The connections of one server.
#[derive(Debug)]
pub(crate) struct Pool {
    addr: String,
    idle: Mutex<Vec<Conn>>,
    slots: Arc<Semaphore>,
}

/// A connection taken from a [`Pool`]; give it back with [`Pool::put`]
/// after a clean operation, or drop it.
#[derive(Debug)]
pub(crate) struct Lease {
    pub(crate) conn: Conn,
    _slot: OwnedSemaphorePermit,
}

impl Pool {
    /// A pool of at most `size` connections to `addr`.
    pub(crate) fn new(addr: String, size: usize) -> Self {
        Self {
            addr,
            idle: Mutex::new(Vec::new()),
            slots: Arc::new(Semaphore::new(size.max(1))),
        }
    }

    /// An idle connection, or a new one once a slot is free.
    pub(crate) async fn take(&self) -> Result<Lease, ConnError> {
        let slot = Arc::clone(&self.slots)
            .acquire_owned()
            .await
            .map_err(|_| ConnError::Protocol("pool closed"))?;
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => Conn::connect(&self.addr).await?,
        };
        Ok(Lease { conn, _slot: slot })
    }

    /// Keeps a connection whose last operation completed cleanly.
    pub(crate) fn put(&self, lease: Lease) {
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(lease.conn);
    }
}
