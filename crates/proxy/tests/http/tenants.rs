//! `X-Scope-OrgID` → VictoriaLogs `AccountID`/`ProjectID`, against a fake
//! VictoriaLogs that records the tenant headers of every call: mapped names,
//! numeric ids, the default, refusals, multi-tenant fan-out with
//! `__tenant_id__`, map reloads and rate limits keyed by the mapped tenant.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::routing::post;

type Seen = Arc<Mutex<Vec<(String, String)>>>;

async fn fake(State(seen): State<Seen>, uri: Uri, headers: HeaderMap, body: String) -> String {
    let g = |k: &str| {
        headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned()
    };
    seen.lock().unwrap().push((
        uri.path().to_owned(),
        format!("{}:{}", g("accountid"), g("projectid")),
    ));
    let tenant = g("accountid");
    match uri.path() {
        "/select/logsql/stream_field_names" => r#"{"values":[{"value":"app","hits":1}]}"#.into(),
        "/select/logsql/stream_field_values" => {
            let _ = body;
            format!(r#"{{"values":[{{"value":"app-{tenant}","hits":1}}]}}"#)
        }
        "/select/logsql/streams" => {
            format!(r#"{{"values":[{{"value":"{{app=\"app-{tenant}\"}}","hits":1}}]}}"#)
        }
        "/select/logsql/query" => format!(
            "{{\"_time\":\"2026-01-01T00:00:0{}Z\",\"_stream_id\":\"s\",\"_stream\":\"{{app=\\\"x\\\"}}\",\"_msg\":\"line of {tenant}\",\"app\":\"x\"}}\n",
            tenant.len()
        ),
        _ => String::new(),
    }
}

async fn start(
    map: &std::path::Path,
    tune: impl FnOnce(&mut proxy::config::Settings),
) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route("/select/logsql/{*rest}", post(fake))
        .with_state(Arc::clone(&seen));
    let vl = crate::support::fake_vl::FakeVl::serving(app).await.url;
    let mut s = proxy::config::Settings::new(&vl).unwrap();
    s.tenant.map = Some(map.to_owned());
    s.tenant.default = "7:8".to_owned();
    s.tenant.reload = Duration::from_millis(100);
    tune(&mut s);
    let url = crate::support::lokivl::start_proxy(s).await;
    (url, seen)
}

fn map_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("lokivl-tenants-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("tenants.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

async fn get(url: &str, tenant: Option<&str>) -> (u16, String) {
    let headers: Vec<(&str, &str)> = tenant.map(|t| ("X-Scope-OrgID", t)).into_iter().collect();
    let a = crate::support::client::get_with(url, &headers).await;
    (a.status.as_u16(), a.body)
}

fn take(seen: &Seen) -> Vec<(String, String)> {
    std::mem::take(&mut *seen.lock().unwrap())
}

#[tokio::test]
async fn every_call_carries_the_mapped_tenant() {
    let map = map_file("headers", "team-a: {account_id: 5, project_id: 6}\n");
    let (url, seen) = start(&map, |_| {}).await;
    let labels = format!("{url}/loki/api/v1/labels");
    for (header, want) in [
        (Some("team-a"), "5:6"),
        (Some("12"), "12:0"),
        (Some("12:34"), "12:34"),
        (None, "7:8"),
    ] {
        let (status, body) = get(&labels, header).await;
        assert_eq!(status, 200, "{header:?}: {body}");
        let calls = take(&seen);
        assert!(!calls.is_empty());
        assert!(
            calls.iter().all(|(_, t)| t == want),
            "{header:?}: {calls:?}"
        );
    }
    let (status, body) = get(&labels, Some("team-z")).await;
    assert_eq!(
        (status, body.as_str()),
        (401, "unknown tenant ID 'team-z': not in the tenant map")
    );
    let (status, body) = get(&labels, Some("a b")).await;
    assert_eq!(
        (status, body.as_str()),
        (400, "tenant ID 'a b' contains unsupported character ' '")
    );
    let (status, _) = get(&labels, Some("team-a|team-z")).await;
    assert_eq!(status, 401, "one unknown member refuses the whole request");
    assert!(
        take(&seen).is_empty(),
        "refused requests never reach VictoriaLogs"
    );
}

#[tokio::test]
async fn several_tenants_fan_out_with_tenant_id() {
    let map = map_file("multi", "team-a: {account_id: 5, project_id: 6}\n");
    let (url, seen) = start(&map, |_| {}).await;
    let t = Some("team-a|12");

    let (status, body) = get(&format!("{url}/loki/api/v1/labels"), t).await;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["data"], serde_json::json!(["__tenant_id__", "app"]));
    let mut tenants: Vec<String> = take(&seen).into_iter().map(|c| c.1).collect();
    tenants.sort();
    assert_eq!(tenants, ["12:0", "5:6"]);

    let (_, body) = get(&format!("{url}/loki/api/v1/label/__tenant_id__/values"), t).await;
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["data"], serde_json::json!(["12", "team-a"]));

    let (_, body) = get(&format!("{url}/loki/api/v1/label/app/values"), t).await;
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["data"], serde_json::json!(["app-12", "app-5"]));

    let (_, body) = get(
        &format!("{url}/loki/api/v1/series?match[]=%7Bapp%3D~%22.%2B%22%7D"),
        t,
    )
    .await;
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        v["data"],
        serde_json::json!([
            {"__tenant_id__": "12", "app": "app-12"},
            {"__tenant_id__": "team-a", "app": "app-5"}
        ])
    );

    let q = format!(
        "{url}/loki/api/v1/query_range?query=%7Bapp%3D%22x%22%7D&start=1767225600000000000&end=1767225700000000000"
    );
    take(&seen);
    let (status, body) = get(&q, t).await;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let streams: Vec<(String, String)> = v["data"]["result"]
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
    assert_eq!(
        streams,
        [
            ("12".to_owned(), "line of 12".to_owned()),
            ("team-a".to_owned(), "line of 5".to_owned())
        ]
    );
    assert_eq!(take(&seen).len(), 2);
}

