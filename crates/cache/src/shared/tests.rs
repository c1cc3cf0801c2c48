//! The shared tier through [`crate::Cache`], on a fake store: what is
//! shared, what stays local, and that a failing tier never fails a caller.
//! `memcached_tests` runs the same client against a real memcached.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::conn::{ConnError, SetReply};
use super::key::SharedKey;
use super::store::{BoxFut, Store};
use super::{Servers, SharedConfig, SharedTier};
use crate::{
    Cache, CacheKey, CredentialFingerprint, Encoding, Fetched, Lifetimes, Outcome, Settings,
};

mod memcached;

/// How the fake answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Works,
    Fails,
    Hangs,
}

/// A store shared by the "replicas" of a test, counting its calls.
#[derive(Debug)]
struct Fake {
    values: Mutex<HashMap<String, Vec<u8>>>,
    gets: AtomicUsize,
    sets: AtomicUsize,
    mode: Mutex<Mode>,
}

#[derive(Debug, Clone)]
struct FakeHandle(Arc<Fake>);

impl Fake {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            values: Mutex::default(),
            gets: AtomicUsize::new(0),
            sets: AtomicUsize::new(0),
            mode: Mutex::new(Mode::Works),
        })
    }

    fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    fn gets(&self) -> usize {
        self.gets.load(Ordering::SeqCst)
    }

    fn sets(&self) -> usize {
        self.sets.load(Ordering::SeqCst)
    }

    /// Waits (bounded) until `n` writes arrived: writes run in spawned tasks.
    async fn wait_sets(&self, n: usize) {
        for _ in 0..500 {
            if self.sets() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        panic!("expected {n} writes, saw {}", self.sets());
    }
}

impl Store for FakeHandle {
    fn servers(&self) -> usize {
        1
    }

    fn get<'a>(
        &'a self,
        _: usize,
        key: &'a str,
        max: usize,
    ) -> BoxFut<'a, Result<Option<Vec<u8>>, ConnError>> {
        Box::pin(async move {
            self.0.gets.fetch_add(1, Ordering::SeqCst);
            let mode = *self.0.mode.lock().unwrap();
            match mode {
                Mode::Works => {}
                Mode::Fails => return Err(ConnError::Protocol("fake failure")),
                Mode::Hangs => std::future::pending::<()>().await,
            }
            let v = self.0.values.lock().unwrap().get(key).cloned();
            match v {
                Some(v) if v.len() > max => Err(ConnError::Oversized(v.len())),
                v => Ok(v),
            }
        })
    }

    fn set<'a>(
        &'a self,
        _: usize,
        key: &'a str,
        _exptime: u32,
        parts: [&'a [u8]; 2],
    ) -> BoxFut<'a, Result<SetReply, ConnError>> {
        Box::pin(async move {
            let mode = *self.0.mode.lock().unwrap();
            match mode {
                Mode::Works => {}
                Mode::Fails => return Err(ConnError::Protocol("fake failure")),
                Mode::Hangs => std::future::pending::<()>().await,
            }
            self.0
                .values
                .lock()
                .unwrap()
                .insert(key.to_owned(), parts.concat());
            self.0.sets.fetch_add(1, Ordering::SeqCst);
            Ok(SetReply::Stored)
        })
    }
}

const TTL: Duration = Duration::from_secs(3600);
const LIVE: Duration = Duration::from_secs(5);
const TIMEOUT: Duration = Duration::from_millis(100);

fn lifetimes() -> Lifetimes {
    Lifetimes {
        ttl: TTL,
        live_ttl: LIVE,
        freshness: Duration::from_secs(600),
    }
}

fn config(max_item_bytes: usize) -> SharedConfig {
    SharedConfig {
        servers: Servers::parse("memcached://127.0.0.1:1").unwrap(),
        timeout: TIMEOUT,
        circuit_open: Duration::from_secs(10),
        max_item_bytes,
        pool_size: 4,
    }
}

