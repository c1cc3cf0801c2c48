//! `index/volume_range` against a fake VictoriaLogs: stats rows repeated per
//! bucket, dotted stream label names, escaped values and level fields are
//! decoded into the same answer Loki's index would give.

use crate::support::client::*;
use crate::support::fake_vl::*;

const START_NS: &str = "1787389200000000000";
const END_NS: &str = "1787389320000000000";

/// `(service_name, detected_level, [(time, bytes)])` of one answer series.
type Series = (String, String, Vec<(f64, String)>);

#[tokio::test]
async fn volume_range_decodes_repeated_streams_per_bucket() {
    // Two buckets (60 s); the dotted `k8s.container.name` is sanitized before
    // `service_name` is derived from it; one value holds an escaped quote.
    let rows = concat!(
        r#"{"_time":"2026-08-22T09:00:00Z","_stream":"{k8s.container.name=\"api\",env=\"p\"}","level":"ERR","e":"2","b":"100"}"#,
        "\n",
        r#"{"_time":"2026-08-22T09:01:00Z","_stream":"{k8s.container.name=\"api\",env=\"p\"}","level":"ERR","e":"1","b":"40"}"#,
        "\r\n\n",
        r#"{"_time":"2026-08-22T09:01:00Z","_stream":"{k8s.container.name=\"api\",env=\"p\"}","e":"1","b":"7"}"#,
        "\n",
        r#"{"_time":"2026-08-22T09:00:00Z","_stream":"{app=\"we\\\"b\"}","severity":"warning","e":"5","b":"300"}"#,
        "\n",
        r#"{"_time":"2026-08-22T09:01:00Z","_stream":"{app=\"we\\\"b\"}","detected_level":"info","level":"error","e":"1","b":"9"}"#,
        "\n",
    );
    let h = harness_discovering(vec![("/select/logsql/query", Canned::ok(rows))]).await;
    let a = get(&format!(
        "{}/loki/api/v1/index/volume_range?{}",
        h.base,
        qs(&[
            ("query", r#"{service_name=~"api|we.*"}"#),
            ("start", START_NS),
            ("end", END_NS),
            ("step", "60"),
            ("targetLabels", "service_name,detected_level"),
        ])
    ))
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let v = a.json();
    assert_eq!(v["data"]["resultType"], "matrix");
    let got: Vec<Series> = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["metric"]["service_name"].as_str().unwrap().to_owned(),
                r["metric"]["detected_level"].as_str().unwrap().to_owned(),
                r["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| (p[0].as_f64().unwrap(), p[1].as_str().unwrap().to_owned()))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "we\"b".into(),
                "warn".into(),
                vec![(1_787_389_259.999, "300".into())]
            ),
            (
                "api".into(),
                "error".into(),
                vec![
                    (1_787_389_259.999, "100".into()),
                    (1_787_389_319.999, "40".into())
                ]
            ),
            (
                "we\"b".into(),
                "info".into(),
                vec![(1_787_389_319.999, "9".into())]
            ),
            (
                "api".into(),
                "unknown".into(),
                vec![(1_787_389_319.999, "7".into())]
            ),
        ]
    );
    let r = &h.vl.requests()[0];
    assert!(
        r.get("query").starts_with(
            r#"* | stats by (_time:60000000000ns, _stream, "detected_level", "level","#
        ),
        "{}",
        r.get("query")
    );
}

#[tokio::test]
async fn malformed_stats_row_is_a_bad_gateway() {
    let h = harness_discovering(vec![(
        "/select/logsql/query",
        Canned::ok("{\"_stream\":\"{a=\\\"b\\\"}\",\"e\":\"1\",\"b\":\"2\"}\n[1]\n"),
    )])
    .await;
    let a = get(&format!(
        "{}/loki/api/v1/index/volume?{}",
        h.base,
        qs(&[
            ("query", r#"{a="b"}"#),
            ("start", START_NS),
            ("end", END_NS)
        ])
    ))
    .await;
    assert_eq!(a.status, 502, "{}", a.body);
    assert!(a.body.contains("invalid stats row 2"), "{}", a.body);
}
