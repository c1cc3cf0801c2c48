//! Request-side limits and the server layers: size limits, rate limits, the
//! in-flight cap, security headers, request ids, `/health` and the separate
//! metrics listener.

use std::time::Duration;

use crate::support::client::{get_within, raw_get};
use crate::support::fake_vl::FakeVl;
use crate::support::fake_vl::faults::*;
use crate::support::lokivl::start_proxy;

const T: Duration = Duration::from_secs(5);

fn healthy() -> Fault {
    Fault::Healthy(format!("{LINE}\n"))
}

#[tokio::test]
async fn url_and_header_limits() {
    let vl = FakeVl::faulty(healthy()).await;
    let base = start_proxy(settings(&vl.url)).await;
    // 60 KiB of Drilldown-style pipeline passes the size checks.
    let long_ok = format!(
        "{base}/loki/api/v1/query_range?query=%7Bapp%3D%22api%22%7D{}&start=1787389200&end=1787392800",
        "%20%7C%3D%20%22x%22".repeat(3300)
    );
    assert!(long_ok.len() > 60_000 && long_ok.len() < 64 * 1024);
    let a = get_within(&long_ok, &[], T).await.unwrap();
    assert_ne!(a.status, 414, "{}", a.body);
    assert!(a.status.as_u16() < 500, "{} {}", a.status, a.body);
    // Past 64 KiB: refused with 414 (by hyper when the URI type cannot even hold it).
    let target = format!("/loki/api/v1/labels?x={}", "a".repeat(70_000));
    let (status, _) = raw_get(&base, target.as_bytes()).await;
    assert_eq!(status, 414);
    // A configured limit below that answers lokivl's own text.
    let mut small = settings(&vl.url);
    small.limits.max_url_bytes = 1000;
    let small = start_proxy(small).await;
    let target = format!("/loki/api/v1/labels?x={}", "a".repeat(1000));
    let (status, body) = raw_get(&small, target.as_bytes()).await;
    assert_eq!(status, 414, "{body}");
    assert!(
        body.contains("request URL too long: 1022 bytes, limit 1000 bytes"),
        "{body}"
    );
    let big = "v".repeat(40_000);
    let a = get_within(
        &format!("{base}/loki/api/v1/labels"),
        &[("x-a", &big), ("x-b", &big)],
        T,
    )
    .await
    .unwrap();
    assert_eq!(a.status, 431, "{}", a.body);
}

