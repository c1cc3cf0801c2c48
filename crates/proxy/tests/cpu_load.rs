//! CPU-heavy requests do not stall the async workers: with eight metric
//! queries whose pipeline runs in lokivl over 100,000 rows each, on a
//! two-worker runtime (a 2-core host), `/ready` and a cached answer are
//! still served at once, while the heavy queries are still running.
//!
//! Before the row work moved to the blocking pool, both workers were busy
//! extracting samples, and `/ready` waited for a heavy query to finish.

#[path = "support/mod.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::client::*;
use crate::support::fake_vl::*;
use crate::support::lokivl::start_proxy;

/// Rows in each heavy answer.
const ROWS: usize = 100_000;
/// Heavy queries sent at once.
const HEAVY: usize = 8;
/// A generous bound for a cheap answer on a loaded, shared test machine.
const CHEAP_BOUND: Duration = Duration::from_secs(3);

/// 2026-08-22T10:00:00Z, the instant the heavy queries are evaluated at.
const TIME: &str = "1787392800000000000";

fn heavy_body() -> String {
    let mut out = String::with_capacity(ROWS * 160);
    for i in 0..ROWS {
        // Within the hour before TIME.
        let (m, s) = (i / 60 % 60, i % 60);
        out.push_str(&format!(
            r#"{{"_time":"2026-08-22T09:{m:02}:{s:02}.{i:09}Z","_stream_id":"1","_stream":"{{app=\"a\"}}","_msg":"{{\"x\":\"{}\",\"msg\":\"request {i} served\",\"status\":200}}","app":"a"}}"#,
            i % 7
        ));
        out.push('\n');
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_and_cache_hits_are_served_during_heavy_queries() {
    let vl = fake_vl(vec![
        ("/select/logsql/query", Canned::ok(&heavy_body())),
        ("/health", Canned::ok("OK")),
        (
            "/select/logsql/stream_field_names",
            Canned::ok(r#"{"values":[{"value":"app","hits":1}]}"#),
        ),
    ])
    .await;
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.cache.max_bytes = 64 << 20;
    let base = start_proxy(settings).await;
    // A closed range: its answer is kept and served from the cache.
    let labels = format!(
        "{base}/loki/api/v1/labels?{}",
        qs(&[("start", "1787389200000000000"), ("end", TIME)])
    );
    let primed = get(&labels).await;
    assert_eq!(primed.status, 200, "{}", primed.body);

    let done = Arc::new(AtomicUsize::new(0));
    let heavy: Vec<_> = (0..HEAVY)
        .map(|i| {
            // Distinct queries: nothing is shared or cached between them.
            let url = format!(
                "{base}/loki/api/v1/query?{}",
                qs(&[
                    (
                        "query",
                        &format!(r#"sum(count_over_time({{app="a"}} | json | x!="q{i}" [1h]))"#),
                    ),
                    ("time", TIME),
                ])
            );
            let done = Arc::clone(&done);
            tokio::spawn(async move {
                let a = get(&url).await;
                done.fetch_add(1, Ordering::SeqCst);
                a
            })
        })
        .collect();
    // Every heavy query has its rows: from now on they only compute.
    let waiting = Instant::now();
    while vl
        .requests()
        .iter()
        .filter(|r| r.path == "/select/logsql/query")
        .count()
        < HEAVY
    {
        assert!(
            waiting.elapsed() < Duration::from_secs(60),
            "the heavy queries never reached VictoriaLogs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let started = Instant::now();
    let ready = get(&format!("{base}/ready")).await;
    let ready_took = started.elapsed();
    assert_eq!(ready.status, 200, "{}", ready.body);
    let started = Instant::now();
    let hit = get(&labels).await;
    let hit_took = started.elapsed();
    assert_eq!(hit.status, 200, "{}", hit.body);
    assert_eq!(hit.body, primed.body);
    let finished = done.load(Ordering::SeqCst);
    assert!(
        ready_took < CHEAP_BOUND && hit_took < CHEAP_BOUND,
        "/ready took {ready_took:?}, the cache hit {hit_took:?}, with {finished} of {HEAVY} heavy queries done"
    );
    // The probes ran under load, not after it.
    assert!(finished < HEAVY, "every heavy query was done already");
    // Dropping the clients lets lokivl stop the work for them.
    for h in heavy {
        h.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_timeout_fires_during_row_work() {
    let vl = fake_vl(vec![("/select/logsql/query", Canned::ok(&heavy_body()))]).await;
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.limits.query_timeout = Duration::from_millis(300);
    let base = start_proxy(settings).await;
    let url = format!(
        "{base}/loki/api/v1/query?{}",
        qs(&[
            ("query", r#"sum(count_over_time({app="a"} | json [1h]))"#),
            ("time", TIME),
        ])
    );
    let started = Instant::now();
    let a = get(&url).await;
    let took = started.elapsed();
    // Loki's `query_timeout` answer, at the deadline: with the rows
    // processed inline, nothing could fire before they were all done (about
    // 2 s in a debug build), and the answer was a late 200.
    assert!(
        a.assert_error(http::StatusCode::GATEWAY_TIMEOUT)
            .starts_with("request timed out, decrease the duration of the request"),
        "{}",
        a.body
    );
    assert!(took < CHEAP_BOUND, "answered after {took:?}");
}
