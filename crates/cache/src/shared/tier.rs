//! The shared tier: which entries go there, and every operation bounded
//! in time, counted, and never an error to the caller.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;

use super::circuit::Circuit;
use super::conn::SetReply;
use super::jump::jump;
use super::key::SharedKey;
use super::servers::Servers;
use super::stats::{SharedCounters, SharedStats};
use super::store::{Memcached, Store};
use super::value::{self, Decoded};
use crate::lifetime::Lifetimes;

/// memcached's longest relative expiry; larger numbers are read as an
/// absolute Unix time.
const MAX_RELATIVE_EXPIRY: u64 = 30 * 24 * 3600;

/// Connections per memcached server.
pub const DEFAULT_POOL_SIZE: usize = 16;

/// How the shared tier is reached and bounded (`--shared-cache*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedConfig {
    /// The memcached servers.
    pub servers: Servers,
    /// Deadline of one get or set, connecting included.
    pub timeout: Duration,
    /// How long a server that failed three times in a row is skipped.
    pub circuit_open: Duration,
    /// Largest value (header plus body) written or read; larger entries stay local.
    pub max_item_bytes: usize,
    /// Connections per server at most.
    pub pool_size: usize,
}

/// A cache tier shared by lokivl replicas, behind the in-process cache.
///
/// Only closed entries go here: those whose TTL is the long TTL of
/// [`Lifetimes`] (and differs from the live TTL), so an answer touching the
/// live edge is never served by another replica. Cloning is cheap.
#[derive(Clone)]
pub struct SharedTier(Arc<Inner>);

struct Inner {
    store: Box<dyn Store>,
    circuits: Vec<Circuit>,
    counters: SharedCounters,
    timeout: Duration,
    max_item_bytes: usize,
    lifetimes: Lifetimes,
}

impl std::fmt::Debug for SharedTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedTier")
            .field("servers", &self.0.circuits.len())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Seconds since the Unix epoch (the expiry written into values).
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl SharedTier {
    /// The tier on the memcached servers of `config`, sharing entries
    /// whose TTL is the long TTL of `lifetimes`. Nothing connects yet.
    pub fn memcached(config: &SharedConfig, lifetimes: Lifetimes) -> Self {
        Self::with_store(
            Box::new(Memcached::new(&config.servers, config.pool_size)),
            config,
            lifetimes,
        )
    }

    pub(crate) fn with_store(
        store: Box<dyn Store>,
        config: &SharedConfig,
        lifetimes: Lifetimes,
    ) -> Self {
        let circuits = (0..store.servers().max(1))
            .map(|_| Circuit::new(config.circuit_open))
            .collect();
        Self(Arc::new(Inner {
            store,
            circuits,
            counters: SharedCounters::default(),
            timeout: config.timeout,
            max_item_bytes: config.max_item_bytes,
            lifetimes,
        }))
    }

    /// Whether an entry kept for `ttl` is closed, and so shared: its TTL is
    /// the long TTL and cannot be mistaken for the live one.
    pub fn is_closed(&self, ttl: Duration) -> bool {
        let l = &self.0.lifetimes;
        !ttl.is_zero() && ttl == l.ttl && ttl != l.live_ttl
    }

    /// The counters and the open-circuit gauge.
    pub fn stats(&self) -> SharedStats {
        let now = Instant::now();
        let open = self.0.circuits.iter().filter(|c| c.is_open(now)).count();
        self.0
            .counters
            .snapshot(u64::try_from(open).unwrap_or(u64::MAX))
    }

    /// The server of `key` and whether its circuit lets an operation through.
    fn server(&self, key: &SharedKey) -> Option<usize> {
        let server = jump(key.route(), self.0.circuits.len());
        if self.0.circuits[server].allows(Instant::now()) {
            Some(server)
        } else {
            SharedCounters::bump(&self.0.counters.skipped);
            None
        }
    }

    /// Counts a failed or timed-out operation on `server`.
    fn failed(&self, server: usize, timed_out: bool) {
        self.0.circuits[server].failure(Instant::now());
        let c = &self.0.counters;
        SharedCounters::bump(if timed_out { &c.timeout } else { &c.error });
    }

    /// The shared entry of `key` with the lifetime its writer gave it left,
    /// or `None` (absent, expired, incompatible, or the tier failed: all
    /// counted).
    pub(crate) async fn get(&self, key: &SharedKey) -> Option<(Bytes, Duration)> {
        let server = self.server(key)?;
        let inner = &self.0;
        let read = inner.store.get(server, key.as_str(), inner.max_item_bytes);
        let raw = match tokio::time::timeout(inner.timeout, read).await {
            Err(_) => {
                self.failed(server, true);
                return None;
            }
            Ok(Err(_)) => {
                self.failed(server, false);
                return None;
            }
            Ok(Ok(raw)) => raw,
        };
        inner.circuits[server].success();
        let c = &inner.counters;
        let Some(raw) = raw else {
            SharedCounters::bump(&c.miss);
            return None;
        };
        match value::decode(Bytes::from(raw), unix_now()) {
            Decoded::Fresh { body, remaining } => {
                SharedCounters::bump(&c.hit);
                Some((body, remaining))
            }
            Decoded::Expired => {
                SharedCounters::bump(&c.miss);
                None
            }
            Decoded::Incompatible => {
                SharedCounters::bump(&c.incompatible);
                None
            }
        }
    }

    /// Writes `body` for `key` in a spawned task when the entry is closed
    /// ([`Self::is_closed`]), so the caller never waits for memcached.
    pub(crate) fn spawn_put(&self, key: SharedKey, body: Bytes, ttl: Duration) {
        if !self.is_closed(ttl) {
            return;
        }
        let tier = self.clone();
        tokio::spawn(async move { tier.put(key, &body, ttl).await });
    }

    /// Writes one closed entry; every outcome is counted, none returned.
    pub(crate) async fn put(&self, key: SharedKey, body: &[u8], ttl: Duration) {
        let inner = &self.0;
        let c = &inner.counters;
        let secs = ttl.as_secs().clamp(1, MAX_RELATIVE_EXPIRY);
        let header = value::header(unix_now().saturating_add(secs));
        if header.len().saturating_add(body.len()) > inner.max_item_bytes {
            SharedCounters::bump(&c.too_large);
            return;
        }
        let Some(server) = self.server(&key) else {
            return;
        };
        let exptime = u32::try_from(secs).unwrap_or(u32::MAX);
        let write = inner
            .store
            .set(server, key.as_str(), exptime, [&header, body]);
        match tokio::time::timeout(inner.timeout, write).await {
            Err(_) => self.failed(server, true),
            Ok(Err(_)) => self.failed(server, false),
            Ok(Ok(reply)) => {
                // The server answered: it is healthy, whatever it said.
                inner.circuits[server].success();
                SharedCounters::bump(match reply {
                    SetReply::Stored => &c.stored,
                    SetReply::TooLarge => &c.too_large,
                    SetReply::Refused => &c.error,
                });
            }
        }
    }
}
