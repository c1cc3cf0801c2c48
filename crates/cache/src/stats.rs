//! Counters the proxy exports as metrics.

use std::sync::atomic::{AtomicU64, Ordering};

/// Monotonic counters updated on the request path; plain atomics so the cache
/// needs no metrics library and the proxy can export them however it likes.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) hits: AtomicU64,
    pub(crate) misses: AtomicU64,
    pub(crate) coalesced: AtomicU64,
    pub(crate) shared_hits: AtomicU64,
    pub(crate) fetch_errors: AtomicU64,
    pub(crate) evictions: AtomicU64,
    pub(crate) expirations: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A point-in-time copy of the cache's counters and gauges.
///
/// `entries` and `weighted_bytes` are eventually consistent: moka applies
/// pending inserts and evictions lazily, piggybacking on later cache calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Calls answered from a stored entry without waiting.
    pub hits: u64,
    /// Calls that ran their own fetch (one per fill).
    pub misses: u64,
    /// Calls that found a fill for their key already running and waited for
    /// it instead of fetching.
    pub coalesced: u64,
    /// Local misses answered from the shared tier (another replica's entry).
    pub shared_hits: u64,
    /// Fills whose fetch returned an error (or whose task panicked).
    pub fetch_errors: u64,
    /// Entries removed to keep the total under the byte bound (including new
    /// entries the admission policy refused).
    pub evictions: u64,
    /// Entries removed because their TTL ran out.
    pub expirations: u64,
    /// Entries currently stored.
    pub entries: u64,
    /// Bytes currently stored: bodies plus keys.
    pub weighted_bytes: u64,
}

impl Counters {
    pub(crate) fn snapshot(&self, entries: u64, weighted_bytes: u64) -> Stats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Stats {
            hits: load(&self.hits),
            misses: load(&self.misses),
            coalesced: load(&self.coalesced),
            shared_hits: load(&self.shared_hits),
            fetch_errors: load(&self.fetch_errors),
            evictions: load(&self.evictions),
            expirations: load(&self.expirations),
            entries,
            weighted_bytes,
        }
    }
}
