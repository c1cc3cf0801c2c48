//! `query_range` and `query` end to end against a fake VictoriaLogs.

use crate::support::client::*;
use crate::support::fake_vl::*;
use axum::http::{Method, StatusCode};
use serde_json::json;

/// Three entries in two VictoriaLogs streams; one carries structured metadata.
const NDJSON: &str = concat!(
    r#"{"_time":"2026-08-22T09:59:59.5Z","_stream_id":"s1","_stream":"{app=\"api\",env=\"prod\"}","_msg":"second","app":"api","env":"prod","trace_id":"abc"}"#,
    "\n",
    r#"{"_time":"2026-08-22T09:59:58Z","_stream_id":"s1","_stream":"{app=\"api\",env=\"prod\"}","_msg":"first","app":"api","env":"prod"}"#,
    "\n",
    r#"{"_time":"2026-08-22T09:59:59Z","_stream_id":"s2","_stream":"{app=\"web\"}","_msg":"web line","app":"web"}"#,
    "\n",
);

fn range_url(base: &str, extra: &[(&str, &str)]) -> String {
    let start = START_NS.to_string();
    let end = END_NS.to_string();
    let mut pairs = vec![
        ("start", start.as_str()),
        ("end", end.as_str()),
        ("step", "15000ms"),
    ];
    pairs.extend_from_slice(extra);
    format!("{base}/loki/api/v1/query_range?{}", qs(&pairs))
}

#[tokio::test]
async fn backward_log_query_asks_victorialogs_for_the_newest_n() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(NDJSON))]).await;
    let a = get(&range_url(
        &h.base,
        &[("query", r#"{app=~"api|web"}"#), ("limit", "10")],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.content_type(), "application/json; charset=utf-8");

    let reqs = h.vl.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.method, Method::POST);
    assert_eq!(r.path, "/select/logsql/query");
    assert_eq!(r.get("query"), r#"{app=~"api|web"}"#);
    // One row past the limit shows whether the cut splits a timestamp.
    assert_eq!(r.get("limit"), "11");
    assert_eq!(r.get("start"), START_NS.to_string());
    // Loki's end is exclusive, VictoriaLogs' inclusive.
    assert_eq!(r.last_ns(), END_NS - 1);

    let v = a.json();
    assert_eq!(v["status"], "success");
    assert_eq!(v["data"]["resultType"], "streams");
    assert!(v["data"].get("encodingFlags").is_none());
    // Without categorize-labels, structured metadata is merged into the stream labels,
    // so the entry with trace_id is its own stream. Streams sort by label string, where
    // `{app="api", env="prod", trace_id="abc"}` < `{app="api", env="prod"}` (',' < '}').
    assert_eq!(
        v["data"]["result"],
        json!([
            {"stream": {"app": "api", "env": "prod", "trace_id": "abc"}, "values": [["1787392799500000000", "second"]]},
            {"stream": {"app": "api", "env": "prod"}, "values": [["1787392798000000000", "first"]]},
            {"stream": {"app": "web"}, "values": [["1787392799000000000", "web line"]]},
        ])
    );
    assert!(v["data"]["stats"]["summary"].is_object());
}

#[tokio::test]
async fn forward_log_query_sorts_oldest_first_in_victorialogs() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(NDJSON))]).await;
    let a = get(&range_url(
        &h.base,
        &[
            ("query", r#"{app="api"} |= "line""#),
            ("limit", "5"),
            ("direction", "FORWARD"),
        ],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let r = &h.vl.requests()[0];
    assert_eq!(
        r.get("query"),
        r#"{app="api"} and _msg:~"line" | sort by (_time) limit 6"#
    );
    assert!(
        !r.has("limit"),
        "forward uses the sort pipe's limit: {:?}",
        r.form
    );
    // Entries inside a stream follow the direction: oldest first.
    let v = a.json();
    let api = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stream"] == json!({"app": "api", "env": "prod"}))
        .expect("stream without metadata");
    assert_eq!(api["values"][0][1], "first");
}

#[tokio::test]
async fn categorize_labels_splits_metadata_and_echoes_the_flag() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(NDJSON))]).await;
    let a = get_with(
        &range_url(&h.base, &[("query", r#"{app=~".+"}"#)]),
        &[("X-Loki-Response-Encoding-Flags", "categorize-labels")],
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    assert_eq!(v["data"]["encodingFlags"], json!(["categorize-labels"]));
    assert_eq!(
        v["data"]["result"],
        json!([
            {"stream": {"app": "api", "env": "prod"}, "values": [
                ["1787392799500000000", "second", {"structuredMetadata": {"trace_id": "abc"}}],
                ["1787392798000000000", "first", {}],
            ]},
            {"stream": {"app": "web"}, "values": [["1787392799000000000", "web line", {}]]},
        ])
    );
}

#[tokio::test]
async fn limit_caps_entries_across_streams() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(NDJSON))]).await;
    let a = get(&range_url(
        &h.base,
        &[("query", r#"{app=~".+"}"#), ("limit", "2")],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    let lines: Vec<&str> = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            s["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e[1].as_str().unwrap())
        })
        .collect();
    // The newest two: 09:59:59.5 and 09:59:59.
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines.contains(&"second") && lines.contains(&"web line"),
        "{lines:?}"
    );
}

