//! Where the tier keeps values: memcached servers, or a fake in tests.

use std::future::Future;
use std::pin::Pin;

use super::conn::{ConnError, SetReply};
use super::pool::Pool;
use super::servers::Servers;

/// A boxed, sendable future (the store is used as a trait object).
pub(crate) type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A set of servers that get and set values by key. The tier picks the
/// server, bounds the time and counts the outcome; a store only talks.
pub(crate) trait Store: Send + Sync + 'static {
    /// How many servers there are (at least one).
    fn servers(&self) -> usize;

    /// The value of `key` on `server`, or `None`; an error for a value over `max` bytes.
    fn get<'a>(
        &'a self,
        server: usize,
        key: &'a str,
        max: usize,
    ) -> BoxFut<'a, Result<Option<Vec<u8>>, ConnError>>;

    /// Stores the concatenated `parts` under `key` on `server` for `exptime` seconds.
    fn set<'a>(
        &'a self,
        server: usize,
        key: &'a str,
        exptime: u32,
        parts: [&'a [u8]; 2],
    ) -> BoxFut<'a, Result<SetReply, ConnError>>;
}

/// memcached servers, one connection pool each.
#[derive(Debug)]
pub(crate) struct Memcached {
    pools: Vec<Pool>,
}

impl Memcached {
    /// Pools of at most `pool_size` connections to each of `servers`;
    /// nothing connects until the first operation.
    pub(crate) fn new(servers: &Servers, pool_size: usize) -> Self {
        Self {
            pools: servers
                .addrs()
                .iter()
                .map(|a| Pool::new(a.clone(), pool_size))
                .collect(),
        }
    }
}

impl Store for Memcached {
    fn servers(&self) -> usize {
        self.pools.len()
    }

    fn get<'a>(
        &'a self,
        server: usize,
        key: &'a str,
        max: usize,
    ) -> BoxFut<'a, Result<Option<Vec<u8>>, ConnError>> {
        Box::pin(async move {
            let pool = &self.pools[server];
            let mut lease = pool.take().await?;
            let value = lease.conn.get(key, max).await?;
            pool.put(lease);
            Ok(value)
        })
    }

    fn set<'a>(
        &'a self,
        server: usize,
        key: &'a str,
        exptime: u32,
        parts: [&'a [u8]; 2],
    ) -> BoxFut<'a, Result<SetReply, ConnError>> {
        Box::pin(async move {
            let pool = &self.pools[server];
            let mut lease = pool.take().await?;
            let reply = lease.conn.set(key, exptime, &parts).await?;
            pool.put(lease);
            Ok(reply)
        })
    }
}
