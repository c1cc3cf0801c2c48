//! The response cache at the edge: in-flight deduplication, stored answers for
//! closed ranges, isolation by tenant and response shape, and the byte bound.

mod http_common;

use std::time::Duration;

use http::StatusCode;
use http_common::{Canned, fake_vl, get, get_with, qs, start_proxy};

const ROW: &str = r#"{"_time":"2025-01-15T10:00:00Z","_stream_id":"x","_stream":"{app=\"api\"}","_msg":"hello","app":"api"}"#;

/// A closed range (2025), so answers are kept for the long TTL.
fn closed(query: &str) -> String {
    qs(&[
        ("query", query),
        ("start", "1736935000000000000"),
        ("end", "1736936000000000000"),
        ("limit", "10"),
    ])
}

fn count(vl: &http_common::FakeVl, path: &str) -> usize {
    vl.requests().iter().filter(|r| r.path == path).count()
}

async fn proxy_for(vl: &http_common::FakeVl, max_bytes: u64) -> String {
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.cache.max_bytes = max_bytes;
    start_proxy(settings).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_identical_requests_in_flight_make_one_backend_call() {
    let mut slow = Canned::ok(ROW);
    slow.delay = Duration::from_millis(300);
    let vl = fake_vl(vec![("/select/logsql/query", slow)]).await;
    let base = proxy_for(&vl, 64 << 20).await;
    // The live edge (no `end`): nothing is kept, but in-flight requests share one call.
    let url = format!(
        "{base}/loki/api/v1/query_range?{}",
        qs(&[("query", r#"{app="api"}"#), ("limit", "10")])
    );
    let tasks: Vec<_> = (0..100)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { get(&url).await })
        })
        .collect();
    let mut bodies = Vec::new();
    for t in tasks {
        let a = t.await.unwrap();
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        bodies.push(a.body);
    }
    assert_eq!(count(&vl, "/select/logsql/query"), 1);
    assert!(bodies.iter().all(|b| b == &bodies[0]));
    assert!(bodies[0].contains("hello"));

    // Once finished, a live-edge answer is not kept: the next request asks again.
    let again = get(&url).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(count(&vl, "/select/logsql/query"), 2);
}

#[tokio::test]
async fn closed_ranges_are_served_from_stored_bytes() {
    let vl = fake_vl(vec![("/select/logsql/query", Canned::ok(ROW))]).await;
    let base = proxy_for(&vl, 64 << 20).await;
    let url = format!(
        "{base}/loki/api/v1/query_range?{}",
        closed(r#"{app="api"}"#)
    );
    let first = get(&url).await;
    let second = get(&url).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(second.body, first.body);
    assert_eq!(second.content_type(), "application/json; charset=utf-8");
    assert_eq!(count(&vl, "/select/logsql/query"), 1);

    // A form POST of the same parameters, in another order, is the same entry.
    let body = qs(&[
        ("limit", "10"),
        ("end", "1736936000000000000"),
        ("start", "1736935000000000000"),
        ("query", r#"{app="api"}"#),
    ]);
    let posted = http_common::request(
        http::Method::POST,
        &format!("{base}/loki/api/v1/query_range"),
        &body,
        "application/x-www-form-urlencoded",
    )
    .await;
    assert_eq!(posted.body, first.body);
    assert_eq!(count(&vl, "/select/logsql/query"), 1);

    let metrics = get(&format!("{base}/metrics")).await.body;
    assert!(
        metrics.contains(r#"lokivl_cache_requests_total{endpoint="query_range",outcome="hit"} 2"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn tenants_credentials_and_shapes_never_share_entries() {
    let vl = fake_vl(vec![("/select/logsql/query", Canned::ok(ROW))]).await;
    let base = proxy_for(&vl, 64 << 20).await;
    let url = format!(
        "{base}/loki/api/v1/query_range?{}",
        closed(r#"{app="api"}"#)
    );
    // Numeric tenants: names must be in --tenant-map (unknown ones get 401).
    let variants: [&[(&str, &str)]; 5] = [
        &[("X-Scope-OrgID", "1")],
        &[("X-Scope-OrgID", "2")],
        &[
            ("X-Scope-OrgID", "1"),
            ("X-Loki-Response-Encoding-Flags", "categorize-labels"),
        ],
        &[("X-Scope-OrgID", "1"), ("Authorization", "Bearer u2")],
        &[
            ("X-Scope-OrgID", "1"),
            ("X-Query-Tags", "Source=grafana-lokiexplore-app"),
        ],
    ];
    for (i, headers) in variants.iter().enumerate() {
        let a = get_with(&url, headers).await;
        assert_eq!(a.status, StatusCode::OK);
        assert_eq!(count(&vl, "/select/logsql/query"), i + 1, "{headers:?}");
    }
    // The 3-tuple answer differs from the 2-tuple one, as each client asked.
    let plain = get_with(&url, variants[0]).await.json();
    let categorized = get_with(&url, variants[2]).await.json();
    assert!(plain["data"].get("encodingFlags").is_none());
    assert_eq!(categorized["data"]["encodingFlags"][0], "categorize-labels");
    // Each variant again: all hits.
    for headers in variants {
        get_with(&url, headers).await;
    }
    assert_eq!(count(&vl, "/select/logsql/query"), variants.len());
}

#[tokio::test]
async fn errors_are_never_kept() {
    let vl = fake_vl(vec![(
        "/select/logsql/query",
        Canned {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            body: "boom".to_owned(),
            delay: Duration::ZERO,
        },
    )])
    .await;
    let base = proxy_for(&vl, 64 << 20).await;
    let url = format!(
        "{base}/loki/api/v1/query_range?{}",
        closed(r#"{app="api"}"#)
    );
    let first = get(&url).await;
    let second = get(&url).await;
    assert!(first.status.is_server_error(), "{}", first.body);
    assert_eq!(second.status, first.status);
    assert_eq!(second.body, first.body);
    assert_eq!(count(&vl, "/select/logsql/query"), 2);
}

#[tokio::test]
async fn the_cache_stays_within_its_byte_bound() {
    // ~4 KiB answers, a 64 KiB bound, 200 distinct closed-range queries.
    let big_line = "x".repeat(4000);
    let row = ROW.replace("hello", &big_line);
    let vl = fake_vl(vec![("/select/logsql/query", Canned::ok(&row))]).await;
    let bound: u64 = 64 * 1024;
    let base = proxy_for(&vl, bound).await;
    for i in 0..200 {
        let url = format!(
            "{base}/loki/api/v1/query_range?{}",
            closed(&format!(r#"{{app="api"}} |= "q{i}""#))
        );
        assert_eq!(get(&url).await.status, StatusCode::OK);
    }
    let metrics = get(&format!("{base}/metrics")).await.body;
    let gauge = |kind: &str| -> u64 {
        let prefix = format!(r#"lokivl_cache{{kind="{kind}"}} "#);
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {kind} gauge in {metrics}"))
            .parse()
            .unwrap()
    };
    assert!(gauge("bytes") <= bound, "{} > {bound}", gauge("bytes"));
    assert!(gauge("entries") < 200);
    assert!(gauge("evicted") > 0);
}