#[tokio::test]
async fn post_form_is_accepted() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(""))]).await;
    let body = qs(&[
        ("query", r#"{app="api"}"#),
        ("start", &START_NS.to_string()),
        ("end", &END_NS.to_string()),
        ("limit", "7"),
    ]);
    let a = request(
        Method::POST,
        &format!("{}/loki/api/v1/query_range", h.base),
        &body,
        "application/x-www-form-urlencoded",
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.json()["data"]["result"], json!([]));
    let r = &h.vl.requests()[0];
    assert_eq!(r.get("query"), r#"{app="api"}"#);
    assert_eq!(r.get("limit"), "8");
}

#[tokio::test]
async fn empty_window_does_not_call_victorialogs() {
    let h = harness(vec![]).await;
    let t = START_NS.to_string();
    let url = format!(
        "{}/loki/api/v1/query_range?{}",
        h.base,
        qs(&[
            ("query", r#"{app="api"}"#),
            ("start", &t),
            ("end", &t),
            ("step", "1")
        ])
    );
    let a = get(&url).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.json()["data"]["result"], json!([]));
    assert!(h.vl.requests().is_empty());
}

#[tokio::test]
async fn grafana_health_check() {
    let h = harness(vec![]).await;
    let url = format!(
        "{}/loki/api/v1/query?{}",
        h.base,
        qs(&[
            ("query", "vector(1)+vector(1)"),
            ("time", "4000000000"),
            ("direction", "backward")
        ])
    );
    let a = get_with(
        &url,
        &[("X-Loki-Response-Encoding-Flags", "categorize-labels")],
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.content_type(), "application/json; charset=utf-8");
    let v = a.json();
    assert_eq!(v["status"], "success");
    assert_eq!(v["data"]["resultType"], "vector");
    assert_eq!(
        v["data"]["result"],
        json!([{"metric": {}, "value": [4000000000u64, "2"]}])
    );
    assert!(h.vl.requests().is_empty());
}

#[tokio::test]
async fn instant_scalar_and_comparison() {
    let h = harness(vec![]).await;
    let a = get(&format!(
        "{}/loki/api/v1/query?{}",
        h.base,
        qs(&[("query", "1+1"), ("time", "1724325600.5")])
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    assert_eq!(v["data"]["resultType"], "scalar");
    assert_eq!(v["data"]["result"], json!([1724325600.5, "2"]));

    let a = get(&format!(
        "{}/loki/api/v1/query?{}",
        h.base,
        qs(&[("query", "vector(1) > vector(2)"), ("time", "10")])
    ))
    .await;
    assert_eq!(a.json()["data"]["result"], json!([]));
    let a = get(&format!(
        "{}/loki/api/v1/query?{}",
        h.base,
        qs(&[("query", "vector(3) / 2"), ("time", "10")])
    ))
    .await;
    assert_eq!(
        a.json()["data"]["result"],
        json!([{"metric": {}, "value": [10, "1.5"]}])
    );
}

#[tokio::test]
async fn range_of_a_constant_is_a_matrix() {
    let h = harness(vec![]).await;
    let url = format!(
        "{}/loki/api/v1/query_range?{}",
        h.base,
        qs(&[
            ("query", "vector(1)+vector(1)"),
            ("start", "100"),
            ("end", "130"),
            ("step", "15")
        ])
    );
    let a = get(&url).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    assert_eq!(v["data"]["resultType"], "matrix");
    // Loki's query frontend aligns the range to the step (start rounded down,
    // end rounded up), as measured on Loki 3.7.8: 100..130 at 15 s is 90..135.
    assert_eq!(
        v["data"]["result"],
        json!([{"metric": {}, "values": [[90, "2"], [105, "2"], [120, "2"], [135, "2"]]}])
    );
}

#[tokio::test]
async fn instant_log_query_is_rejected() {
    let h = harness(vec![]).await;
    let a = get(&format!(
        "{}/loki/api/v1/query?{}",
        h.base,
        qs(&[("query", r#"{app="api"}"#)])
    ))
    .await;
    assert_eq!(
        a.assert_error(StatusCode::BAD_REQUEST),
        "log queries are not supported as an instant query type, please change your query to a range query type"
    );
}

#[tokio::test]
async fn parse_errors_carry_lokis_text() {
    let h = harness(vec![]).await;
    let cases = [
        (
            r#"unk({ foo = "bar" }[5m])"#,
            "parse error at line 1, col 1: syntax error: unexpected IDENTIFIER",
        ),
        // Loki refuses a bad line-filter regex before running anything (400, RE2's wording);
        // the harness has no canned answer, so reaching VictoriaLogs would fail differently.
        (
            r#"{app="api"} |~ "(""#,
            r#"parse error : stage '|~ "("' : error parsing regexp: missing closing ): `(`"#,
        ),
        (
            r#"sum(count_over_time({app="api"} |~ "[z-a]" [5m]))"#,
            r#"parse error : stage '|~ "[z-a]"' : error parsing regexp: invalid character class range: `z-a`"#,
        ),
        (
            r#"{app=~".*"}"#,
            r#"parse error : queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~".*" does not meet this requirement, but app=~".+" will"#,
        ),
    ];
    for (q, want) in cases {
        let a = get(&range_url(&h.base, &[("query", q)])).await;
        assert_eq!(a.assert_error(StatusCode::BAD_REQUEST), want, "{q}");
    }
}

#[tokio::test]
async fn parameter_errors_carry_lokis_text() {
    let h = harness(vec![]).await;
    let q = r#"{app="api"}"#;
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("query", q), ("limit", "0")],
            "limit must be a positive value",
        ),
        (
            &[("query", q), ("limit", "-3")],
            "limit must be a positive value",
        ),
        (
            &[("query", q), ("direction", "sideways")],
            "invalid direction 'sideways'",
        ),
        (
            &[("query", q), ("start", "200"), ("end", "100")],
            "end timestamp must not be before or equal to start time",
        ),
        (
            &[
                ("query", q),
                ("start", "100"),
                ("end", "200"),
                ("step", "0"),
            ],
            "zero or negative query resolution step widths are not accepted. Try a positive integer",
        ),
        (
            &[
                ("query", q),
                ("start", "100"),
                ("end", "200"),
                ("step", "1.5s"),
            ],
            r#"cannot parse "1.5s" to a valid duration"#,
        ),
        (
            &[
                ("query", q),
                ("start", "0"),
                ("end", "11001"),
                ("step", "1"),
            ],
            "exceeded maximum resolution of 11,000 points per time series. Try increasing the value of the step parameter",
        ),
        (
            &[("query", q), ("start", "yesterday")],
            r#"could not parse 'start' parameter: strconv.ParseInt: parsing "yesterday": invalid syntax"#,
        ),
        (
            &[
                ("query", q),
                ("start", "100"),
                ("end", "200"),
                ("interval", "-1"),
            ],
            "interval must be >= 0",
        ),
        (
            &[
                ("query", q),
                ("start", "0"),
                ("end", "2682000"),
                ("step", "300"),
            ],
            "the query time range exceeds the limit (query length: 745h0m0s, limit: 30d1h)",
        ),
        (
            &[
                ("query", q),
                ("start", "100"),
                ("end", "200"),
                ("limit", "10000"),
            ],
            "max entries limit per query exceeded, limit > max_entries_limit_per_query (10000 > 5000)",
        ),
    ];
    for (pairs, want) in cases {
        let a = get(&format!("{}/loki/api/v1/query_range?{}", h.base, qs(pairs))).await;
        assert_eq!(a.assert_error(StatusCode::BAD_REQUEST), *want, "{pairs:?}");
    }
    // Metric queries ignore the entries limit.
    let a = get(&format!(
        "{}/loki/api/v1/query_range?{}",
        h.base,
        qs(&[
            ("query", "vector(1)"),
            ("start", "100"),
            ("end", "200"),
            ("limit", "10000")
        ])
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(h.vl.requests().is_empty());
}

#[tokio::test]
async fn stages_victorialogs_cannot_compute_run_in_the_proxy() {
    let row = r#"{"_time":"2026-08-22T09:59:58Z","_stream_id":"s1","_stream":"{app=\"api\"}","_msg":"{\"msg\":\"hi\",\"n\":2}","app":"api"}"#;
    let h = harness(vec![("/select/logsql/query", Canned::ok(row))]).await;
    let a = get(&range_url(
        &h.base,
        &[(
            "query",
            r#"{app="api"} | json | line_format "{{.msg}} x{{.n}}""#,
        )],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    // Loki's json parser output becomes labels; line_format rewrites the line.
    assert_eq!(
        v["data"]["result"],
        json!([{"stream": {"app": "api", "msg": "hi", "n": "2"},
                "values": [["1787392798000000000", "hi x2"]]}])
    );
    // VictoriaLogs was asked only for what it computes exactly: the selector.
    let reqs = h.vl.requests();
    assert!(!reqs.is_empty());
    assert_eq!(reqs[0].get("query"), r#"{app="api"}"#);
}

#[tokio::test]
async fn long_urls_and_headers_are_accepted() {
    // Drilldown's URLs and Grafana's forwarded headers exceed common 8 KiB limits.
    let h = harness(vec![("/select/logsql/query", Canned::ok(""))]).await;
    // 60 KB: just under the `http` crate's own URI ceiling (64 KiB).
    let pad = "x".repeat(60_000);
    let header = "y".repeat(30_000);
    let a = get_with(
        &range_url(&h.base, &[("query", r#"{app="api"}"#), ("pad", &pad)]),
        &[("X-Query-Tags", &header)],
    )
    .await;
    assert_eq!(
        a.status,
        StatusCode::OK,
        "{}",
        &a.body[..a.body.len().min(200)]
    );
    assert_eq!(h.vl.requests().len(), 1);
}
