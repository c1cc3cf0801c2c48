//! Drilldown metadata endpoints against a fake VictoriaLogs: the exact
//! requests lokivl sends and the exact answers it derives.

use crate::support::client::*;
use crate::support::fake_vl::*;

const START: &str = "2026-08-22T09:00:00.000Z";
const END: &str = "2026-08-22T10:00:00.000Z";
const START_NS: &str = "1787389200000000000";
const END_NS: &str = "1787392800000000000";

#[tokio::test]
async fn index_stats_sums_exact_vl_stats() {
    let rows = concat!(
        r#"{"_stream":"{app=\"api\",env=\"prod\"}","e":"3","b":"120"}"#,
        "\n",
        r#"{"_stream":"{app=\"web\",env=\"prod\"}","e":"2","b":"80"}"#,
        "\n"
    );
    let h = harness_discovering(vec![("/select/logsql/query", Canned::ok(rows))]).await;
    let a = get(&format!(
        "{}/loki/api/v1/index/stats?{}",
        h.base,
        qs(&[
            ("query", r#"{env="prod"}"#),
            ("start", START_NS),
            ("end", END_NS)
        ])
    ))
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.body,
        r#"{"streams":2,"chunks":2,"bytes":200,"entries":5}"#
    );
    let r = &h.vl.requests()[0];
    assert_eq!(r.path, "/select/logsql/query");
    assert_eq!(
        r.get("query"),
        r#"{env="prod"} | stats by (_stream) count() as e, sum_len(_msg) as b"#
    );
    assert_eq!(r.get("start"), START_NS);
    assert_eq!(r.last_ns().to_string(), END_NS);
}

#[tokio::test]
async fn volume_groups_by_synthesized_service_name() {
    let rows = concat!(
        r#"{"_stream":"{app=\"api\",env=\"prod\"}","e":"3","b":"120"}"#,
        "\n",
        r#"{"_stream":"{app=\"api\",env=\"dev\"}","e":"1","b":"30"}"#,
        "\n",
        r#"{"_stream":"{service_name=\"checkout\"}","e":"9","b":"500"}"#,
        "\n",
        r#"{"_stream":"{env=\"x\"}","e":"1","b":"150"}"#,
        "\n"
    );
    let h = harness_discovering(vec![("/select/logsql/query", Canned::ok(rows))]).await;
    let a = get(&format!(
        "{}/loki/api/v1/index/volume?{}",
        h.base,
        qs(&[
            ("query", r#"{service_name=~".+"}"#),
            ("start", START),
            ("end", END),
            ("limit", "5000")
        ])
    ))
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let v = a.json();
    assert_eq!(v["status"], "success");
    assert_eq!(v["data"]["resultType"], "vector");
    let got: Vec<(String, String, f64)> = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["metric"]["service_name"].as_str().unwrap().to_owned(),
                r["value"][1].as_str().unwrap().to_owned(),
                r["value"][0].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("checkout".into(), "500".into(), 1_787_392_800.0),
            ("api".into(), "150".into(), 1_787_392_800.0),
            ("unknown_service".into(), "150".into(), 1_787_392_800.0),
        ]
    );
    // The service_name matcher runs in lokivl: VictoriaLogs gets every stream.
    let r = &h.vl.requests()[0];
    assert_eq!(
        r.get("query"),
        "* | stats by (_stream) count() as e, sum_len(_msg) as b"
    );
    assert_eq!(r.get("start"), START_NS);
}

#[tokio::test]
async fn detected_labels_exact_with_id_filter_and_empty_query() {
    let streams = r#"{"values":[{"value":"{app=\"api\",pod=\"1\",req=\"12\"}","hits":3},{"value":"{app=\"web\",pod=\"2\",req=\"13\"}","hits":1},{"value":"{app=\"web\",pod=\"3\",req=\"14\"}","hits":1}]}"#;
    let h = harness_discovering(vec![("/select/logsql/streams", Canned::ok(streams))]).await;
    let a = get(&format!(
        "{}/loki/api/v1/detected_labels?{}",
        h.base,
        qs(&[("query", ""), ("start", START), ("end", END)])
    ))
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.body,
        r#"{"detectedLabels":[{"cardinality":2,"label":"app"},{"cardinality":3,"label":"pod"},{"cardinality":2,"label":"service_name"}]}"#
    );
    assert_eq!(h.vl.requests()[0].get("query"), "*");
}

