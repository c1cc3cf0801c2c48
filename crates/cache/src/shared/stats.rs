//! Counters of the shared tier, exported as `lokivl_shared_cache_*`.

use std::sync::atomic::{AtomicU64, Ordering};

/// One counter per outcome of a shared-tier operation.
#[derive(Debug, Default)]
pub(crate) struct SharedCounters {
    pub(crate) hit: AtomicU64,
    pub(crate) miss: AtomicU64,
    pub(crate) stored: AtomicU64,
    pub(crate) error: AtomicU64,
    pub(crate) timeout: AtomicU64,
    pub(crate) skipped: AtomicU64,
    pub(crate) incompatible: AtomicU64,
    pub(crate) too_large: AtomicU64,
}

impl SharedCounters {
    pub(crate) fn bump(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// A copy of the shared tier's counters and its open-circuit gauge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SharedStats {
    /// Reads that found a valid entry.
    pub hit: u64,
    /// Reads that found nothing (or an entry past its writer's expiry).
    pub miss: u64,
    /// Writes the server stored.
    pub stored: u64,
    /// Operations that failed: connection, protocol, a refused write.
    pub error: u64,
    /// Operations that did not finish within `--shared-cache-timeout`.
    pub timeout: u64,
    /// Operations not tried because the server's circuit was open.
    pub skipped: u64,
    /// Reads of an entry written by another lokivl version or format.
    pub incompatible: u64,
    /// Entries over `--shared-cache-max-item-bytes` (or refused by the
    /// server as too large): kept locally only.
    pub too_large: u64,
    /// Servers whose circuit is open now.
    pub open_circuits: u64,
}

impl SharedStats {
    /// The counters with their `outcome` label values, in one place so the
    /// metric and the docs cannot drift apart.
    pub fn outcomes(&self) -> [(&'static str, u64); 8] {
        [
            ("hit", self.hit),
            ("miss", self.miss),
            ("stored", self.stored),
            ("error", self.error),
            ("timeout", self.timeout),
            ("skipped", self.skipped),
            ("incompatible", self.incompatible),
            ("too_large", self.too_large),
        ]
    }
}

impl SharedCounters {
    pub(crate) fn snapshot(&self, open_circuits: u64) -> SharedStats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SharedStats {
            hit: load(&self.hit),
            miss: load(&self.miss),
            stored: load(&self.stored),
            error: load(&self.error),
            timeout: load(&self.timeout),
            skipped: load(&self.skipped),
            incompatible: load(&self.incompatible),
            too_large: load(&self.too_large),
            open_circuits,
        }
    }
}
