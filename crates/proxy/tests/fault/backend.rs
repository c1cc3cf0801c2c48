//! Backend faults: killed, hung, slow, garbage and truncated VictoriaLogs.
//!
//! Each fault must give its documented status and text within the configured
//! deadline, and lokivl must answer normally again within 5 s of the backend
//! coming back. Timeouts are short real durations (real sockets cannot run on
//! tokio's paused clock); the bounds asserted are generous, never performance
//! figures.

use std::time::{Duration, Instant};

use crate::support::client::{Answer, get_within};
use crate::support::fake_vl::FakeVl;
use crate::support::fake_vl::faults::*;
use crate::support::lokivl::start_proxy;

const HEALTHY: fn() -> Fault = || Fault::Healthy(format!("{LINE}\n"));
/// The most any single faulty request may take: the 600 ms deadline plus slack for a busy CI box.
const FAULT_BOUND: Duration = Duration::from_secs(3);
const RECOVERY_BOUND: Duration = Duration::from_secs(5);

/// Polls until a query answers 200; returns how long it took (panics past the bound).
async fn recovers(base: &str) -> Duration {
    let started = Instant::now();
    loop {
        if let Ok(a) = get_within(&query_url(base), &[], Duration::from_secs(2)).await
            && a.status == 200
        {
            assert!(a.body.contains("hello"), "{}", a.body);
            return started.elapsed();
        }
        assert!(
            started.elapsed() < RECOVERY_BOUND,
            "lokivl did not recover within {RECOVERY_BOUND:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Sends one query and checks status, a text fragment and the time bound.
async fn expect(base: &str, status: u16, fragment: &str) -> Answer {
    let started = Instant::now();
    let a = get_within(&query_url(base), &[], FAULT_BOUND + Duration::from_secs(1))
        .await
        .unwrap_or_else(|_| panic!("no answer within {FAULT_BOUND:?}"));
    assert!(
        started.elapsed() < FAULT_BOUND,
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(a.status, status, "{}", a.body);
    assert!(
        a.body.contains(fragment),
        "{fragment:?} not in {:?}",
        a.body
    );
    assert_eq!(
        a.headers.get("content-type").unwrap(),
        "text/plain; charset=utf-8"
    );
    a
}

#[tokio::test]
async fn healthy_backend_answers() {
    let vl = FakeVl::faulty(HEALTHY()).await;
    let base = start_proxy(settings(&vl.url)).await;
    recovers(&base).await;
}

#[tokio::test]
async fn killed_backend_is_502_then_breaker_503_then_recovers() {
    let vl = FakeVl::faulty(HEALTHY()).await;
    let base = start_proxy(settings(&vl.url)).await;
    recovers(&base).await;
    vl.kill();
    // Three failures (the breaker threshold) name VictoriaLogs and are not timeouts.
    for _ in 0..3 {
        let a = expect(&base, 502, "cannot reach VictoriaLogs").await;
        assert!(!a.body.contains("timeout"), "{}", a.body);
    }
    // Then the breaker answers at once with Retry-After.
    let a = expect(&base, 503, "VictoriaLogs is failing").await;
    assert_eq!(a.headers.get("retry-after").unwrap(), "1");
    assert!(!a.body.contains("timeout"), "{}", a.body);
    // /ready follows.
    let ready = get_within(&format!("{base}/ready"), &[], FAULT_BOUND)
        .await
        .unwrap();
    assert_eq!(ready.status, 503);
    vl.restart().await;
    recovers(&base).await;
}

#[tokio::test]
async fn hung_backend_is_504_with_timeout_then_recovers() {
    let vl = FakeVl::faulty(Fault::Hung).await;
    let base = start_proxy(settings(&vl.url)).await;
    let a = expect(&base, 504, "timeout").await;
    assert!(a.body.contains("VictoriaLogs"), "{}", a.body);
    vl.set_fault(HEALTHY());
    recovers(&base).await;
}

#[tokio::test]
async fn slow_body_is_504_then_recovers() {
    // 20 lines, one byte every 5 ms: about 10 s, far past the 600 ms deadline.
    let vl = FakeVl::faulty(Fault::Slow(5)).await;
    let base = start_proxy(settings(&vl.url)).await;
    expect(&base, 504, "timeout").await;
    vl.set_fault(HEALTHY());
    recovers(&base).await;
}

#[tokio::test]
async fn garbage_ndjson_is_502_then_recovers() {
    let vl = FakeVl::faulty(Fault::Garbage).await;
    let base = start_proxy(settings(&vl.url)).await;
    let a = expect(&base, 502, "VictoriaLogs failed").await;
    assert!(!a.body.contains("timeout"), "{}", a.body);
    vl.set_fault(HEALTHY());
    recovers(&base).await;
}

#[tokio::test]
async fn truncated_body_is_502_then_recovers() {
    let vl = FakeVl::faulty(Fault::Truncated).await;
    let base = start_proxy(settings(&vl.url)).await;
    let a = expect(&base, 502, "VictoriaLogs failed").await;
    assert!(
        a.body.contains("end of file before message length reached"),
        "{}",
        a.body
    );
    assert!(!a.body.contains("timeout"), "{}", a.body);
    vl.set_fault(HEALTHY());
    recovers(&base).await;
}

#[tokio::test]
async fn oversized_answer_is_lokis_bytes_limit_not_a_5xx() {
    let body = format!("{LINE}\n").repeat(100);
    let size = body.len();
    let vl = FakeVl::faulty(Fault::Healthy(body)).await;
    let mut s = settings(&vl.url);
    s.backend_options.max_response_bytes = 1000;
    let base = start_proxy(s).await;
    // Loki's `max_query_bytes_read` refusal, sizes as go-humanize's IBytes.
    let text = format!(
        "the query would read too many bytes (query: {}, limit: 1000 B); consider adding more specific stream selectors or reduce the time range of the query",
        go::humanize::ibytes(size as u64)
    );
    let a = expect(&base, 400, &text).await;
    assert_eq!(a.body, text);
    // A refused size is not a backend fault: the breaker stays closed.
    for _ in 0..4 {
        expect(&base, 400, "the query would read too many bytes").await;
    }
    // A metric query reading raw samples gets the same refusal.
    let q = form_urlencoded::Serializer::new(String::new())
        .append_pair(
            "query",
            r#"quantile_over_time(0.9, {app="api"} | unwrap took [1h])"#,
        )
        .append_pair("time", "1787392800000000000")
        .finish();
    let a = get_within(
        &format!("{base}/loki/api/v1/query?{q}"),
        &[],
        FAULT_BOUND + Duration::from_secs(1),
    )
    .await
    .expect("an answer");
    assert_eq!(a.status, 400, "{}", a.body);
    assert!(
        a.body.starts_with("the query would read too many bytes"),
        "{}",
        a.body
    );
}

#[tokio::test]
async fn query_timeout_is_504_with_lokis_text() {
    let vl = FakeVl::faulty(Fault::Hung).await;
    let mut s = settings(&vl.url);
    s.backend_timeout = Duration::from_secs(30);
    s.limits.query_timeout = Duration::from_millis(300);
    let base = start_proxy(s).await;
    let a = expect(
        &base,
        504,
        "request timed out, decrease the duration of the request",
    )
    .await;
    assert!(a.body.contains("timeout"), "{}", a.body);
}

#[tokio::test]
async fn full_backend_queue_is_503_with_retry_after() {
    let vl = FakeVl::faulty(Fault::Hung).await;
    let mut s = settings(&vl.url);
    s.backend_timeout = Duration::from_secs(5);
    s.backend_options.concurrency = 1;
    s.backend_options.queue = 1;
    let base = start_proxy(s).await;
    // One call runs (hung), one waits; the third is refused at once.
    let mut held = Vec::new();
    for _ in 0..2 {
        let url = query_url(&base);
        held.push(tokio::spawn(async move {
            get_within(&url, &[], Duration::from_secs(10)).await
        }));
    }
    let started = Instant::now();
    let refused = loop {
        let a = get_within(&query_url(&base), &[], FAULT_BOUND)
            .await
            .unwrap();
        if a.status == 503 {
            break a;
        }
        assert!(
            started.elapsed() < FAULT_BOUND,
            "never refused: {}",
            a.status
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(refused.body.contains("wait queue full"), "{}", refused.body);
    assert_eq!(refused.headers.get("retry-after").unwrap(), "1");
    for h in held {
        h.abort();
    }
}

#[tokio::test]
async fn client_disconnect_cancels_the_backend_call_and_counts_499() {
    let vl = FakeVl::faulty(Fault::Hung).await;
    let mut s = settings(&vl.url);
    s.backend_timeout = Duration::from_secs(30);
    let base = start_proxy(s).await;
    // The client gives up after 300 ms; its connection closes.
    assert!(
        get_within(&query_url(&base), &[], Duration::from_millis(300))
            .await
            .is_err()
    );
    let started = Instant::now();
    while vl.closed_while_hung() == 0 {
        assert!(
            started.elapsed() < FAULT_BOUND,
            "VictoriaLogs connection still open after the client left"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let metrics = get_within(&format!("{base}/metrics"), &[], FAULT_BOUND)
        .await
        .unwrap();
    assert!(
        metrics.body.contains(
            r#"lokivl_http_requests_total{route="/loki/api/v1/query_range",status="499"} 1"#
        ),
        "{}",
        metrics.body
    );
}