/// One "replica": its own local cache and tier over the shared fake.
fn replica(fake: &Arc<Fake>) -> Cache {
    let tier = SharedTier::with_store(
        Box::new(FakeHandle(fake.clone())),
        &config(1 << 20),
        lifetimes(),
    );
    Cache::new(Settings { max_bytes: 1 << 20 }).with_shared(tier)
}

fn key(tenant: &str, request: &str) -> CacheKey {
    CacheKey::new(
        tenant,
        Encoding::Identity,
        "",
        CredentialFingerprint::none(),
        "/loki/api/v1/query_range",
        request,
    )
}

async fn answer(
    cache: &Cache,
    key: CacheKey,
    body: &'static str,
    ttl: Duration,
) -> (Bytes, Outcome) {
    let l = cache
        .get_or_fetch(key, async move {
            Ok::<_, Infallible>(Fetched::new(Bytes::from_static(body.as_bytes()), ttl))
        })
        .await
        .unwrap();
    (l.body, l.outcome)
}

#[tokio::test]
async fn a_closed_answer_of_one_replica_is_a_shared_hit_on_another() {
    let fake = Fake::new();
    let (a, b) = (replica(&fake), replica(&fake));
    let k = key("1:0", "q=closed");
    assert_eq!(
        answer(&a, k.clone(), "{\"a\":1}", TTL).await.1,
        Outcome::Miss
    );
    fake.wait_sets(1).await;
    let l = b
        .get_or_fetch::<_, Infallible>(k.clone(), async {
            unreachable!("answered by the shared tier")
        })
        .await
        .unwrap();
    assert_eq!(l.outcome, Outcome::SharedHit);
    assert_eq!(l.body.as_ref(), b"{\"a\":1}");
    // Now local in B: no second shared read.
    let gets = fake.gets();
    assert_eq!(
        answer(&b, k, "other", TTL).await,
        (Bytes::from_static(b"{\"a\":1}"), Outcome::Hit)
    );
    assert_eq!(fake.gets(), gets);
    assert_eq!(b.stats().shared_hits, 1);
    let s = b.shared_stats().unwrap();
    assert_eq!((s.hit, s.miss), (1, 0));
    assert_eq!(a.shared_stats().unwrap().stored, 1);
}

