//! Metric queries end to end against a fake VictoriaLogs: the exact stats
//! requests lokivl sends and the exact Loki JSON it answers.

use crate::support::client::*;
use crate::support::fake_vl::*;
use axum::http::{Method, StatusCode};
use serde_json::json;

const S: i64 = 1_000_000_000;

fn url(base: &str, path: &str, pairs: &[(&str, &str)]) -> String {
    format!("{base}{path}?{}", qs(pairs))
}

#[tokio::test]
async fn sum_by_rate_asks_for_aligned_buckets_and_slides_windows() {
    // Buckets (900 s, 960 s] and (960 s, 1020 s] arrive labelled by their VictoriaLogs start.
    let stats = concat!(
        r#"{"_time":"1970-01-01T00:15:00.000000001Z","app":"api","__lokivl_c":"30"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:16:00.000000001Z","app":"api","__lokivl_c":"60"}"#,
        "\n"
    );
    let h = harness(vec![("/select/logsql/query", Canned::ok(stats))]).await;
    let (start, end) = ((960 * S).to_string(), (1080 * S).to_string());
    let a = get(&url(
        &h.base,
        "/loki/api/v1/query_range",
        &[
            ("query", r#"sum by (app) (rate({app="api"}[5m]))"#),
            ("start", &start),
            ("end", &end),
            ("step", "60000ms"),
            ("limit", "10"),
        ],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.json()["data"]["result"],
        json!([{"metric":{"app":"api"},"values":[[960,"0.1"],[1020,"0.3"],[1080,"0.3"]]}])
    );
    assert_eq!(a.json()["data"]["resultType"], "matrix");
    let reqs = h.vl.requests();
    assert_eq!(reqs.len(), 1, "one stats call, no raw rows");
    let r = &reqs[0];
    assert_eq!(
        (r.method.clone(), r.path.as_str()),
        (Method::POST, "/select/logsql/query")
    );
    assert_eq!(
        r.get("query"),
        r#"{app="api"} | stats by (_time:60000000000ns offset 1ns, "app") count() "__lokivl_c""#
    );
    // Windows (t − 5m, t] for t = 960 … 1080 s, as VictoriaLogs' inclusive bounds.
    assert_eq!(r.get("start"), (660 * S + 1).to_string());
    assert_eq!(r.last_ns(), 1080 * S);
    assert!(!r.has("limit"));
}

#[tokio::test]
async fn unaligned_range_is_aligned_to_the_step_like_lokis_frontend() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(""))]).await;
    let (start, end) = ((1000 * S + 5).to_string(), (1090 * S).to_string());
    let a = get(&url(
        &h.base,
        "/loki/api/v1/query_range",
        &[
            ("query", r#"sum(count_over_time({app="api"}[1m]))"#),
            ("start", &start),
            ("end", &end),
            ("step", "60"),
        ],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.json()["data"]["result"], json!([]));
    let r = &h.vl.requests()[0];
    // start 1000 s → 960 s, end 1090 s → 1140 s.
    assert_eq!(r.get("start"), (900 * S + 1).to_string());
    assert_eq!(r.last_ns(), 1140 * S);
}

#[tokio::test]
async fn every_label_is_discovered_then_grouped() {
    let h = harness(vec![
        (
            "/select/logsql/field_names",
            Canned::ok(r#"{"values":[{"value":"_msg","hits":3},{"value":"app","hits":3},{"value":"trace.id","hits":1},{"value":"_stream","hits":3}]}"#),
        ),
        (
            "/select/logsql/query",
            Canned::ok(concat!(
                r#"{"_time":"1970-01-01T00:01:00.000000001Z","app":"api","trace.id":"","__lokivl_c":"2"}"#,
                "\n",
                r#"{"_time":"1970-01-01T00:01:00.000000001Z","app":"api","trace.id":"t1","__lokivl_c":"1"}"#,
                "\n"
            )),
        ),
    ])
    .await;
    let time = (120 * S).to_string();
    let a = get(&url(
        &h.base,
        "/loki/api/v1/query",
        &[
            ("query", r#"count_over_time({app="api"}[1m])"#),
            ("time", &time),
        ],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.json()["data"],
        json!({"resultType":"vector","result":[
            {"metric":{"app":"api"},"value":[120,"2"]},
            {"metric":{"app":"api","trace_id":"t1"},"value":[120,"1"]}
        ],"stats":a.json()["data"]["stats"]})
    );
    let reqs = h.vl.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/select/logsql/field_names");
    assert_eq!(reqs[0].get("query"), r#"{app="api"}"#);
    assert_eq!(
        reqs[1].get("query"),
        r#"{app="api"} | stats by (_time:60000000000ns offset 1ns, "app", "trace.id") count() "__lokivl_c""#
    );
    assert_eq!(reqs[1].get("start"), (60 * S + 1).to_string());
    assert_eq!(reqs[1].last_ns(), 120 * S);
}

#[tokio::test]
async fn health_check_and_or_vector_zero_need_no_backend_for_constants() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(""))]).await;
    let a = get(&url(
        &h.base,
        "/loki/api/v1/query",
        &[("query", "vector(1)+vector(1)"), ("time", "4000000000")],
    ))
    .await;
    assert_eq!(
        a.json()["data"]["result"],
        json!([{"metric":{},"value":[4000000000u64,"2"]}])
    );
    let a = get(&url(
        &h.base,
        "/loki/api/v1/query",
        &[("query", "1+1"), ("time", "10")],
    ))
    .await;
    assert_eq!(a.json()["data"]["resultType"], "scalar");
    assert_eq!(a.json()["data"]["result"], json!([10, "2"]));
    assert!(h.vl.requests().is_empty());
    let (start, end) = ((60 * S).to_string(), (180 * S).to_string());
    let a = get(&url(
        &h.base,
        "/loki/api/v1/query_range",
        &[
            (
                "query",
                r#"sum(count_over_time({app="api"}[1m])) or vector(0)"#,
            ),
            ("start", &start),
            ("end", &end),
            ("step", "60s"),
        ],
    ))
    .await;
    assert_eq!(
        a.json()["data"]["result"],
        json!([{"metric":{},"values":[[60,"0"],[120,"0"],[180,"0"]]}])
    );
}

#[tokio::test]
async fn unwrap_conversion_errors_fail_like_loki() {
    let h = harness(vec![(
        "/select/logsql/query",
        Canned::ok(concat!(
            r#"{"_time":"1970-01-01T00:01:00.000000001Z","__lokivl_c":"2","__lokivl_s":"3","__lokivl_e":"1"}"#,
            "\n"
        )),
    )])
    .await;
    let time = (120 * S).to_string();
    let a = get(&url(
        &h.base,
        "/loki/api/v1/query",
        &[
            (
                "query",
                r#"sum by (x) (sum_over_time({app="api"} | unwrap latency [1m]))"#,
            ),
            ("time", &time),
        ],
    ))
    .await;
    // Loki's PipelineError text itself ends with a newline
    // (pkg/logqlmodel/error.go), unlike its other query errors.
    let text = a.assert_go_http_error(StatusCode::BAD_REQUEST);
    assert!(
        text.starts_with("pipeline error: 'SampleExtractionErr'"),
        "{text}"
    );
    let q = h.vl.requests()[0].get("query").to_owned();
    assert!(q.contains(r#"count() if (!"__lokivl_v":~"#), "{q}");
}
