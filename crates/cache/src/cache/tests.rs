use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use tokio::sync::{Notify, oneshot};

use super::*;
use crate::{CredentialFingerprint, Encoding};

/// A fetch error type for tests.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("upstream said {0}")]
struct Upstream(u16);

fn key_for(tenant: &str, request: &str) -> CacheKey {
    CacheKey::new(
        tenant,
        Encoding::Identity,
        "",
        CredentialFingerprint::none(),
        "/loki/api/v1/query_range",
        request,
    )
}

fn cache(max_bytes: u64) -> Cache {
    Cache::new(Settings { max_bytes })
}

/// A fetch that counts how often it runs and answers `body` with `ttl`.
fn counted(
    calls: &Arc<AtomicUsize>,
    body: &'static str,
    ttl: Duration,
) -> impl Future<Output = Result<Fetched, Upstream>> + Send + 'static {
    let calls = Arc::clone(calls);
    async move {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok(Fetched::new(Bytes::from_static(body.as_bytes()), ttl))
    }
}

const LONG: Duration = Duration::from_secs(600);

#[tokio::test]
async fn sixteen_concurrent_callers_cause_one_fetch() {
    let cache = cache(1 << 20);
    let calls = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Notify::new());

    let mut callers = Vec::new();
    for _ in 0..16 {
        let cache = cache.clone();
        let calls = Arc::clone(&calls);
        let gate = Arc::clone(&gate);
        callers.push(tokio::spawn(async move {
            let fetch = async move {
                calls.fetch_add(1, Ordering::SeqCst);
                // Hold the fill open until every caller has arrived.
                gate.notified().await;
                Ok::<_, Upstream>(Fetched::new(Bytes::from_static(b"shared"), LONG))
            };
            cache.get_or_fetch(key_for("t", "q"), fetch).await
        }));
    }
    // Let every caller reach the cache and park behind the one fill.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    gate.notify_waiters();

    let mut outcomes = Vec::new();
    for caller in callers {
        let lookup = caller.await.unwrap().unwrap();
        assert_eq!(lookup.body, Bytes::from_static(b"shared"));
        outcomes.push(lookup.outcome);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(outcomes.iter().filter(|o| **o == Outcome::Miss).count(), 1);
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == Outcome::Coalesced)
            .count(),
        15
    );
    let stats = cache.stats();
    assert_eq!((stats.misses, stats.coalesced, stats.hits), (1, 15, 0));

    // A later caller is a plain hit and does not fetch.
    let later = cache
        .get_or_fetch(key_for("t", "q"), counted(&calls, "other", LONG))
        .await
        .unwrap();
    assert_eq!(later.outcome, Outcome::Hit);
    assert_eq!(later.body, Bytes::from_static(b"shared"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(cache.stats().hits, 1);
}

#[tokio::test]
async fn errors_are_shared_by_waiters_but_not_cached() {
    let cache = cache(1 << 20);
    let calls = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Notify::new());

    let mut callers = Vec::new();
    for _ in 0..4 {
        let cache = cache.clone();
        let calls = Arc::clone(&calls);
        let gate = Arc::clone(&gate);
        callers.push(tokio::spawn(async move {
            let fetch = async move {
                calls.fetch_add(1, Ordering::SeqCst);
                gate.notified().await;
                Err::<Fetched, _>(Upstream(503))
            };
            cache.get_or_fetch(key_for("t", "q"), fetch).await
        }));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    gate.notify_waiters();
    for caller in callers {
        match caller.await.unwrap() {
            Err(Error::Fetch(e)) => assert_eq!(*e, Upstream(503)),
            other => panic!("expected the shared fetch error, got {other:?}"),
        }
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "waiters share one failed fetch"
    );
    assert_eq!(cache.stats().fetch_errors, 1);

    // Nothing was stored: the next call fetches again and succeeds.
    cache.run_pending_tasks().await;
    assert_eq!(cache.entry_count(), 0);
    let retry = cache
        .get_or_fetch(key_for("t", "q"), counted(&calls, "ok", LONG))
        .await
        .unwrap();
    assert_eq!(retry.outcome, Outcome::Miss);
    assert_eq!(retry.body, Bytes::from_static(b"ok"));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn panicking_fetch_is_reported_not_propagated() {
    let cache = cache(1 << 20);
    let fetch = async {
        if cache_test_always_true() {
            panic!("fetch blew up");
        }
        Ok::<_, Upstream>(Fetched::new(Bytes::new(), LONG))
    };
    let result = cache.get_or_fetch(key_for("t", "q"), fetch).await;
    assert!(matches!(result, Err(Error::FillPanicked)), "{result:?}");
    let calls = Arc::new(AtomicUsize::new(0));
    let after = cache
        .get_or_fetch(key_for("t", "q"), counted(&calls, "fine", LONG))
        .await
        .unwrap();
    assert_eq!(after.body, Bytes::from_static(b"fine"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// Keeps the compiler from treating the panic above as unconditional.
fn cache_test_always_true() -> bool {
    std::hint::black_box(true)
}

// moka measures expiry with its own clock (std `Instant`; its mock clock is
// private to moka's own tests), so `tokio::time::pause` cannot advance it.
// These tests use short real TTLs with generous margins instead.
#[tokio::test]
async fn entries_expire_after_their_own_ttl() {
    let cache = cache(1 << 20);
    let calls = Arc::new(AtomicUsize::new(0));
    let short = key_for("t", "live-edge");
    let long = key_for("t", "historical");

    cache
        .get_or_fetch(
            short.clone(),
            counted(&calls, "v1", Duration::from_millis(150)),
        )
        .await
        .unwrap();
    cache
        .get_or_fetch(long.clone(), counted(&calls, "old", LONG))
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    // Still fresh well inside the TTL.
    let fresh = cache
        .get_or_fetch(
            short.clone(),
            counted(&calls, "v2", Duration::from_millis(150)),
        )
        .await
        .unwrap();
    assert_eq!(
        (fresh.outcome, fresh.body.as_ref()),
        (Outcome::Hit, b"v1".as_slice())
    );

    tokio::time::sleep(Duration::from_millis(400)).await;

    let refetched = cache
        .get_or_fetch(short.clone(), counted(&calls, "v2", LONG))
        .await
        .unwrap();
    assert_eq!(
        (refetched.outcome, refetched.body.as_ref()),
        (Outcome::Miss, b"v2".as_slice())
    );
    let kept = cache
        .get_or_fetch(long, counted(&calls, "new", LONG))
        .await
        .unwrap();
    assert_eq!(
        (kept.outcome, kept.body.as_ref()),
        (Outcome::Hit, b"old".as_slice())
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

// Reads check expiry exactly, but moka's timer wheel only removes (and
// reports) expired entries once its ~1.07 s bucket has passed, so this test
// waits a little over two buckets.
#[tokio::test]
async fn expired_entries_are_removed_and_counted() {
    let cache = cache(1 << 20);
    let calls = Arc::new(AtomicUsize::new(0));
    cache
        .get_or_fetch(
            key_for("t", "short"),
            counted(&calls, "s", Duration::from_millis(50)),
        )
        .await
        .unwrap();
    cache
        .get_or_fetch(key_for("t", "long"), counted(&calls, "l", LONG))
        .await
        .unwrap();
    cache.run_pending_tasks().await;
    assert_eq!(cache.entry_count(), 2);

    tokio::time::sleep(Duration::from_millis(2_300)).await;
    cache.run_pending_tasks().await;
    let stats = cache.stats();
    assert_eq!((stats.expirations, stats.entries), (1, 1), "{stats:?}");
    assert!(cache.get(&key_for("t", "long")).await.is_some());
}

#[tokio::test]
async fn zero_ttl_shares_the_fill_but_keeps_nothing() {
    let cache = cache(1 << 20);
    let calls = Arc::new(AtomicUsize::new(0));
    for expected_calls in 1..=2 {
        let lookup = cache
            .get_or_fetch(key_for("t", "now"), counted(&calls, "x", Duration::ZERO))
            .await
            .unwrap();
        assert_eq!(lookup.outcome, Outcome::Miss);
        assert_eq!(calls.load(Ordering::SeqCst), expected_calls);
    }
}

#[tokio::test]
async fn byte_bound_evicts() {
    const BODY: usize = 1_000;
    const BOUND: u64 = 10_000;
    let cache = cache(BOUND);
    let body: &'static str = "x".repeat(BODY).leak();
    let calls = Arc::new(AtomicUsize::new(0));
    for i in 0..40 {
        cache
            .get_or_fetch(
                key_for("t", &format!("q{i:02}")),
                counted(&calls, body, LONG),
            )
            .await
            .unwrap();
        cache.run_pending_tasks().await;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 40);
    let stats = cache.stats();
    assert!(stats.weighted_bytes <= BOUND, "{stats:?}");
    assert!(stats.entries < 40 && stats.entries >= 1, "{stats:?}");
    // Each entry weighs its body plus its key.
    let one = (BODY + key_for("t", "q10").weight()) as u64;
    assert_eq!(stats.weighted_bytes, stats.entries * one, "{stats:?}");
    assert!(stats.evictions >= 40 - stats.entries, "{stats:?}");
}

#[tokio::test]
async fn entry_larger_than_bound_is_served_but_not_kept() {
    let cache = cache(100);
    let calls = Arc::new(AtomicUsize::new(0));
    let big: &'static str = "y".repeat(1_000).leak();
    for expected in 1..=2 {
        let lookup = cache
            .get_or_fetch(key_for("t", "big"), counted(&calls, big, LONG))
            .await
            .unwrap();
        assert_eq!(lookup.body.len(), 1_000);
        cache.run_pending_tasks().await;
        assert_eq!(cache.entry_count(), 0);
        assert_eq!(calls.load(Ordering::SeqCst), expected);
    }
}

#[tokio::test]
async fn tenants_and_credentials_never_share_entries() {
    let cache = cache(1 << 20);
    let calls = Arc::new(AtomicUsize::new(0));
    let same_request = "query=%7Bapp%3D%22x%22%7D&start=0&end=10";

    let a = cache
        .get_or_fetch(
            key_for("tenant-a", same_request),
            counted(&calls, "a-data", LONG),
        )
        .await
        .unwrap();
    let b = cache
        .get_or_fetch(
            key_for("tenant-b", same_request),
            counted(&calls, "b-data", LONG),
        )
        .await
        .unwrap();
    assert_eq!(
        (a.outcome, a.body.as_ref()),
        (Outcome::Miss, b"a-data".as_slice())
    );
    assert_eq!(
        (b.outcome, b.body.as_ref()),
        (Outcome::Miss, b"b-data".as_slice())
    );

    let with_creds = CacheKey::new(
        "tenant-a",
        Encoding::Identity,
        "",
        CredentialFingerprint::of([b"Bearer user2".as_slice()]),
        "/loki/api/v1/query_range",
        same_request,
    );
    let c = cache
        .get_or_fetch(with_creds, counted(&calls, "user2-data", LONG))
        .await
        .unwrap();
    assert_eq!(c.body.as_ref(), b"user2-data");
    assert_eq!(calls.load(Ordering::SeqCst), 3);

    // Each tenant reads back only its own body.
    assert_eq!(
        cache
            .get(&key_for("tenant-a", same_request))
            .await
            .unwrap()
            .as_ref(),
        b"a-data"
    );
    assert_eq!(
        cache
            .get(&key_for("tenant-b", same_request))
            .await
            .unwrap()
            .as_ref(),
        b"b-data"
    );
    assert!(
        cache
            .get(&key_for("tenant-c", same_request))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn dropped_caller_does_not_abort_shared_fill() {
    let cache = cache(1 << 20);
    let calls = Arc::new(AtomicUsize::new(0));
    let (started_tx, started_rx) = oneshot::channel();
    let (release_tx, release_rx) = oneshot::channel::<()>();

    let leader = {
        let cache = cache.clone();
        let calls = Arc::clone(&calls);
        tokio::spawn(async move {
            let fetch = async move {
                calls.fetch_add(1, Ordering::SeqCst);
                let _ = started_tx.send(());
                let _ = release_rx.await;
                Ok::<_, Upstream>(Fetched::new(Bytes::from_static(b"filled"), LONG))
            };
            cache.get_or_fetch(key_for("t", "q"), fetch).await
        })
    };
    started_rx.await.unwrap();
    // The client that started the fill goes away mid-fetch.
    leader.abort();
    assert!(leader.await.unwrap_err().is_cancelled());

    // A second client arrives while the fill is still running: it must wait
    // for that fill, not start another upstream call.
    let follower = {
        let cache = cache.clone();
        let calls = Arc::clone(&calls);
        tokio::spawn(async move {
            cache
                .get_or_fetch(key_for("t", "q"), counted(&calls, "second", LONG))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    release_tx.send(()).unwrap();
    let lookup = follower.await.unwrap().unwrap();
    assert_eq!(lookup.body, Bytes::from_static(b"filled"));
    assert_eq!(lookup.outcome, Outcome::Coalesced);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        cache.get(&key_for("t", "q")).await,
        Some(Bytes::from_static(b"filled"))
    );
}

#[tokio::test]
async fn fill_completes_and_is_stored_after_its_only_caller_left() {
    let cache = cache(1 << 20);
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let (done_tx, done_rx) = oneshot::channel::<()>();
    let fetch = async move {
        let _ = release_rx.await;
        let _ = done_tx.send(());
        Ok::<_, Upstream>(Fetched::new(Bytes::from_static(b"late"), LONG))
    };
    // Give up on the call almost immediately, like a client disconnecting.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(20),
        cache.get_or_fetch(key_for("t", "q"), fetch),
    )
    .await;
    assert!(gave_up.is_err());
    release_tx.send(()).unwrap();
    done_rx.await.unwrap();
    // The spawned fill inserts right after the fetch returns.
    let mut stored = None;
    for _ in 0..50 {
        stored = cache.get(&key_for("t", "q")).await;
        if stored.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(stored, Some(Bytes::from_static(b"late")));
}

#[tokio::test]
async fn cached_slices_do_not_pin_their_parent() {
    let cache = cache(1 << 20);
    let parent = Bytes::from(vec![b'z'; 1 << 20]);
    let slice = parent.slice(0..16);
    let slice_ptr = slice.as_ptr();
    let fetch = async move { Ok::<_, Upstream>(Fetched::new(slice, LONG)) };
    cache.get_or_fetch(key_for("t", "q"), fetch).await.unwrap();
    let stored = cache.get(&key_for("t", "q")).await.unwrap();
    assert_eq!(stored.as_ref(), &[b'z'; 16]);
    assert_ne!(stored.as_ptr(), slice_ptr);
}

/// Sends on drop: tells a test that a fetch future was dropped (cancelled).
struct DropSignal(Option<oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

#[tokio::test]
async fn cancellable_fill_stops_when_its_only_caller_leaves() {
    let cache = cache(1 << 20);
    let (started_tx, started_rx) = oneshot::channel();
    let (dropped_tx, dropped_rx) = oneshot::channel();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    let dropped_tx = std::sync::Mutex::new(Some(dropped_tx));
    let caller = {
        let cache = cache.clone();
        tokio::spawn(async move {
            cache
                .get_or_fetch_cancellable(key_for("t", "q"), || {
                    let started = started_tx.lock().unwrap().take();
                    let guard = DropSignal(dropped_tx.lock().unwrap().take());
                    async move {
                        let _guard = guard;
                        if let Some(s) = started {
                            let _ = s.send(());
                        }
                        std::future::pending::<()>().await;
                        Ok::<_, Upstream>(Fetched::new(Bytes::from_static(b"never"), LONG))
                    }
                })
                .await
        })
    };
    started_rx.await.unwrap();
    caller.abort();
    // The fetch itself is dropped (its upstream call cancelled), nothing is kept.
    dropped_rx.await.unwrap();
    assert_eq!(cache.wanted.len(), 0);
    assert_eq!(cache.get(&key_for("t", "q")).await, None);
    // The next caller fetches afresh.
    let calls = Arc::new(AtomicUsize::new(0));
    let lookup = cache
        .get_or_fetch_cancellable(key_for("t", "q"), || counted(&calls, "again", LONG))
        .await
        .unwrap();
    assert_eq!(lookup.body, Bytes::from_static(b"again"));
    assert_eq!(lookup.outcome, Outcome::Miss);
}

#[tokio::test]
async fn cancellable_fill_goes_on_while_another_caller_waits() {
    let cache = cache(1 << 20);
    let calls = Arc::new(AtomicUsize::new(0));
    let (started_tx, started_rx) = oneshot::channel();
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    let release_rx = std::sync::Mutex::new(Some(release_rx));
    let leader = {
        let (cache, calls) = (cache.clone(), Arc::clone(&calls));
        tokio::spawn(async move {
            cache
                .get_or_fetch_cancellable(key_for("t", "q"), || {
                    let (started, release) = (
                        started_tx.lock().unwrap().take(),
                        release_rx.lock().unwrap().take(),
                    );
                    let calls = Arc::clone(&calls);
                    async move {
                        calls.fetch_add(1, Ordering::SeqCst);
                        let _ = started.unwrap().send(());
                        let _ = release.unwrap().await;
                        Ok::<_, Upstream>(Fetched::new(Bytes::from_static(b"shared"), LONG))
                    }
                })
                .await
        })
    };
    started_rx.await.unwrap();
    let follower = {
        let (cache, calls) = (cache.clone(), Arc::clone(&calls));
        tokio::spawn(async move {
            cache
                .get_or_fetch_cancellable(key_for("t", "q"), || counted(&calls, "second", LONG))
                .await
        })
    };
    // The follower waits on the leader's fill; then the leader's client leaves.
    tokio::time::sleep(Duration::from_millis(50)).await;
    leader.abort();
    assert!(leader.await.unwrap_err().is_cancelled());
    release_tx.send(()).unwrap();
    let lookup = follower.await.unwrap().unwrap();
    assert_eq!(lookup.body, Bytes::from_static(b"shared"));
    assert_eq!(lookup.outcome, Outcome::Coalesced);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        cache.get(&key_for("t", "q")).await,
        Some(Bytes::from_static(b"shared"))
    );
    assert_eq!(cache.wanted.len(), 0);
}

#[tokio::test]
async fn a_caller_that_joins_a_stopping_fill_fetches_again() {
    let cache = cache(1 << 20);
    // A fill whose callers have all left, still finishing its stop.
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let dying = {
        let cache = cache.clone();
        tokio::spawn(async move {
            cache
                .fill::<_, Upstream>(key_for("t", "q"), false, async move {
                    let _ = release_rx.await;
                    Err(Error::Unwanted)
                })
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    let made = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(AtomicUsize::new(0));
    let newcomer = {
        let (cache, made, calls) = (cache.clone(), Arc::clone(&made), Arc::clone(&calls));
        tokio::spawn(async move {
            cache
                .get_or_fetch_cancellable(key_for("t", "q"), || {
                    made.fetch_add(1, Ordering::SeqCst);
                    counted(&calls, "fresh", LONG)
                })
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    release_tx.send(()).unwrap();
    assert!(matches!(dying.await.unwrap(), Err(Error::Unwanted)));
    let lookup = newcomer.await.unwrap().unwrap();
    assert_eq!(lookup.body, Bytes::from_static(b"fresh"));
    // Its first fetch was dropped unpolled (it joined the dying fill), the second ran.
    assert_eq!(made.load(Ordering::SeqCst), 2);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