#[tokio::test]
async fn live_and_uncached_answers_stay_local() {
    let fake = Fake::new();
    let (a, b) = (replica(&fake), replica(&fake));
    answer(&a, key("1:0", "q=live"), "live", LIVE).await;
    answer(&a, key("1:0", "q=zero"), "zero", Duration::ZERO).await;
    answer(&a, key("1:0", "q=other"), "other", Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(fake.sets(), 0);
    assert_eq!(
        answer(&b, key("1:0", "q=live"), "b-live", LIVE).await.1,
        Outcome::Miss
    );
    // When the live TTL equals the long one, nothing can be told closed.
    let same = SharedTier::with_store(
        Box::new(FakeHandle(fake.clone())),
        &config(1 << 20),
        Lifetimes {
            live_ttl: TTL,
            ..lifetimes()
        },
    );
    assert!(!same.is_closed(TTL));
    let tier = SharedTier::with_store(Box::new(FakeHandle(fake)), &config(1 << 20), lifetimes());
    assert!(tier.is_closed(TTL) && !tier.is_closed(LIVE) && !tier.is_closed(Duration::ZERO));
}

#[tokio::test]
async fn two_tenants_never_share_an_entry() {
    let fake = Fake::new();
    let (a, b) = (replica(&fake), replica(&fake));
    answer(&a, key("1:0", "q=same"), "tenant one", TTL).await;
    fake.wait_sets(1).await;
    let (body, outcome) = answer(&b, key("2:0", "q=same"), "tenant two", TTL).await;
    assert_eq!(
        (body.as_ref(), outcome),
        (b"tenant two".as_slice(), Outcome::Miss)
    );
    fake.wait_sets(2).await;
    assert_eq!(fake.values.lock().unwrap().len(), 2);
}

/// A value written by another lokivl version under the same key.
fn foreign_value(body: &[u8], expires_at: u64, version: &str) -> Vec<u8> {
    let mut v = b"LKVC\x01".to_vec();
    v.push(u8::try_from(version.len()).unwrap());
    v.extend_from_slice(version.as_bytes());
    v.extend_from_slice(&expires_at.to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn another_version_or_an_expired_entry_reads_absent() {
    let fake = Fake::new();
    let b = replica(&fake);
    let (old, expired, ours) = (
        key("1:0", "q=old"),
        key("1:0", "q=expired"),
        key("1:0", "q=ours"),
    );
    {
        let mut values = fake.values.lock().unwrap();
        let future = unix_now() + 600;
        values.insert(
            SharedKey::of(&old).as_str().to_owned(),
            foreign_value(b"old", future, "0.0.0-old"),
        );
        values.insert(
            SharedKey::of(&expired).as_str().to_owned(),
            foreign_value(b"expired", unix_now() - 1, env!("CARGO_PKG_VERSION")),
        );
        values.insert(
            SharedKey::of(&ours).as_str().to_owned(),
            foreign_value(b"ours", future, env!("CARGO_PKG_VERSION")),
        );
    }
    assert_eq!(
        answer(&b, old, "fresh", TTL).await,
        (Bytes::from_static(b"fresh"), Outcome::Miss)
    );
    assert_eq!(
        answer(&b, expired, "fresh", TTL).await,
        (Bytes::from_static(b"fresh"), Outcome::Miss)
    );
    assert_eq!(
        answer(&b, ours, "fresh", TTL).await,
        (Bytes::from_static(b"ours"), Outcome::SharedHit)
    );
    let s = b.shared_stats().unwrap();
    assert_eq!((s.incompatible, s.miss, s.hit), (1, 1, 1));
}

#[tokio::test]
async fn three_failures_open_the_circuit_and_answers_stay_right() {
    let fake = Fake::new();
    fake.set_mode(Mode::Fails);
    let a = replica(&fake);
    // Live answers: no writes, so only the reads meet the failing tier.
    for i in 0..5 {
        let (body, outcome) =
            answer(&a, key("1:0", &format!("q={i}")), "from upstream", LIVE).await;
        assert_eq!(
            (body.as_ref(), outcome),
            (b"from upstream".as_slice(), Outcome::Miss)
        );
    }
    // Three reads failed, the two after them were not tried.
    assert_eq!(fake.gets(), 3);
    let s = a.shared_stats().unwrap();
    assert_eq!(s.error, 3);
    assert_eq!(s.skipped, 2);
    assert_eq!(s.open_circuits, 1);
}

#[tokio::test(start_paused = true)]
async fn a_hanging_tier_costs_one_timeout_then_the_fetch_answers() {
    let fake = Fake::new();
    fake.set_mode(Mode::Hangs);
    let a = replica(&fake);
    let started = tokio::time::Instant::now();
    let (body, outcome) = answer(&a, key("1:0", "q=slow"), "from upstream", TTL).await;
    let waited = started.elapsed();
    assert_eq!(
        (body.as_ref(), outcome),
        (b"from upstream".as_slice(), Outcome::Miss)
    );
    assert!(waited >= TIMEOUT && waited < TIMEOUT * 2, "{waited:?}");
    // Let the spawned write time out too.
    tokio::time::sleep(TIMEOUT * 2).await;
    let s = a.shared_stats().unwrap();
    assert_eq!((s.timeout, s.error), (2, 0));
}

#[tokio::test]
async fn insert_writes_through_and_get_through_reads_it() {
    let fake = Fake::new();
    let (a, b) = (replica(&fake), replica(&fake));
    let k = key("1:0", "window=1");
    a.insert(k.clone(), Fetched::new(Bytes::from_static(b"extent"), TTL))
        .await;
    a.insert(
        key("1:0", "window=live"),
        Fetched::new(Bytes::from_static(b"live"), LIVE),
    )
    .await;
    fake.wait_sets(1).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(fake.sets(), 1, "the live extent stays local");
    assert_eq!(b.get(&k).await, None, "get is local only");
    assert_eq!(fake.gets(), 0);
    assert_eq!(
        b.get_through(&k).await.as_deref(),
        Some(b"extent".as_slice())
    );
    assert_eq!(b.get_through(&key("1:0", "window=live")).await, None);
    // Kept locally now.
    assert_eq!(b.get(&k).await.as_deref(), Some(b"extent".as_slice()));
    assert_eq!(b.stats().shared_hits, 1);
}

#[tokio::test]
async fn an_entry_over_the_item_bound_stays_local() {
    let fake = Fake::new();
    let tier = SharedTier::with_store(Box::new(FakeHandle(fake.clone())), &config(64), lifetimes());
    let a = Cache::new(Settings { max_bytes: 1 << 20 }).with_shared(tier);
    let big: &'static str = "x".repeat(100).leak();
    assert_eq!(
        answer(&a, key("1:0", "q=big"), big, TTL).await.1,
        Outcome::Miss
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(fake.sets(), 0);
    assert_eq!(a.shared_stats().unwrap().too_large, 1);
    assert_eq!(answer(&a, key("1:0", "q=big"), "", TTL).await.0.len(), 100);
}

#[tokio::test]
async fn a_fill_known_to_be_live_does_not_look_in_the_shared_tier() {
    let fake = Fake::new();
    let a = replica(&fake);
    let fetch = |body: &'static str| async move {
        Ok::<_, Infallible>(Fetched::new(Bytes::from_static(body.as_bytes()), LIVE))
    };
    let l = a
        .get_or_fetch_expecting(key("1:0", "q=live"), Some(LIVE), fetch("live"))
        .await
        .unwrap();
    assert_eq!(
        (l.body.as_ref(), l.outcome),
        (b"live".as_slice(), Outcome::Miss)
    );
    assert_eq!(fake.gets(), 0);
    // Expected closed: looked up (and missed), then written.
    let closed = async { Ok::<_, Infallible>(Fetched::new(Bytes::from_static(b"closed"), TTL)) };
    a.get_or_fetch_expecting(key("1:0", "q=closed"), Some(TTL), closed)
        .await
        .unwrap();
    assert_eq!(fake.gets(), 1);
    fake.wait_sets(1).await;
}

#[tokio::test]
async fn a_cancellable_fill_known_to_be_live_does_not_look_in_the_shared_tier() {
    let fake = Fake::new();
    let a = replica(&fake);
    let live = || async { Ok::<_, Infallible>(Fetched::new(Bytes::from_static(b"live"), LIVE)) };
    let l = a
        .get_or_fetch_cancellable_expecting(key("1:0", "w=live"), Some(LIVE), live)
        .await
        .unwrap();
    assert_eq!(
        (l.body.as_ref(), l.outcome),
        (b"live".as_slice(), Outcome::Miss)
    );
    assert_eq!(fake.gets(), 0);
    // Expected closed (a closed window): looked up once, then written.
    let closed = || async { Ok::<_, Infallible>(Fetched::new(Bytes::from_static(b"closed"), TTL)) };
    a.get_or_fetch_cancellable_expecting(key("1:0", "w=closed"), Some(TTL), closed)
        .await
        .unwrap();
    assert_eq!(fake.gets(), 1);
    fake.wait_sets(1).await;
    // Unknown TTL: looked up as before.
    a.get_or_fetch_cancellable(key("1:0", "w=unknown"), live)
        .await
        .unwrap();
    assert_eq!(fake.gets(), 2);
}
