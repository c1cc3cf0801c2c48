//! Loki's label discovery (`service_name`, `detected_level`) in log query
//! answers, end to end against a fake VictoriaLogs.

use crate::support::client::*;
use crate::support::fake_vl::*;
use crate::support::lokivl::start_proxy;
use axum::http::StatusCode;
use engine::discovery::loki_defaults;
use serde_json::json;

/// One stream with only `app`, one with nothing Loki derives a name from.
const NDJSON: &str = concat!(
    r#"{"_time":"2026-08-22T09:59:59Z","_stream_id":"s1","_stream":"{app=\"api\"}","_msg":"level=error boom","app":"api"}"#,
    "\n",
    r#"{"_time":"2026-08-22T09:59:58Z","_stream_id":"s1","_stream":"{app=\"api\"}","_msg":"all good info","app":"api","trace_id":"t1"}"#,
    "\n",
    r#"{"_time":"2026-08-22T09:59:57Z","_stream_id":"s2","_stream":"{env=\"x\"}","_msg":"[WARN] disk","env":"x"}"#,
    "\n",
);

async fn proxy_with(discovery: logsql_ast::Discovery) -> Harness {
    let vl = fake_vl(vec![("/select/logsql/query", Canned::ok(NDJSON))]).await;
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.discovery = discovery;
    let base = start_proxy(settings).await;
    Harness { base, vl }
}

fn url(base: &str, query: &str) -> String {
    let (start, end) = (START_NS.to_string(), END_NS.to_string());
    format!(
        "{base}/loki/api/v1/query_range?{}",
        qs(&[
            ("query", query),
            ("start", &start),
            ("end", &end),
            ("limit", "100"),
        ])
    )
}

#[tokio::test]
async fn service_name_selector_is_lowered_over_the_discovery_list() {
    let h = proxy_with(loki_defaults()).await;
    let a = get(&url(&h.base, r#"{service_name="api"}"#)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let sent = h.vl.requests()[0].get("query").to_owned();
    assert!(
        sent.starts_with(r#"{service_name="api" or service_name="", "service.name"="api" or service_name="", "service.name"="", service="api" or "#),
        "{sent}"
    );
    // 18 alternatives: service_name itself and the 13 labels of Loki's list,
    // each OTel index label also as its attribute (`service.name`,
    // `container.name`, `k8s.container.name`, `k8s.job.name`).
    assert_eq!(sent.matches(" or ").count(), 17, "{sent}");
    assert!(sent.contains(r#""k8s.container.name"="api""#), "{sent}");
    assert!(!sent.contains("unknown_service"), "{sent}");
}

#[tokio::test]
async fn answers_carry_service_name_and_detected_level() {
    let h = proxy_with(loki_defaults()).await;
    let a = get(&url(&h.base, r#"{service_name=~".+"}"#)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    let streams: Vec<_> = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stream"].clone())
        .collect();
    assert_eq!(
        streams,
        vec![
            json!({"app": "api", "detected_level": "error", "service_name": "api"}),
            json!({"app": "api", "detected_level": "info", "service_name": "api", "trace_id": "t1"}),
            json!({"detected_level": "warn", "env": "x", "service_name": "unknown_service"}),
        ]
    );
    let a = get_with(
        &url(&h.base, r#"{service_name=~".+"}"#),
        &[("X-Loki-Response-Encoding-Flags", "categorize-labels")],
    )
    .await;
    let v = a.json();
    assert_eq!(
        v["data"]["result"][0]["stream"],
        json!({"app": "api", "service_name": "api"})
    );
    assert_eq!(
        v["data"]["result"][0]["values"][1],
        json!(["1787392798000000000", "all good info", {"structuredMetadata": {"detected_level": "info", "trace_id": "t1"}}])
    );
}

#[tokio::test]
async fn detected_level_filter_runs_in_the_proxy() {
    let h = proxy_with(loki_defaults()).await;
    let a = get(&url(
        &h.base,
        r#"{env=~".+"} | detected_level=~"warn|error""#,
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let sent = h.vl.requests()[0].get("query").to_owned();
    assert_eq!(sent, r#"{env=~".+"}"#);
    let lines: Vec<String> = a.json()["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["values"].as_array().unwrap().clone())
        .map(|e| e[1].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(lines, ["level=error boom", "[WARN] disk"]);
}

#[tokio::test]
async fn switched_off_sends_and_answers_stored_labels_only() {
    let h = proxy_with(logsql_ast::Discovery::default()).await;
    let a = get(&url(&h.base, r#"{service_name="api"}"#)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // The stored label, or the attribute an OTLP resource is stored with.
    assert_eq!(
        h.vl.requests()[0].get("query"),
        r#"{service_name="api" or service_name="", "service.name"="api"}"#
    );
    let streams: Vec<_> = a.json()["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stream"].clone())
        .collect();
    assert_eq!(
        streams,
        vec![
            json!({"app": "api", "trace_id": "t1"}),
            json!({"app": "api"}),
            json!({"env": "x"}),
        ]
    );
}
