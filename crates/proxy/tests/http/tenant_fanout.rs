//! Multi-tenant fan-out bounds: `--max-tenants-per-query` refuses a long
//! `X-Scope-OrgID` list before any VictoriaLogs call, and the member calls run
//! `--tenant-fanout-parallelism` at a time while the merged answer stays the
//! one a call-by-call fan-out gives (member order breaks timestamp ties).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::routing::post;

#[derive(Clone, Default)]
struct Fake {
    /// `(path, AccountID)` of every call.
    calls: Arc<Mutex<Vec<(String, u32)>>>,
    running: Arc<AtomicUsize>,
    most_running: Arc<AtomicUsize>,
    /// Calls hold until this many run at once (or 2 s pass): a call-by-call
    /// fan-out never gets there and shows `most_running` 1.
    gather: usize,
}

async fn fake(State(f): State<Fake>, uri: Uri, headers: HeaderMap) -> String {
    let account: u32 = headers
        .get("accountid")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    f.calls
        .lock()
        .unwrap()
        .push((uri.path().to_owned(), account));
    let now = f.running.fetch_add(1, Ordering::SeqCst) + 1;
    f.most_running.fetch_max(now, Ordering::SeqCst);
    let began = Instant::now();
    while f.running.load(Ordering::SeqCst) < f.gather && began.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Lower accounts answer last: completion order is the reverse of member order.
    tokio::time::sleep(Duration::from_millis(u64::from(20 - account.min(20)) * 5)).await;
    f.running.fetch_sub(1, Ordering::SeqCst);
    match uri.path() {
        "/select/logsql/query" => format!(
            "{{\"_time\":\"2026-01-01T00:00:01Z\",\"_stream_id\":\"s\",\"_stream\":\"{{app=\\\"x\\\"}}\",\"_msg\":\"line of {account}\",\"app\":\"x\"}}\n"
        ),
        "/select/logsql/stream_field_values" => {
            format!(r#"{{"values":[{{"value":"app-{account}","hits":1}}]}}"#)
        }
        _ => r#"{"values":[{"value":"app","hits":1}]}"#.to_owned(),
    }
}

async fn start(gather: usize, tune: impl FnOnce(&mut proxy::config::Settings)) -> (String, Fake) {
    let f = Fake {
        gather,
        ..Fake::default()
    };
    let app = Router::new()
        .route("/select/logsql/{*rest}", post(fake))
        .with_state(f.clone());
    let vl = crate::support::fake_vl::FakeVl::serving(app).await.url;
    let mut s = proxy::config::Settings::new(&vl).unwrap();
    s.cache.max_bytes = 0;
    tune(&mut s);
    let url = crate::support::lokivl::start_proxy(s).await;
    (url, f)
}

async fn get(url: &str, tenant: &str) -> (u16, String) {
    let a = crate::support::client::get_with(url, &[("X-Scope-OrgID", tenant)]).await;
    (a.status.as_u16(), a.body)
}

fn tenants(n: u32) -> String {
    (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join("|")
}

#[tokio::test]
async fn more_tenants_than_the_limit_get_400_before_any_call() {
    let (url, f) = start(0, |_| {}).await;
    let labels = format!("{url}/loki/api/v1/labels");
    let (status, body) = get(&labels, &tenants(33)).await;
    assert_eq!(
        (status, body.as_str()),
        (
            400,
            "max tenants per query exceeded, tenants > max_tenants_per_query (33 > 32)"
        )
    );
    assert!(f.calls.lock().unwrap().is_empty());
    // Repeated ids count once; 32 distinct ones are served, one call each.
    let (status, body) = get(&labels, &format!("{}|1|2", tenants(32))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(f.calls.lock().unwrap().len(), 32);

    let (url, f) = start(0, |s| s.tenant.max_members = 2).await;
    let (status, body) = get(&format!("{url}/loki/api/v1/labels"), "1|2|3").await;
    assert_eq!(
        (status, body.as_str()),
        (
            400,
            "max tenants per query exceeded, tenants > max_tenants_per_query (3 > 2)"
        )
    );
    assert!(f.calls.lock().unwrap().is_empty());
    assert_eq!(
        get(&format!("{url}/loki/api/v1/labels"), "1|2").await.0,
        200
    );
}

#[tokio::test]
async fn member_calls_run_in_parallel_and_merge_in_member_order() {
    let (url, f) = start(4, |_| {}).await;
    // Eight tenants, one entry each of one stream, all at the same instant:
    // `limit=3` keeps the first three tenants by label string, as Loki's
    // multi-tenant querier does (equal stream hashes, `engine::tie`).
    let q = format!(
        "{url}/loki/api/v1/query_range?query=%7Bapp%3D%22x%22%7D&limit=3&start=1767225600000000000&end=1767225700000000000"
    );
    let (status, body) = get(&q, &tenants(8)).await;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let mut kept: Vec<(String, String)> = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["stream"]["__tenant_id__"].as_str().unwrap().to_owned(),
                s["values"][0][1].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    kept.sort();
    assert_eq!(
        kept,
        [
            ("1".to_owned(), "line of 1".to_owned()),
            ("2".to_owned(), "line of 2".to_owned()),
            ("3".to_owned(), "line of 3".to_owned()),
        ]
    );
    // One call per tenant, twice: the cut splits the instant, so the range
    // is read again up to it, whole (`query::direct`).
    assert_eq!(
        f.calls.lock().unwrap().len(),
        16,
        "one call per tenant and round"
    );
    assert_eq!(
        f.most_running.load(Ordering::SeqCst),
        4,
        "--tenant-fanout-parallelism calls at once, never more"
    );

    let (status, body) = get(&format!("{url}/loki/api/v1/label/app/values"), &tenants(8)).await;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let want: Vec<String> = (1..=8).map(|i| format!("app-{i}")).collect();
    assert_eq!(v["data"], serde_json::json!(want));
}

#[tokio::test]
async fn parallelism_one_calls_members_one_by_one() {
    let (url, f) = start(2, |s| s.backend_options.fanout_parallelism = 1).await;
    let (status, body) = get(&format!("{url}/loki/api/v1/labels"), &tenants(3)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        f.calls
            .lock()
            .unwrap()
            .iter()
            .map(|c| c.1)
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(f.most_running.load(Ordering::SeqCst), 1);
}