#[tokio::test]
async fn the_map_reloads_when_the_file_changes() {
    let map = map_file("reload", "team-a: {account_id: 5}\n");
    let (url, seen) = start(&map, |_| {}).await;
    let labels = format!("{url}/loki/api/v1/labels");
    assert_eq!(get(&labels, Some("team-b")).await.0, 401);
    get(&labels, Some("team-a")).await;
    assert_eq!(take(&seen)[0].1, "5:0");
    std::fs::write(
        &map,
        "team-a: {account_id: 9, project_id: 9}\nteam-b: {account_id: 3}\n",
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    get(&labels, Some("team-a")).await;
    assert_eq!(take(&seen)[0].1, "9:9");
    assert_eq!(get(&labels, Some("team-b")).await.0, 200);
    // A broken edit keeps the last good map.
    std::fs::write(&map, "team-a: [broken\n").unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    take(&seen);
    assert_eq!(get(&labels, Some("team-a")).await.0, 200);
    assert_eq!(take(&seen)[0].1, "9:9");
}

#[tokio::test]
async fn rate_limits_are_keyed_by_the_mapped_tenant() {
    let map = map_file("rate", "team-a: {account_id: 5, project_id: 6}\n");
    let (url, _seen) = start(&map, |s| {
        s.limits.tenant_rate = 0.001;
        s.limits.tenant_burst = 1;
    })
    .await;
    let u = format!("{url}/loki/api/v1/status/buildinfo");
    assert_eq!(get(&u, Some("team-a")).await.0, 200);
    // `5:6` is team-a's VictoriaLogs tenant: the same bucket.
    assert_eq!(get(&u, Some("5:6")).await.0, 429);
    assert_eq!(get(&u, Some("12")).await.0, 200);
}

/// The `(__tenant_id__, line)` of each stream of a `query_range` answer.
fn tenant_lines(body: &str) -> Vec<(Option<String>, String)> {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            let t = s["stream"]["__tenant_id__"].as_str().map(str::to_owned);
            s["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |e| (t.clone(), e[1].as_str().unwrap().to_owned()))
        })
        .collect()
}

