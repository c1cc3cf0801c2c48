//! The cache itself: lookup, coalesced fill, byte bound and per-entry TTL.

use std::{future::Future, sync::Arc, time::Duration};

use bytes::Bytes;
use moka::{Expiry, notification::RemovalCause};

use crate::{
    entry::{Entry, Fetched},
    error::Error,
    key::CacheKey,
    shared::{SharedStats, SharedTier, key::SharedKey},
    stats::{Counters, Stats},
    wanted::Registry,
};

/// Where a fill's entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// Another call's fill (this call waited).
    Joined,
    /// This call's fetch.
    Fetched,
    /// The shared tier.
    Shared,
}

/// How often [`Cache::get_or_fetch_cancellable`] fetches again after joining
/// a fill that was stopping because its own callers had all left.
const UNWANTED_RETRIES: usize = 2;

/// Sizing for a [`Cache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Upper bound on stored bytes (bodies plus keys). Entries heavier than
    /// this are served to their callers but not kept.
    pub max_bytes: u64,
}

/// How a call to [`Cache::get_or_fetch`] was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A stored, unexpired entry was returned.
    Hit,
    /// This call ran the fetch.
    Miss,
    /// Another call was already fetching this key; this call waited for it.
    Coalesced,
    /// Not stored here, but another replica's entry was found in the shared
    /// tier; it is now stored here too.
    SharedHit,
}

/// A body returned by [`Cache::get_or_fetch`] and how it was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The response body.
    pub body: Bytes,
    /// Whether it came from the cache, this call's fetch or a shared fetch.
    pub outcome: Outcome,
}

/// A byte-bounded response cache in which concurrent misses on one key share
/// one fetch.
///
/// Cloning is cheap and clones share storage and counters.
#[derive(Clone)]
pub struct Cache {
    inner: moka::future::Cache<CacheKey, Entry>,
    counters: Arc<Counters>,
    /// Callers of [`Cache::get_or_fetch_cancellable`] waiting per key.
    wanted: Arc<Registry>,
    /// The tier shared with other replicas (`--shared-cache`), if any.
    shared: Option<SharedTier>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("stats", &self.stats())
            .finish()
    }
}

/// Reads each entry's own TTL, so historical responses can live long while
/// responses touching "now" expire quickly.
struct PerEntryTtl;

impl Expiry<CacheKey, Entry> for PerEntryTtl {
    fn expire_after_create(
        &self,
        _key: &CacheKey,
        value: &Entry,
        _created_at: std::time::Instant,
    ) -> Option<Duration> {
        Some(value.ttl)
    }

    fn expire_after_update(
        &self,
        _key: &CacheKey,
        value: &Entry,
        _updated_at: std::time::Instant,
        _duration_until_expiry: Option<Duration>,
    ) -> Option<Duration> {
        Some(value.ttl)
    }
}

impl Cache {
    /// Creates an empty cache bounded to `settings.max_bytes`.
    pub fn new(settings: Settings) -> Self {
        let counters = Arc::new(Counters::default());
        let listener_counters = Arc::clone(&counters);
        let inner = moka::future::Cache::builder()
            .max_capacity(settings.max_bytes)
            // moka weights are u32: a body over 4 GiB saturates, which still
            // exceeds any sane bound and is therefore not kept.
            .weigher(|key: &CacheKey, value: &Entry| {
                u32::try_from(key.weight().saturating_add(value.body.len())).unwrap_or(u32::MAX)
            })
            .expire_after(PerEntryTtl)
            .eviction_listener(move |_key, _value, cause| match cause {
                RemovalCause::Size => Counters::bump(&listener_counters.evictions),
                RemovalCause::Expired => Counters::bump(&listener_counters.expirations),
                RemovalCause::Explicit | RemovalCause::Replaced => {}
            })
            .build();
        Self {
            inner,
            counters,
            wanted: Arc::default(),
            shared: None,
        }
    }

