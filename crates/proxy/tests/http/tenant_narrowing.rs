//! `X-Scope-OrgID: a|b` with a `__tenant_id__` matcher in the selector: as
//! Loki's multi-tenant querier does, the matcher picks the tenants queried
//! and is removed from the query each tenant runs. Checked against a fake
//! VictoriaLogs that records every call's tenant headers and query.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;

/// `(AccountID:ProjectID, query)` of every VictoriaLogs call.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

async fn fake(State(seen): State<Seen>, headers: HeaderMap, body: String) -> String {
    let g = |k: &str| {
        headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned()
    };
    let query = form_urlencoded::parse(body.as_bytes())
        .find(|(k, _)| k == "query")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    let tenant = g("accountid");
    seen.lock()
        .unwrap()
        .push((format!("{tenant}:{}", g("projectid")), query));
    format!(
        "{{\"_time\":\"2026-01-01T00:00:0{}Z\",\"_stream_id\":\"s\",\"_stream\":\"{{app=\\\"x\\\"}}\",\"_msg\":\"line of {tenant}\",\"app\":\"x\"}}\n",
        tenant.len()
    )
}

async fn start() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route("/select/logsql/query", post(fake))
        .with_state(Arc::clone(&seen));
    let vl = crate::support::fake_vl::FakeVl::serving(app).await.url;
    let dir = std::env::temp_dir().join(format!("lokivl-narrow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = dir.join("tenants.yaml");
    std::fs::write(&map, "team-a: {account_id: 5, project_id: 6}\n").unwrap();
    let mut s = proxy::config::Settings::new(&vl).unwrap();
    s.tenant.map = Some(map);
    let url = crate::support::lokivl::start_proxy(s).await;
    (url, seen)
}

/// Streams of a `query_range` answer as `(__tenant_id__, first line)`.
async fn streams(url: &str, selector: &str) -> Vec<(String, String)> {
    let q = form_urlencoded::Serializer::new(String::new())
        .append_pair("query", selector)
        .append_pair("start", "1767225600000000000")
        .append_pair("end", "1767225700000000000")
        .finish();
    let a = crate::support::client::get_with(
        &format!("{url}/loki/api/v1/query_range?{q}"),
        &[("X-Scope-OrgID", "team-a|12")],
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["stream"]["__tenant_id__"].as_str().unwrap().to_owned(),
                s["values"][0][1].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn take(seen: &Seen) -> Vec<(String, String)> {
    std::mem::take(&mut *seen.lock().unwrap())
}

#[tokio::test]
async fn tenant_matcher_narrows_a_multi_tenant_query() {
    let (url, seen) = start().await;

    // Equality: only team-a (5:6) is asked, without the tenant matcher.
    let got = streams(&url, r#"{app="x", __tenant_id__="team-a"}"#).await;
    assert_eq!(got, [("team-a".to_owned(), "line of 5".to_owned())]);
    let calls = take(&seen);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].0, "5:6");
    assert!(
        !calls[0].1.contains("__tenant_id__") && calls[0].1.contains(r#"app="x""#),
        "{}",
        calls[0].1
    );

    // Negative regex: only 12.
    let got = streams(&url, r#"{app="x", __tenant_id__!~"team-.*"}"#).await;
    assert_eq!(got, [("12".to_owned(), "line of 12".to_owned())]);
    assert_eq!(take(&seen).len(), 1);

    // A regex matching both keeps both.
    let got = streams(&url, r#"{app="x", __tenant_id__=~".+"}"#).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(take(&seen).len(), 2);

    // No tenant matches: nothing is asked, nothing is answered.
    let got = streams(&url, r#"{app="x", __tenant_id__="nobody"}"#).await;
    assert!(got.is_empty(), "{got:?}");
    assert!(take(&seen).is_empty());
}