#[tokio::test]
async fn one_victorialogs_tenant_named_twice_is_queried_once() {
    let map = map_file(
        "twice",
        "team-a: {account_id: 5, project_id: 6}\nteam-b: {account_id: 5, project_id: 6}\n",
    );
    let (url, seen) = start(&map, |_| {}).await;
    // A closed range: answers are kept.
    let q = format!(
        "{url}/loki/api/v1/query_range?query=%7Bapp%3D%22x%22%7D&start=1767225600000000000&end=1767225700000000000"
    );
    // `1|1:0` is tenant 1:0 once: one call, no `__tenant_id__`, as Loki answers `a|a`.
    let (status, body) = get(&q, Some("1|1:0")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(tenant_lines(&body), [(None, "line of 1".to_owned())]);
    assert_eq!(
        take(&seen),
        [("/select/logsql/query".to_owned(), "1:0".to_owned())]
    );
    // Plain `1` is the same request: the same answer, from the cache.
    let (_, plain) = get(&q, Some("1")).await;
    assert_eq!(plain, body);
    assert!(take(&seen).is_empty());
    // Two map names of one tenant: one call.
    let (_, body) = get(&q, Some("team-b|team-a")).await;
    assert_eq!(tenant_lines(&body), [(None, "line of 5".to_owned())]);
    assert_eq!(
        take(&seen),
        [("/select/logsql/query".to_owned(), "5:6".to_owned())]
    );
}

#[tokio::test]
async fn several_tenants_are_keyed_by_their_names() {
    let map = map_file("names", "team-a: {account_id: 5, project_id: 6}\n");
    let (url, seen) = start(&map, |_| {}).await;
    let q = format!(
        "{url}/loki/api/v1/query_range?query=%7Bapp%3D%22x%22%7D&start=1767225600000000000&end=1767225700000000000"
    );
    let (_, a) = get(&q, Some("team-a|12")).await;
    assert_eq!(
        tenant_lines(&a),
        [
            (Some("12".to_owned()), "line of 12".to_owned()),
            (Some("team-a".to_owned()), "line of 5".to_owned())
        ]
    );
    assert_eq!(take(&seen).len(), 2);
    // The same VictoriaLogs tenants under other names: its own answer,
    // labelled with the names it sent.
    let (_, b) = get(&q, Some("5:6|12")).await;
    assert_eq!(
        tenant_lines(&b),
        [
            (Some("12".to_owned()), "line of 12".to_owned()),
            (Some("5:6".to_owned()), "line of 5".to_owned())
        ]
    );
    assert_eq!(take(&seen).len(), 2);
    // Order and repeats in the header do not matter: a hit.
    let (_, again) = get(&q, Some("12|team-a|12")).await;
    assert_eq!(again, a);
    assert!(take(&seen).is_empty());
}

#[tokio::test]
async fn numeric_ids_can_be_limited_to_the_map() {
    let map = map_file(
        "numeric",
        "team-a: {account_id: 5, project_id: 6}\n\"42\": {account_id: 42}\n",
    );
    let (url, seen) = start(&map, |s| s.tenant.numeric = false).await;
    let labels = format!("{url}/loki/api/v1/labels");
    for (id, refused) in [("12", "12"), ("12:34", "12:34"), ("team-a|12", "12")] {
        assert_eq!(
            get(&labels, Some(id)).await,
            (
                401,
                format!("unknown tenant ID '{refused}': not in the tenant map")
            ),
            "{id}"
        );
    }
    assert!(take(&seen).is_empty());
    // Map names, numeric-looking ones too, and the default tenant still work.
    for (id, want) in [(Some("team-a"), "5:6"), (Some("42"), "42:0"), (None, "7:8")] {
        let (status, body) = get(&labels, id).await;
        assert_eq!(status, 200, "{id:?}: {body}");
        assert!(take(&seen).iter().all(|(_, t)| t == want), "{id:?}");
    }
}

#[tokio::test]
async fn a_missing_tenant_header_can_be_refused_like_loki_with_auth() {
    let map = map_file("require", "team-a: {account_id: 5, project_id: 6}\n");
    let (url, seen) = start(&map, |s| s.tenant.require_header = true).await;
    let q = format!(
        "{url}/loki/api/v1/query_range?query=%7Bapp%3D%22x%22%7D&start=1767225600000000000&end=1767225700000000000"
    );
    // Cached for team-a first: a request without the header must not get it.
    assert_eq!(get(&q, Some("team-a")).await.0, 200);
    take(&seen);
    for header in [None, Some(""), Some(" ")] {
        assert_eq!(
            get(&q, header).await,
            (401, "no org id\n".to_owned()),
            "{header:?}"
        );
        assert_eq!(
            get(&format!("{url}/loki/api/v1/labels"), header).await,
            (401, "no org id\n".to_owned())
        );
    }
    assert!(take(&seen).is_empty());
    // Routes without tenant data stay open, as in Loki.
    for path in ["/ready", "/loki/api/v1/status/buildinfo", "/metrics"] {
        let (status, body) = get(&format!("{url}{path}"), None).await;
        assert_ne!(status, 401, "{path}: {body}");
    }
}