    /// This cache backed by `tier`, shared with other replicas: a local miss
    /// looks there before fetching, and closed entries are written there.
    #[must_use]
    pub fn with_shared(mut self, tier: SharedTier) -> Self {
        self.shared = Some(tier);
        self
    }

    /// The shared tier's counters, when there is one.
    pub fn shared_stats(&self) -> Option<SharedStats> {
        self.shared.as_ref().map(SharedTier::stats)
    }

    /// Returns the cached body for `key`, or runs `fetch` to produce and store
    /// it.
    ///
    /// Concurrent calls for one missing key run **one** fetch; the others wait
    /// and receive the same body or the same error ([`Outcome::Coalesced`]).
    /// Their own `fetch` futures are dropped without being polled. Errors are
    /// not cached.
    ///
    /// The fill (moka's `try_get_with` and the fetch inside it) runs in a
    /// spawned task. If the caller that started it is dropped, for example
    /// because its client disconnected, the fill carries on: waiters keep
    /// waiting on it rather than starting a second upstream call, and the
    /// result is still stored. (Spawning only the fetch inside `init` would
    /// not be enough: dropping the leader would still release moka's
    /// in-flight slot and the next waiter would fetch again.)
    ///
    /// # Errors
    ///
    /// [`Error::Fetch`] with the fetch's error, shared by all coalesced
    /// callers; [`Error::FillPanicked`] if the fetch panicked;
    /// [`Error::FillCancelled`] if the runtime is shutting down.
    ///
    /// # Panics
    ///
    /// Panics if called outside a Tokio runtime, as [`tokio::spawn`] does.
    pub async fn get_or_fetch<F, E>(&self, key: CacheKey, fetch: F) -> Result<Lookup, Error<E>>
    where
        F: Future<Output = Result<Fetched, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        self.get_or_fetch_expecting(key, None, fetch).await
    }

    /// [`Cache::get_or_fetch`] when the caller knows the TTL the fetch will
    /// give (`Some`): a fill whose entry cannot be closed skips the shared
    /// tier's lookup, which would always miss (only closed entries are
    /// written there), so a live-edge answer pays no memcached round trip.
    /// `None` looks there on every local miss.
    ///
    /// # Errors
    ///
    /// As [`Cache::get_or_fetch`].
    ///
    /// # Panics
    ///
    /// As [`Cache::get_or_fetch`].
    pub async fn get_or_fetch_expecting<F, E>(
        &self,
        key: CacheKey,
        ttl: Option<Duration>,
        fetch: F,
    ) -> Result<Lookup, Error<E>>
    where
        F: Future<Output = Result<Fetched, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        if let Some(hit) = self.hit(&key).await {
            return Ok(hit);
        }
        let look_shared = self.looks_shared(ttl);
        self.fill(key, look_shared, async move {
            fetch.await.map_err(|e| Error::Fetch(Arc::new(e)))
        })
        .await
    }

    /// [`Cache::get_or_fetch`] for a fill that is only worth finishing while
    /// someone waits for it: once every caller waiting on `key` this way has
    /// been dropped (its client went away), the fetch is dropped too, which
    /// cancels its upstream call, and nothing is stored. While one caller
    /// still waits, the shared fill goes on even if the caller that started it
    /// left.
    ///
    /// `make_fetch` builds the fetch; it is called again when this caller
    /// joined a fill that was being stopped because all its earlier callers
    /// had left (so a client that arrives at that moment is not failed).
    ///
    /// # Errors
    ///
    /// As [`Cache::get_or_fetch`], and [`Error::Unwanted`] if every attempt
    /// joined a fill being stopped.
    ///
    /// # Panics
    ///
    /// Panics if called outside a Tokio runtime, as [`tokio::spawn`] does.
    pub async fn get_or_fetch_cancellable<M, F, E>(
        &self,
        key: CacheKey,
        make_fetch: M,
    ) -> Result<Lookup, Error<E>>
    where
        M: Fn() -> F,
        F: Future<Output = Result<Fetched, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        self.get_or_fetch_cancellable_expecting(key, None, make_fetch)
            .await
    }

    /// [`Cache::get_or_fetch_cancellable`] when the caller knows the TTL the
    /// fetch will give, as [`Cache::get_or_fetch_expecting`]: a live window
    /// pays no shared-tier round trip that could only miss.
    ///
    /// # Errors
    ///
    /// As [`Cache::get_or_fetch_cancellable`].
    ///
    /// # Panics
    ///
    /// As [`Cache::get_or_fetch_cancellable`].
    pub async fn get_or_fetch_cancellable_expecting<M, F, E>(
        &self,
        key: CacheKey,
        ttl: Option<Duration>,
        make_fetch: M,
    ) -> Result<Lookup, Error<E>>
    where
        M: Fn() -> F,
        F: Future<Output = Result<Fetched, E>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        if let Some(hit) = self.hit(&key).await {
            return Ok(hit);
        }
        let look_shared = self.looks_shared(ttl);
        // Held until this caller returns or is dropped.
        let interest = self.wanted.join(&key);
        let mut attempt = 0;
        loop {
            // Boxed: fetch futures can be large, and this one is moved into a task.
            let fetch = Box::pin(make_fetch());
            let stopped = interest.stopped();
            let guarded = async move {
                tokio::select! {
                    r = fetch => r.map_err(|e| Error::Fetch(Arc::new(e))),
                    () = stopped => Err(Error::Unwanted),
                }
            };
            match self.fill(key.clone(), look_shared, guarded).await {
                Err(Error::Unwanted) if attempt < UNWANTED_RETRIES => attempt += 1,
                other => return other,
            }
        }
    }

    /// Whether a local miss looks in the shared tier: always when the TTL
    /// the fill will give is unknown, else only when that TTL is a closed
    /// one (only closed entries are written there).
    fn looks_shared(&self, ttl: Option<Duration>) -> bool {
        match (&self.shared, ttl) {
            (Some(tier), Some(ttl)) => tier.is_closed(ttl),
            (shared, _) => shared.is_some(),
        }
    }

    /// The stored body for `key`, counted as a hit.
    async fn hit(&self, key: &CacheKey) -> Option<Lookup> {
        let entry = self.inner.get(key).await?;
        Counters::bump(&self.counters.hits);
        Some(Lookup {
            body: entry.body,
            outcome: Outcome::Hit,
        })
    }

    /// Runs (or joins) the fill of `key` in a spawned task; see [`Cache::get_or_fetch`].
    async fn fill<F, E>(
        &self,
        key: CacheKey,
        look_shared: bool,
        fetch: F,
    ) -> Result<Lookup, Error<E>>
    where
        F: Future<Output = Result<Fetched, Error<E>>> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let inner = self.inner.clone();
        let counters = Arc::clone(&self.counters);
        let shared = self.shared.clone();
        let fill = tokio::spawn(async move {
            let mut source = Source::Joined;
            // Its memcached key, hashed once for the lookup and the write.
            let shared_key = shared.as_ref().map(|_| SharedKey::of(&key));
            let init = async {
                if let (Some(tier), Some(key), true) = (&shared, &shared_key, look_shared)
                    && let Some((body, remaining)) = tier.get(key).await
                {
                    source = Source::Shared;
                    Counters::bump(&counters.shared_hits);
                    return Ok(Entry::from(Fetched::new(body, remaining)));
                }
                source = Source::Fetched;
                Counters::bump(&counters.misses);
                match fetch.await {
                    Ok(fetched) => {
                        let entry = Entry::from(fetched);
                        if let (Some(tier), Some(key)) = (&shared, &shared_key) {
                            tier.spawn_put(*key, entry.body.clone(), entry.ttl);
                        }
                        Ok(entry)
                    }
                    Err(e) => {
                        if matches!(e, Error::Fetch(_)) {
                            Counters::bump(&counters.fetch_errors);
                        }
                        Err(e)
                    }
                }
            };
            let result = inner.try_get_with(key, init).await;
            if source == Source::Joined {
                Counters::bump(&counters.coalesced);
            }
            (result, source)
        });

        match fill.await {
            Ok((Ok(entry), source)) => Ok(Lookup {
                body: entry.body,
                outcome: match source {
                    Source::Fetched => Outcome::Miss,
                    Source::Shared => Outcome::SharedHit,
                    Source::Joined => Outcome::Coalesced,
                },
            }),
            Ok((Err(shared), _)) => Err((*shared).clone()),
            Err(join) if join.is_panic() => {
                Counters::bump(&self.counters.fetch_errors);
                Err(Error::FillPanicked)
            }
            Err(_) => Err(Error::FillCancelled),
        }
    }

    /// Returns the body stored in this process for `key` without fetching;
    /// counts as a hit when found and is not counted otherwise.
    ///
    /// Local only, on purpose: this is the front door of cache hits, and a
    /// network round trip to the shared tier on the fastest path is not
    /// worth it (a miss here goes on to the fill, which looks there once).
    /// Use [`Cache::get_through`] to read the shared tier too.
    pub async fn get(&self, key: &CacheKey) -> Option<Bytes> {
        let entry = self.inner.get(key).await?;
        Counters::bump(&self.counters.hits);
        Some(entry.body)
    }

    /// [`Cache::get`], then the shared tier: a shared entry is stored here
    /// for the lifetime its writer gave it left, and counted as a shared hit.
    /// For callers that read and write by key ([`Cache::insert`]) instead of
    /// through [`Cache::get_or_fetch`].
    pub async fn get_through(&self, key: &CacheKey) -> Option<Bytes> {
        if let Some(body) = self.get(key).await {
            return Some(body);
        }
        let (body, remaining) = self.shared.as_ref()?.get(&SharedKey::of(key)).await?;
        Counters::bump(&self.counters.shared_hits);
        let entry = Entry::from(Fetched::new(body, remaining));
        let body = entry.body.clone();
        self.inner.insert(key.clone(), entry).await;
        Some(body)
    }

    /// Stores `fetched` under `key`, replacing any previous entry; a closed
    /// entry is also written to the shared tier (in a spawned task).
    ///
    /// # Panics
    ///
    /// With a shared tier, panics if called outside a Tokio runtime, as
    /// [`tokio::spawn`] does.
    pub async fn insert(&self, key: CacheKey, fetched: Fetched) {
        let entry = Entry::from(fetched);
        if let Some(tier) = self.shared.as_ref().filter(|t| t.is_closed(entry.ttl)) {
            tier.spawn_put(SharedKey::of(&key), entry.body.clone(), entry.ttl);
        }
        self.inner.insert(key, entry).await;
    }

    /// Removes every entry, for example after a configuration reload.
    pub fn invalidate_all(&self) {
        self.inner.invalidate_all();
    }

    /// Applies pending inserts, evictions and expirations now.
    ///
    /// moka does this housekeeping lazily on later calls; call this before
    /// reading [`Stats::entries`] or [`Stats::weighted_bytes`] when an exact
    /// figure matters (tests, a `/metrics` scrape).
    pub async fn run_pending_tasks(&self) {
        self.inner.run_pending_tasks().await;
    }

    /// Entries currently stored (eventually consistent).
    pub fn entry_count(&self) -> u64 {
        self.inner.entry_count()
    }

    /// Bytes currently stored, bodies plus keys (eventually consistent).
    pub fn weighted_bytes(&self) -> u64 {
        self.inner.weighted_size()
    }

    /// Copies all counters and gauges.
    pub fn stats(&self) -> Stats {
        self.counters
            .snapshot(self.inner.entry_count(), self.inner.weighted_size())
    }
}

#[cfg(test)]
mod tests;
