//! `labels`, `label/{name}/values` and `series` end to end against a fake VictoriaLogs.

use crate::support::client::*;
use crate::support::fake_vl::*;
use axum::http::{Method, StatusCode};

fn range() -> Vec<(&'static str, String)> {
    vec![("start", START_NS.to_string()), ("end", END_NS.to_string())]
}

fn url(base: &str, path: &str, extra: &[(&str, &str)]) -> String {
    let r = range();
    let mut pairs: Vec<(&str, &str)> = r.iter().map(|(k, v)| (*k, v.as_str())).collect();
    pairs.extend_from_slice(extra);
    format!("{base}{path}?{}", qs(&pairs))
}

#[tokio::test]
async fn labels_are_sorted_and_complete() {
    let h = harness(vec![(
        "/select/logsql/stream_field_names",
        Canned::ok(r#"{"values":[{"value":"namespace","hits":3},{"value":"app","hits":9},{"value":"env","hits":1}]}"#),
    )])
    .await;
    let a = get(&url(&h.base, "/loki/api/v1/labels", &[])).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.content_type(), "application/json; charset=utf-8");
    assert_eq!(
        a.body,
        r#"{"status":"success","data":["app","env","namespace"]}"#
    );
    let reqs = h.vl.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(
        (r.method.clone(), r.path.as_str()),
        (Method::POST, "/select/logsql/stream_field_names")
    );
    assert_eq!(r.get("query"), "*");
    assert_eq!(r.get("start"), START_NS.to_string());
    assert_eq!(r.last_ns(), END_NS);
    // No limit: VictoriaLogs would return an arbitrary subset.
    assert!(!r.has("limit"));
}