#[tokio::test]
async fn detected_labels_empty_is_bare_object() {
    let h = harness_discovering(vec![(
        "/select/logsql/streams",
        Canned::ok(r#"{"values":[]}"#),
    )])
    .await;
    let a = get(&format!("{}/loki/api/v1/detected_labels", h.base)).await;
    assert_eq!((a.status.as_u16(), a.body.as_str()), (200, "{}"));
}

fn ndjson_rows() -> String {
    [
        r#"{"_time":"2026-08-22T09:59:59Z","_stream_id":"s1","_stream":"{app=\"api\"}","_msg":"{\"user\":{\"id\":7},\"took\":\"15ms\"}","app":"api","trace_id":"t1"}"#,
        r#"{"_time":"2026-08-22T09:59:58Z","_stream_id":"s1","_stream":"{app=\"api\"}","_msg":"method=GET status=200","app":"api","trace_id":"t2"}"#,
        r#"{"_time":"2026-08-22T09:59:57Z","_stream_id":"s1","_stream":"{app=\"api\"}","_msg":"method=POST status=500.5","app":"api"}"#,
    ]
    .join("\n")
}

#[tokio::test]
async fn detected_fields_over_a_full_drilldown_pipeline() {
    let h = harness_discovering(vec![("/select/logsql/query", Canned::ok(&ndjson_rows()))]).await;
    let a = get(&format!(
        "{}/loki/api/v1/detected_fields?{}",
        h.base,
        qs(&[
            (
                "query",
                r#"{app="api"} | json | logfmt | drop __error__, __error_details__"#
            ),
            ("start", START),
            ("end", END)
        ])
    ))
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let v = a.json();
    assert_eq!(v["limit"], 1000);
    let fields = v["fields"].as_array().unwrap();
    let f = |name: &str| {
        fields
            .iter()
            .find(|f| f["label"] == name)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(f("trace_id")["parsers"], serde_json::Value::Null);
    assert_eq!(f("trace_id")["cardinality"], 2);
    assert_eq!(f("user_id")["type"], "int");
    assert_eq!(f("user_id")["parsers"], serde_json::json!(["json"]));
    assert_eq!(f("user_id")["jsonPath"], serde_json::json!(["user", "id"]));
    assert_eq!(f("took")["type"], "duration");
    assert_eq!(f("method")["cardinality"], 2);
    assert_eq!(f("method")["parsers"], serde_json::json!(["logfmt"]));
    // The last entry read decides the type, as in Loki.
    assert_eq!(f("status")["type"], "float");
    // detected_level is structured metadata in Loki (stored at ingest); no
    // line names a level here, so every entry is `unknown`.
    assert_eq!(f("detected_level")["parsers"], serde_json::Value::Null);
    assert_eq!(f("detected_level")["cardinality"], 1);
    // Loki's line_limit default: the newest 100 lines.
    let r = &h.vl.requests()[0];
    assert_eq!(r.last_ns(), 1_787_392_799_999_999_999);
}

#[tokio::test]
async fn detected_field_values_and_empty() {
    let h = harness_discovering(vec![("/select/logsql/query", Canned::ok(&ndjson_rows()))]).await;
    let a = get(&format!(
        "{}/loki/api/v1/detected_field/method/values?{}",
        h.base,
        qs(&[
            ("query", r#"{app="api"}"#),
            ("start", START_NS),
            ("end", END_NS),
            ("limit", "1000")
        ])
    ))
    .await;
    assert_eq!(a.body, r#"{"limit":1000,"values":["GET","POST"]}"#);
    let a = get(&format!(
        "{}/loki/api/v1/detected_field/nope/values?{}",
        h.base,
        qs(&[
            ("query", r#"{app="api"}"#),
            ("start", START_NS),
            ("end", END_NS)
        ])
    ))
    .await;
    assert_eq!(a.body, "{}");
}

#[tokio::test]
async fn patterns_mined_with_exact_counts() {
    let mut rows = Vec::new();
    for (i, user) in ["alice", "bob", "carol", "dave"].iter().enumerate() {
        rows.push(format!(
            r#"{{"_time":"2026-08-22T09:00:{:02}Z","_stream_id":"s","_stream":"{{app=\"api\"}}","_msg":"user logged in as {user}","app":"api"}}"#,
            i * 3
        ));
    }
    rows.push(r#"{"_time":"2026-08-22T09:00:01Z","_stream_id":"s","_stream":"{app=\"api\"}","_msg":"level=error msg=payment failed id=1","app":"api"}"#.to_owned());
    let h = harness_discovering(vec![("/select/logsql/query", Canned::ok(&rows.join("\n")))]).await;
    let a = get(&format!(
        "{}/loki/api/v1/patterns?{}",
        h.base,
        qs(&[
            ("query", r#"{app="api"}"#),
            ("start", START),
            ("end", END),
            ("step", "5s")
        ])
    ))
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let v = a.json();
    assert_eq!(v["status"], "success");
    assert_eq!(
        v["data"][0],
        serde_json::json!({"pattern":"user logged in as <_>","level":"unknown","samples":[[1787389200,2],[1787389205,2]]})
    );
    assert_eq!(v["data"][1]["level"], "error");
    assert_eq!(
        v["data"][1]["samples"],
        serde_json::json!([[1787389200, 1]])
    );
    assert!(v.get("warnings").is_none());
    let r = &h.vl.requests()[0];
    assert_eq!(r.get("limit"), "50000");
}

#[tokio::test]
async fn drilldown_limits_shape() {
    let h = harness_discovering(vec![]).await;
    let a = get_with(
        &format!("{}/loki/api/v1/drilldown-limits", h.base),
        &[("X-Grafana-Cache", "private, max-age=86400")],
    )
    .await;
    assert_eq!(a.status, 200);
    let v = a.json();
    assert_eq!(v["pattern_ingester_enabled"], true);
    assert_eq!(v["limits"]["volume_enabled"], true);
    assert_eq!(v["limits"]["max_query_series"], 500);
    assert_eq!(v["limits"]["query_timeout"], "1m");
    assert!(v["version"].as_str().unwrap().starts_with('3'));
    assert!(h.vl.requests().is_empty());
}

#[tokio::test]
async fn drilldown_sized_urls_are_accepted() {
    let h = harness_discovering(vec![("/select/logsql/query", Canned::ok(&ndjson_rows()))]).await;
    let filters: String = (0..400)
        .map(|i| format!(r#" != "needle-{i:04}""#))
        .collect();
    let q =
        format!(r#"{{app="api"}}{filters} | json | logfmt | drop __error__, __error_details__"#);
    let url = format!(
        "{}/loki/api/v1/detected_fields?{}",
        h.base,
        qs(&[("query", &q), ("start", START), ("end", END)])
    );
    assert!(url.len() > 8 * 1024, "{}", url.len());
    let a = get_with(&url, &[("X-Query-Tags", "Source=grafana-lokiexplore-app")]).await;
    assert_eq!(a.status, 200, "{}", a.body);
}
