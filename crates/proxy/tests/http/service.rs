//! Service endpoints and backend failure paths, end to end.

use std::time::Duration;

use crate::support::client::*;
use crate::support::fake_vl::*;
use crate::support::lokivl::start_proxy;
use axum::http::{Method, StatusCode};

fn log_range(base: &str) -> String {
    format!(
        "{base}/loki/api/v1/query_range?{}",
        qs(&[
            ("query", r#"{app="api"}"#),
            ("start", &START_NS.to_string()),
            ("end", &END_NS.to_string())
        ])
    )
}

#[tokio::test]
async fn buildinfo_is_a_bare_object() {
    let h = harness(vec![]).await;
    let a = get(&format!("{}/loki/api/v1/status/buildinfo", h.base)).await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.content_type(), "application/json; charset=utf-8");
    let v = a.json();
    assert_eq!(v["version"], "3.7.0");
    assert!(v.get("status").is_none());
    for key in ["revision", "branch", "buildUser", "buildDate", "goVersion"] {
        assert!(v[key].is_string(), "{key}");
    }
}

#[tokio::test]
async fn ready_follows_victorialogs_health() {
    let h = harness(vec![("/health", Canned::ok("OK"))]).await;
    let a = get(&format!("{}/ready", h.base)).await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.body, "ready\n");
    assert_eq!(h.vl.requests()[0].path, "/health");

    let down = harness(vec![(
        "/health",
        Canned {
            status: StatusCode::SERVICE_UNAVAILABLE,
            body: "starting".into(),
            delay: Duration::ZERO,
        },
    )])
    .await;
    let a = get(&format!("{}/ready", down.base)).await;
    let text = a.assert_go_http_error(StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        text.contains("VictoriaLogs") && text.contains("starting"),
        "{text}"
    );
}

#[tokio::test]
async fn push_is_refused_and_unknown_paths_are_404() {
    let h = harness(vec![]).await;
    let a = request(
        Method::POST,
        &format!("{}/loki/api/v1/push", h.base),
        "{}",
        "application/json",
    )
    .await;
    assert!(
        a.assert_error(StatusCode::METHOD_NOT_ALLOWED)
            .contains("read-only")
    );
    let a = get(&format!("{}/loki/api/v1/push", h.base)).await;
    assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED);
    let a = get(&format!("{}/loki/api/v1/nope", h.base)).await;
    assert_eq!(
        a.assert_go_http_error(StatusCode::NOT_FOUND),
        "404 page not found"
    );
    assert!(h.vl.requests().is_empty());
}

#[tokio::test]
async fn unreachable_backend_is_502_naming_victorialogs() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let settings = proxy::config::Settings::new(&format!("http://127.0.0.1:{port}")).unwrap();
    let base = start_proxy(settings).await;
    let a = get(&log_range(&base)).await;
    let text = a.assert_error(StatusCode::BAD_GATEWAY);
    assert!(
        text.contains("VictoriaLogs") && text.contains(&port.to_string()),
        "{text}"
    );
    assert!(!text.contains("timeout"), "{text}");
    let a = get(&format!("{base}/ready")).await;
    assert_eq!(a.status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn slow_backend_is_504_with_timeout_in_the_text() {
    let vl = fake_vl(vec![(
        "/select/logsql/query",
        Canned {
            status: StatusCode::OK,
            body: String::new(),
            delay: Duration::from_secs(5),
        },
    )])
    .await;
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.backend_timeout = Duration::from_millis(200);
    let base = start_proxy(settings).await;
    let started = std::time::Instant::now();
    let a = get(&log_range(&base)).await;
    let text = a.assert_error(StatusCode::GATEWAY_TIMEOUT);
    assert!(text.contains("timeout"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn victorialogs_errors_map_to_5xx_with_its_message() {
    let h = harness(vec![
        (
            "/select/logsql/query",
            Canned {
                status: StatusCode::BAD_REQUEST,
                body: "cannot parse query [x]: bad".into(),
                delay: Duration::ZERO,
            },
        ),
        (
            "/select/logsql/stream_field_names",
            Canned {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                body: "disk on fire".into(),
                delay: Duration::ZERO,
            },
        ),
        ("/select/logsql/streams", Canned::ok("not json")),
    ])
    .await;
    // A 4xx for a query lokivl built is lokivl's defect: 500 with VictoriaLogs' text.
    let a = get(&log_range(&h.base)).await;
    assert!(
        a.assert_error(StatusCode::INTERNAL_SERVER_ERROR)
            .contains("cannot parse query [x]: bad")
    );
    let a = get(&format!("{}/loki/api/v1/labels", h.base)).await;
    assert!(
        a.assert_error(StatusCode::BAD_GATEWAY)
            .contains("disk on fire")
    );
    let a = get(&format!("{}/loki/api/v1/series", h.base)).await;
    assert!(
        a.assert_error(StatusCode::BAD_GATEWAY)
            .contains("VictoriaLogs")
    );
}

#[tokio::test]
async fn malformed_ndjson_is_502() {
    let h = harness(vec![(
        "/select/logsql/query",
        Canned::ok("{\"_time\": broken\n"),
    )])
    .await;
    let a = get(&log_range(&h.base)).await;
    a.assert_error(StatusCode::BAD_GATEWAY);
}

#[tokio::test]
async fn metrics_count_requests_and_backend_calls() {
    let h = harness(vec![(
        "/select/logsql/stream_field_names",
        Canned::ok(r#"{"values":[]}"#),
    )])
    .await;
    assert_eq!(
        get(&format!("{}/loki/api/v1/labels", h.base)).await.status,
        StatusCode::OK
    );
    assert_eq!(
        get(&format!("{}/loki/api/v1/query?query=1", h.base))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        get(&format!("{}/loki/api/v1/query?limit=0", h.base))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    let a = get(&format!("{}/metrics", h.base)).await;
    assert_eq!(a.status, StatusCode::OK);
    assert!(a.content_type().starts_with("text/plain"));
    for line in [
        r#"lokivl_http_requests_total{route="/loki/api/v1/labels",status="200"} 1"#,
        r#"lokivl_http_requests_total{route="/loki/api/v1/query",status="200"} 1"#,
        r#"lokivl_http_requests_total{route="/loki/api/v1/query",status="400"} 1"#,
        r#"lokivl_backend_requests_total{endpoint="stream_field_names",outcome="ok"} 1"#,
        r#"lokivl_http_request_duration_seconds_count{route="/loki/api/v1/labels"} 1"#,
    ] {
        assert!(a.body.contains(line), "missing {line} in\n{}", a.body);
    }
}
