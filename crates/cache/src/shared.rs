//! A cache tier shared by lokivl replicas (memcached), behind the
//! in-process cache.
//!
//! Several lokivl replicas behind a load balancer each keep their own
//! in-process cache, so a dashboard refreshed through three replicas would
//! be computed three times. With `--shared-cache memcached://…` a replica
//! that misses locally looks in memcached before asking VictoriaLogs, and
//! writes the closed entries it computes there, as Loki's query frontend
//! keeps results in memcached.
//!
//! - `servers`: the URL and its server list; `jump`: which server holds
//!   a key (jump consistent hash over the sorted list, as dskit's client).
//! - `key`: the memcached key (SHA-256 of every part of the cache key and
//!   lokivl's version); `value`: the versioned header before each body.
//! - `conn`, `pool`, `store`: a small memcached text-protocol client
//!   with a bounded connection pool per server.
//! - `circuit`: a server failing three times in a row is skipped for a
//!   while; `tier`: the rule of what is shared, the per-operation timeout
//!   and the counters. The tier never returns an error: a slow or dead
//!   memcached only costs the timeout (or nothing, once its circuit is
//!   open), and the answer comes from VictoriaLogs.
//!
//! Why a client of our own: the `memcache` crate is blocking (an r2d2 pool
//! of `std` sockets) and enables OpenSSL by default, and `async-memcached`
//! drives one connection with no pool and no multi-server hashing; the
//! subset used here (`get`, `set`) is small, and owning it lets every read
//! be bounded.

mod circuit;
mod conn;
mod jump;
pub(crate) mod key;
mod pool;
mod servers;
mod stats;
mod store;
mod tier;
mod value;

pub use servers::{Servers, ServersError};
pub use stats::SharedStats;
pub use tier::{DEFAULT_POOL_SIZE, SharedConfig, SharedTier};

#[cfg(test)]
mod tests;