#[tokio::test]
async fn body_limit_is_413() {
    let vl = FakeVl::faulty(healthy()).await;
    let mut s = settings(&vl.url);
    s.limits.max_body_bytes = 1000;
    let base = start_proxy(s).await;
    let a = crate::support::client::try_post(
        &format!("{base}/loki/api/v1/query_range"),
        "application/x-www-form-urlencoded",
        ("query=".to_owned() + &"a".repeat(5000)).into_bytes(),
    )
    .await
    .unwrap();
    assert_eq!(a.status, 413);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenant_rate_limit_is_429_per_tenant() {
    let vl = FakeVl::faulty(healthy()).await;
    let mut s = settings(&vl.url);
    s.limits.tenant_rate = 0.001; // effectively no refill during the test
    s.limits.tenant_burst = 2;
    let base = start_proxy(s).await;
    let url = format!("{base}/loki/api/v1/status/buildinfo");
    // Numeric ids: names must be in --tenant-map (unknown names get 401).
    for _ in 0..2 {
        let a = get_within(&url, &[("X-Scope-OrgID", "1")], T)
            .await
            .unwrap();
        assert_eq!(a.status, 200);
    }
    let a = get_within(&url, &[("X-Scope-OrgID", "1")], T)
        .await
        .unwrap();
    assert_eq!(a.status, 429);
    assert_eq!(a.body, "too many outstanding requests");
    assert!(a.headers.get("retry-after").is_some());
    // Another tenant, and the default tenant, still pass.
    let a = get_within(&url, &[("X-Scope-OrgID", "2")], T)
        .await
        .unwrap();
    assert_eq!(a.status, 200);
    let a = get_within(&url, &[], T).await.unwrap();
    assert_eq!(a.status, 200);
}

/// A cached answer is still a request: the tenant's rate limit refuses it
/// like any other, or a client over its limit could keep polling for free
/// (the cache-hit front checks admission after its lookup).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenant_rate_limit_refuses_cache_hits() {
    let vl = FakeVl::faulty(healthy()).await;
    let mut s = settings(&vl.url);
    s.limits.tenant_rate = 0.001;
    s.limits.tenant_burst = 2;
    let base = start_proxy(s).await;
    let url = query_url(&base);
    let org = [("X-Scope-OrgID", "7")];
    let first = get_within(&url, &org, T).await.unwrap();
    assert_eq!(first.status, 200);
    let calls = vl.request_count();
    assert!(calls >= 1);
    // The same closed range again: served from the cache, no backend call.
    let hit = get_within(&url, &org, T).await.unwrap();
    assert_eq!(hit.status, 200);
    assert_eq!(hit.body, first.body);
    assert_eq!(vl.request_count(), calls);
    // Burst spent: the cached answer is refused with Loki's 429.
    let refused = get_within(&url, &org, T).await.unwrap();
    assert_eq!(refused.status, 429);
    assert_eq!(refused.body, "too many outstanding requests");
    assert!(refused.headers.get("retry-after").is_some());
    // Another tenant gets its own entry (and its own tokens).
    let other = get_within(&url, &[("X-Scope-OrgID", "8")], T)
        .await
        .unwrap();
    assert_eq!(other.status, 200);
    assert!(vl.request_count() > calls);
}

