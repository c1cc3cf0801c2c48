//! The response cache at the edge: in-flight deduplication, stored answers for
//! closed ranges, isolation by tenant and response shape, and the byte bound.

use std::time::Duration;

use crate::support::client::get;
use crate::support::client::get_with;
use crate::support::client::qs;
use crate::support::fake_vl::Canned;
use crate::support::fake_vl::fake_vl;
use crate::support::lokivl::start_proxy;
use http::StatusCode;

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

fn count(vl: &crate::support::fake_vl::FakeVl, path: &str) -> usize {
    vl.requests().iter().filter(|r| r.path == path).count()
}

async fn proxy_for(vl: &crate::support::fake_vl::FakeVl, max_bytes: u64) -> String {
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
    let posted = crate::support::client::request(
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

/// A fake VictoriaLogs whose one log line is the request it got (its
/// `query`, `start`, `end` and `limit`), so an answer shows which
/// parameters produced it.
async fn echo_vl() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let app = axum::Router::new().fallback(move |body: String| {
        let seen = seen.clone();
        async move {
            seen.fetch_add(1, Ordering::SeqCst);
            let form: Vec<(String, String)> = form_urlencoded::parse(body.as_bytes())
                .into_owned()
                .filter(|(k, _)| matches!(k.as_str(), "query" | "start" | "end" | "limit"))
                .collect();
            let msg = form
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ");
            let row = serde_json::json!({
                "_time": "2025-01-15T10:00:00Z",
                "_stream_id": "x",
                "_stream": "{app=\"api\"}",
                "_msg": msg,
                "app": "api",
            });
            format!("{row}\n")
        }
    });
    let addr = crate::support::fake_vl::FakeVl::serving(app).await.addr;
    (addr, calls)
}

/// The one log line of a streams answer.
fn line(a: &crate::support::client::Answer) -> String {
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.json()["data"]["result"][0]["values"][0][1]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn echo_proxy() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let (addr, calls) = echo_vl().await;
    let mut settings = proxy::config::Settings::new(&format!("http://{addr}")).unwrap();
    settings.cache.max_bytes = 64 << 20;
    (start_proxy(settings).await, calls)
}

fn calls(c: &std::sync::Arc<std::sync::atomic::AtomicUsize>) -> usize {
    c.load(std::sync::atomic::Ordering::SeqCst)
}

/// Closed-range parameters with one parameter given twice, `first` then `second`.
fn twice(name: &str, first: &str, second: &str) -> String {
    let mut pairs = vec![
        ("query", r#"{app="api"}"#),
        ("start", "1736935000000000000"),
        ("end", "1736936000000000000"),
        ("limit", "10"),
    ];
    pairs.retain(|(k, _)| *k != name);
    pairs.insert(1, (name, first));
    pairs.push((name, second));
    qs(&pairs)
}

#[tokio::test]
async fn repeated_parameters_are_read_first_value_first_by_key_and_handler_alike() {
    let (base, c) = echo_proxy().await;
    let url = |q: &str| format!("{base}/loki/api/v1/query_range?{q}");
    for (name, x, y) in [
        ("start", "1736935500000000000", "1736935000000000000"),
        ("end", "1736935900000000000", "1736936000000000000"),
        ("query", r#"{app="api"} |= "x""#, r#"{app="api"} |= "y""#),
        ("limit", "5", "7"),
    ] {
        let before = calls(&c);
        // A: `x` then `y`; the handler reads `x`.
        let a = line(&get(&url(&twice(name, x, y))).await);
        // B: `y` then `x`; it must be B's own answer, not A's.
        let b = line(&get(&url(&twice(name, y, x))).await);
        assert_ne!(a, b, "{name}");
        assert_eq!(calls(&c), before + 2, "{name}");
        // Each is exactly the answer to its first value alone.
        let only = |v: &str| {
            let mut pairs = vec![
                ("query", r#"{app="api"}"#),
                ("start", "1736935000000000000"),
                ("end", "1736936000000000000"),
                ("limit", "10"),
            ];
            for p in &mut pairs {
                if p.0 == name {
                    p.1 = v;
                }
            }
            qs(&pairs)
        };
        assert_eq!(line(&get(&url(&only(x))).await), a, "{name}");
        assert_eq!(line(&get(&url(&only(y))).await), b, "{name}");
        // A again is a hit on A's entry.
        let again = calls(&c);
        assert_eq!(line(&get(&url(&twice(name, x, y))).await), a, "{name}");
        assert_eq!(calls(&c), again, "{name}");
    }
}

#[tokio::test]
async fn a_form_body_comes_before_the_url_in_key_and_handler_alike() {
    let (base, c) = echo_proxy().await;
    let (late, early) = ("1736935500000000000", "1736935000000000000");
    let rest = qs(&[
        ("query", r#"{app="api"}"#),
        ("end", "1736936000000000000"),
        ("limit", "10"),
    ]);
    let post = |body: String, url_start: &str, ct: &str| {
        let url = format!(
            "{base}/loki/api/v1/query_range?{}",
            qs(&[("start", url_start)])
        );
        let ct = ct.to_owned();
        async move { crate::support::client::request(http::Method::POST, &url, &body, &ct).await }
    };
    const FORM: &str = "application/x-www-form-urlencoded";
    // A: body start=late, URL start=early: the handler reads `late`.
    let a = line(&post(format!("start={late}&{rest}"), early, FORM).await);
    assert!(a.contains("start=1736935500000000000"), "{a}");
    // B: body start=early, URL start=late: its own answer.
    let b = line(&post(format!("start={early}&{rest}"), late, FORM).await);
    assert!(b.contains("start=1736935000000000000"), "{b}");
    assert_eq!(calls(&c), 2);
    // A GET with `start=late&start=early` is A's request exactly: a hit.
    let get_a = format!("{base}/loki/api/v1/query_range?start={late}&start={early}&{rest}");
    assert_eq!(line(&get(&get_a).await), a);
    assert_eq!(calls(&c), 2);
    // A body that is not a form is ignored by the handler, as by Loki, and
    // so by the key: not A (which has the same pairs), but the URL alone.
    let url_early = format!("{base}/loki/api/v1/query_range?start={early}&{rest}");
    let text = crate::support::client::request(
        http::Method::POST,
        &url_early,
        &format!("start={late}"),
        "text/plain",
    )
    .await;
    let text = line(&text);
    assert!(text.contains("start=1736935000000000000"), "{text}");
    assert_eq!(calls(&c), 3);
    assert_eq!(line(&get(&url_early).await), text);
    assert_eq!(calls(&c), 3);
}

#[tokio::test]
async fn encoding_flags_are_read_from_the_first_header_value_by_key_and_handler_alike() {
    let vl = fake_vl(vec![("/select/logsql/query", Canned::ok(ROW))]).await;
    let base = proxy_for(&vl, 64 << 20).await;
    let url = format!(
        "{base}/loki/api/v1/query_range?{}",
        closed(r#"{app="api"}"#)
    );
    const F: &str = "X-Loki-Response-Encoding-Flags";
    let flags = |a: &crate::support::client::Answer| a.json()["data"].get("encodingFlags").cloned();
    // A: `other` then `categorize-labels`: Loki reads `other` only.
    let a = get_with(&url, &[(F, "other"), (F, "categorize-labels")]).await;
    assert_eq!(flags(&a), None);
    // B: `categorize-labels` first: 3-tuples, its own entry.
    let b = get_with(&url, &[(F, "categorize-labels"), (F, "other")]).await;
    assert_eq!(flags(&b), Some(serde_json::json!(["categorize-labels"])));
    assert_eq!(count(&vl, "/select/logsql/query"), 2);
    // C: `other` alone reads as A did, and shares A's entry.
    let c = get_with(&url, &[(F, "other")]).await;
    assert_eq!(c.body, a.body);
    // D: `categorize-labels` alone shares B's.
    let d = get_with(&url, &[(F, "categorize-labels")]).await;
    assert_eq!(d.body, b.body);
    assert_eq!(count(&vl, "/select/logsql/query"), 2);
}

#[tokio::test]
async fn a_negative_offset_keeps_an_answer_live() {
    let vl = fake_vl(vec![("/select/logsql/query", Canned::ok(""))]).await;
    let base = proxy_for(&vl, 64 << 20).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    // The hour boundary at least 10 minutes old; the range ends a minute
    // before it (closed by its `end`) and stays inside one metric window.
    let hour = (now - 600).div_euclid(3600) * 3600;
    let (start, end) = ((hour - 660).to_string(), (hour - 60).to_string());
    let url = |query: &str| {
        format!(
            "{base}/loki/api/v1/query_range?{}",
            qs(&[
                ("query", query),
                ("start", &start),
                ("end", &end),
                ("step", "60")
            ])
        )
    };
    let plain = url(r#"sum(count_over_time({app="api"}[1m]))"#);
    for _ in 0..2 {
        let a = get(&plain).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    }
    assert_eq!(
        count(&vl, "/select/logsql/query"),
        1,
        "kept: the range is closed"
    );
    // `offset -2h` reads up to `end + 2h`, past now: live, not kept.
    let ahead = url(r#"sum(count_over_time({app="api"}[1m] offset -2h))"#);
    for _ in 0..2 {
        let a = get(&ahead).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    }
    assert_eq!(count(&vl, "/select/logsql/query"), 3);
}

#[tokio::test]
async fn a_long_form_body_reaches_the_handler_whole() {
    let (base, c) = echo_proxy().await;
    let url = format!("{base}/loki/api/v1/query_range");
    const FORM: &str = "application/x-www-form-urlencoded";
    // 100 KiB of query and 200 KiB of another parameter: beyond the old
    // 256 KiB key bound, which handed the handler an empty body.
    let needle = "n".repeat(100 * 1024);
    let query = format!(r#"{{app="api"}} |= "{needle}""#);
    let pad = "p".repeat(200 * 1024);
    let body = qs(&[
        ("query", &query),
        ("start", "1736935000000000000"),
        ("end", "1736936000000000000"),
        ("limit", "10"),
        ("pad", &pad),
    ]);
    let a = crate::support::client::request(http::Method::POST, &url, &body, FORM).await;
    assert!(line(&a).contains(&needle));
    assert_eq!(calls(&c), 1);
    // Kept and found again under the same key.
    let again = crate::support::client::request(http::Method::POST, &url, &body, FORM).await;
    assert_eq!(again.body, a.body);
    assert_eq!(calls(&c), 1);
    // A 300 KiB query gets Loki's parser bound, not `unexpected $end`.
    let long = format!(r#"{{app="api"}} |= "{}""#, "n".repeat(300 * 1024));
    let body = qs(&[("query", &long), ("limit", "10")]);
    let a = crate::support::client::request(http::Method::POST, &url, &body, FORM).await;
    assert_eq!(
        a.assert_error(StatusCode::BAD_REQUEST),
        "parse error : input size too long (307217 > 131072)"
    );
    assert_eq!(calls(&c), 1);
}

#[tokio::test]
async fn a_form_body_over_10_mib_gets_lokis_answer_with_or_without_the_cache() {
    for max_bytes in [64 << 20, 0] {
        let (addr, c) = echo_vl().await;
        let mut settings = proxy::config::Settings::new(&format!("http://{addr}")).unwrap();
        settings.cache.max_bytes = max_bytes;
        let base = start_proxy(settings).await;
        let url = format!("{base}/loki/api/v1/query_range");
        const FORM: &str = "application/x-www-form-urlencoded";
        let pad = |n: usize| {
            let head = "limit=10&query=%7Bapp%3D%22api%22%7D&x=";
            format!("{head}{}", "a".repeat(n - head.len()))
        };
        // Exactly 10 MiB is read.
        let a =
            crate::support::client::request(http::Method::POST, &url, &pad(10 << 20), FORM).await;
        assert_eq!(a.status, StatusCode::OK, "{max_bytes}: {}", a.body);
        assert_eq!(calls(&c), 1);
        // One byte more is Loki's 400.
        let a =
            crate::support::client::request(http::Method::POST, &url, &pad((10 << 20) + 1), FORM)
                .await;
        assert_eq!(
            a.assert_error(StatusCode::BAD_REQUEST),
            "http: POST too large",
            "{max_bytes}"
        );
        assert_eq!(calls(&c), 1);
    }
}