#[tokio::test]
async fn labels_with_a_selector_and_rfc3339_times() {
    let h = harness(vec![(
        "/select/logsql/stream_field_names",
        Canned::ok(r#"{"values":[]}"#),
    )])
    .await;
    let u = format!(
        "{}/loki/api/v1/labels?{}",
        h.base,
        qs(&[
            ("start", "2026-08-22T09:00:00.000Z"),
            ("end", "2026-08-22T10:00:00.000Z"),
            ("query", r#"{app="api", env!="dev"}"#)
        ])
    );
    let a = get(&u).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // Empty answers keep the data key, which every client accepts.
    assert_eq!(a.body, r#"{"status":"success","data":[]}"#);
    let r = &h.vl.requests()[0];
    assert_eq!(r.get("query"), r#"{app="api", env!="dev"}"#);
    assert_eq!(r.get("start"), START_NS.to_string());
    assert_eq!(r.last_ns(), END_NS);
}

/// A name without `_` is no other field's Loki name (sanitizing writes
/// `_`), so its values are asked for directly: one call, not two.
#[tokio::test]
async fn label_values_ask_for_the_field() {
    let h = harness(vec![
        (
            "/select/logsql/stream_field_names",
            Canned::ok(r#"{"values":[{"value":"app","hits":3},{"value":"env","hits":3}]}"#),
        ),
        (
            "/select/logsql/stream_field_values",
            Canned::ok(r#"{"values":[{"value":"web","hits":1},{"value":"api","hits":2}]}"#),
        ),
    ])
    .await;
    let a = get(&url(
        &h.base,
        "/loki/api/v1/label/app/values",
        &[("query", r#"{env="prod"}"#)],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.body, r#"{"status":"success","data":["api","web"]}"#);
    let reqs = h.vl.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    let r = &reqs[0];
    assert_eq!(r.path, "/select/logsql/stream_field_values");
    assert_eq!(r.get("field"), "app");
    assert_eq!(r.get("query"), r#"{env="prod"}"#);
    assert_eq!(r.get("start"), START_NS.to_string());
    assert!(!r.has("limit"));
}

#[tokio::test]
async fn dotted_otel_names_are_reported_and_resolved_with_underscores() {
    let h = harness(vec![
        (
            "/select/logsql/stream_field_names",
            Canned::ok(r#"{"values":[{"value":"k8s.pod.name","hits":3},{"value":"service.name","hits":3}]}"#),
        ),
        ("/select/logsql/stream_field_values", Canned::ok(r#"{"values":[{"value":"pod-1","hits":1}]}"#)),
        (
            "/select/logsql/streams",
            Canned::ok(r#"{"values":[{"value":"{k8s.pod.name=\"pod-1\",service.name=\"api\"}","hits":1}]}"#),
        ),
    ])
    .await;
    let a = get(&url(&h.base, "/loki/api/v1/labels", &[])).await;
    assert_eq!(
        a.body,
        r#"{"status":"success","data":["k8s_pod_name","service_name"]}"#
    );
    let a = get(&url(&h.base, "/loki/api/v1/label/k8s_pod_name/values", &[])).await;
    assert_eq!(a.body, r#"{"status":"success","data":["pod-1"]}"#);
    let fields: Vec<String> =
        h.vl.requests()
            .iter()
            .filter(|r| r.path == "/select/logsql/stream_field_values")
            .map(|r| r.get("field").to_owned())
            .collect();
    assert_eq!(fields, ["k8s.pod.name"]);
    let a = get(&url(&h.base, "/loki/api/v1/series", &[])).await;
    assert_eq!(
        a.body,
        r#"{"status":"success","data":[{"k8s_pod_name":"pod-1","service_name":"api"}]}"#
    );
}

#[tokio::test]
async fn series_deduplicates_matchers_and_streams() {
    let h = harness(vec![(
        "/select/logsql/streams",
        Canned::ok(
            r#"{"values":[{"value":"{app=\"web\"}","hits":1},{"value":"{app=\"api\",env=\"prod\"}","hits":5}]}"#,
        ),
    )])
    .await;
    let a = get(&url(
        &h.base,
        "/loki/api/v1/series",
        &[
            ("match[]", r#"{app="api"}"#),
            ("match[]", r#"{app="web"}"#),
            ("match", r#"{app="api"}"#),
        ],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // Two distinct groups → one call for their union; the streams appear
    // once each, sorted, label keys sorted.
    assert_eq!(
        a.body,
        r#"{"status":"success","data":[{"app":"api","env":"prod"},{"app":"web"}]}"#
    );
    let queries: Vec<String> =
        h.vl.requests()
            .iter()
            .map(|r| r.get("query").to_owned())
            .collect();
    assert_eq!(queries, [r#"({app="api"}) or ({app="web"})"#]);
    assert!(
        h.vl.requests()
            .iter()
            .all(|r| r.path == "/select/logsql/streams" && !r.has("limit"))
    );
}

#[tokio::test]
async fn series_matchers_past_the_limit_get_400_without_a_call() {
    let h = harness(vec![(
        "/select/logsql/streams",
        Canned::ok(r#"{"values":[{"value":"{app=\"a7\"}","hits":1}]}"#),
    )])
    .await;
    let groups: Vec<String> = (0..101).map(|i| format!(r#"{{app="a{i}"}}"#)).collect();
    let mut extra: Vec<(&str, &str)> = groups.iter().map(|g| ("match[]", g.as_str())).collect();
    let a = get(&url(&h.base, "/loki/api/v1/series", &extra)).await;
    assert_eq!(
        a.assert_error(StatusCode::BAD_REQUEST),
        "max series matchers per query exceeded, matchers > max_series_matchers (101 > 100)"
    );
    assert!(h.vl.requests().is_empty());
    // 100 distinct groups (and a repeat) are one VictoriaLogs call.
    extra.truncate(100);
    extra.push(("match", r#"{app="a0"}"#));
    let a = get(&url(&h.base, "/loki/api/v1/series", &extra)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.body, r#"{"status":"success","data":[{"app":"a7"}]}"#);
    let reqs = h.vl.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].get("query").matches(" or ").count(), 99);
}

#[tokio::test]
async fn series_with_empty_matcher_means_all() {
    let h = harness(vec![(
        "/select/logsql/streams",
        Canned::ok(r#"{"values":[]}"#),
    )])
    .await;
    let body = qs(&[
        ("match[]", "{}"),
        ("start", &START_NS.to_string()),
        ("end", &END_NS.to_string()),
    ]);
    let a = request(
        Method::POST,
        &format!("{}/loki/api/v1/series", h.base),
        &body,
        "application/x-www-form-urlencoded",
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.body, r#"{"status":"success","data":[]}"#);
    let reqs = h.vl.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].get("query"), "*");
}

#[tokio::test]
async fn metadata_rejects_full_queries_and_bad_times() {
    let h = harness(vec![]).await;
    let a = get(&url(
        &h.base,
        "/loki/api/v1/labels",
        &[("query", r#"{app="api"} |= "x""#)],
    ))
    .await;
    assert_eq!(
        a.assert_error(StatusCode::BAD_REQUEST),
        "only label matchers are supported"
    );
    let a = get(&format!(
        "{}/loki/api/v1/label/app/values?start=nope",
        h.base
    ))
    .await;
    assert_eq!(
        a.assert_error(StatusCode::BAD_REQUEST),
        r#"could not parse 'start' parameter: strconv.ParseInt: parsing "nope": invalid syntax"#
    );
    let a = get(&url(
        &h.base,
        "/loki/api/v1/series",
        &[("match[]", r#"{app="api""#)],
    ))
    .await;
    assert!(
        a.assert_error(StatusCode::BAD_REQUEST)
            .starts_with("parse error"),
        "{}",
        a.body
    );
    assert!(h.vl.requests().is_empty());
}

/// Loki 3.7.8 refuses an inverted metadata range with its lookback text
/// (tests/golden/errors/loki.json: `labels.reversed`, `series.reversed`).
#[tokio::test]
async fn inverted_label_range_is_lokis_400() {
    let h = harness(vec![]).await;
    for path in [
        "/loki/api/v1/labels",
        "/loki/api/v1/label/app/values",
        "/loki/api/v1/series",
    ] {
        let a = get(&format!("{}{path}?start=200&end=100", h.base)).await;
        assert_eq!(
            a.assert_error(StatusCode::BAD_REQUEST),
            "this data is no longer available, it is past now - max_query_lookback (0s)",
            "{path}"
        );
    }
    assert!(h.vl.requests().is_empty());
}