#[tokio::test]
async fn inflight_cap_is_429() {
    let vl = FakeVl::faulty(Fault::Hung).await;
    let mut s = settings(&vl.url);
    s.backend_timeout = Duration::from_secs(10);
    s.limits.max_inflight = 1;
    let base = start_proxy(s).await;
    let url = query_url(&base);
    let held = tokio::spawn(async move { get_within(&url, &[], Duration::from_secs(10)).await });
    let started = std::time::Instant::now();
    loop {
        let a = get_within(&format!("{base}/loki/api/v1/status/buildinfo"), &[], T)
            .await
            .unwrap();
        if a.status == 429 {
            assert_eq!(a.body, "too many outstanding requests");
            break;
        }
        assert!(started.elapsed() < T, "never capped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    held.abort();
}

#[tokio::test]
async fn security_headers_request_id_and_health() {
    let vl = FakeVl::faulty(healthy()).await;
    let base = start_proxy(settings(&vl.url)).await;
    let a = get_within(&format!("{base}/health"), &[("x-request-id", "gw-42")], T)
        .await
        .unwrap();
    assert_eq!((a.status.as_u16(), a.body.as_str()), (200, "OK"));
    assert_eq!(a.headers["x-request-id"], "gw-42");
    for (h, v) in [
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-store"),
    ] {
        assert_eq!(a.headers[h], v, "{h}");
    }
    assert!(a.headers.contains_key("content-security-policy"));
    // A fresh id is made when none (or a bad one) is sent.
    let b = get_within(&format!("{base}/health"), &[], T).await.unwrap();
    let c = get_within(&format!("{base}/health"), &[], T).await.unwrap();
    assert_ne!(b.headers["x-request-id"], c.headers["x-request-id"]);
}

#[tokio::test]
async fn metrics_on_a_separate_listener() {
    let vl = FakeVl::faulty(healthy()).await;
    let mut s = settings(&vl.url);
    s.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    let routers = proxy::app::routers(s).unwrap();
    let api = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (api_url, admin_url) = (
        format!("http://{}", api.local_addr().unwrap()),
        format!("http://{}", admin.local_addr().unwrap()),
    );
    tokio::spawn(proxy::app::serve(api, routers.api, std::future::pending()));
    tokio::spawn(proxy::app::serve(
        admin,
        routers.admin.unwrap(),
        std::future::pending(),
    ));
    let a = get_within(&format!("{api_url}/health"), &[], T)
        .await
        .unwrap();
    assert_eq!(a.status, 200);
    let a = get_within(&format!("{api_url}/metrics"), &[], T)
        .await
        .unwrap();
    assert_eq!(a.status, 404);
    let m = get_within(&format!("{admin_url}/metrics"), &[], T)
        .await
        .unwrap();
    assert_eq!(m.status, 200);
    // The API request above is counted in the shared registry.
    assert!(
        m.body
            .contains(r#"lokivl_http_requests_total{route="/health",status="200"} 1"#),
        "{}",
        m.body
    );
    assert!(m.body.contains("process_resident_memory_bytes"));
}

#[tokio::test]
async fn graceful_shutdown_drains_in_flight_requests() {
    let vl = FakeVl::faulty(Fault::Slow(1)).await;
    let mut s = settings(&vl.url);
    s.backend_timeout = Duration::from_secs(10);
    let router = proxy::app::router(s).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(proxy::app::serve(listener, router, async move {
        let _ = stopped.await;
    }));
    // A query that takes ~3 s at the backend (20 lines, 1 ms per byte).
    let url = query_url(&base);
    let inflight =
        tokio::spawn(async move { get_within(&url, &[], Duration::from_secs(20)).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.send(()).unwrap();
    let a = inflight.await.unwrap().expect("in-flight request answered");
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(a.body.contains("hello"));
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("server stops after draining")
        .unwrap()
        .unwrap();
    // New connections are refused once stopped.
    assert!(
        get_within(&format!("{base}/health"), &[], Duration::from_secs(1))
            .await
            .is_err()
    );
}

/// `--max-concurrent-log-queries`: a log query past the cap waits for a
/// slot (it reaches VictoriaLogs only when the running one ends), while
/// metric queries and routes that evaluate nothing go ahead.
#[tokio::test]
async fn log_queries_past_the_cap_wait_for_a_slot() {
    let vl = FakeVl::faulty(Fault::Hung).await;
    let mut s = settings(&vl.url);
    s.backend_timeout = Duration::from_secs(30);
    s.limits.max_concurrent_log_queries = 1;
    let base = start_proxy(s).await;
    let long = Duration::from_secs(30);
    let started = std::time::Instant::now();
    let reached = |above: u64, what: &str| {
        let what = what.to_owned();
        let vl = &vl;
        async move {
            while vl.request_count() <= above {
                assert!(
                    started.elapsed() < 2 * T,
                    "{what} never reached VictoriaLogs"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    let first = query_url(&base);
    let held = tokio::spawn(async move { get_within(&first, &[], long).await });
    reached(0, "the first log query").await;
    let calls = vl.request_count();
    let second = query_url(&base);
    let waiting = tokio::spawn(async move { get_within(&second, &[], long).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        vl.request_count(),
        calls,
        "the second log query waits for the slot"
    );
    assert!(!waiting.is_finished());
    // A metric query takes no slot.
    let metric = format!(
        "{base}/loki/api/v1/query_range?query=sum(count_over_time(%7Bapp%3D%22api%22%7D%5B5m%5D))&start=1787389200000000000&end=1787392800000000000&step=60"
    );
    let metric = tokio::spawn(async move { get_within(&metric, &[], long).await });
    reached(calls, "the metric query").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let calls = vl.request_count();
    let info = get_within(&format!("{base}/loki/api/v1/status/buildinfo"), &[], T)
        .await
        .unwrap();
    assert_eq!(info.status, 200);
    assert!(!waiting.is_finished());
    // The first client leaves: its evaluation stops and the slot passes on.
    held.abort();
    reached(calls, "the waiting log query").await;
    waiting.abort();
    metric.abort();
}
