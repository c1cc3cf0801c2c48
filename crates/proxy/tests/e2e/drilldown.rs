//! Drilldown endpoints end to end against a real VictoriaLogs, with Grafana's
//! parameter shapes (ns and RFC3339 times, `step=5000ms`, Drilldown's
//! `X-Query-Tags`), checking values computed from the pushed data.

use crate::support;

use crate::support::backend::{self, VictoriaLogs};
use crate::support::client::{self, url};

/// 2026-08-22T10:00:00Z.
const BASE_S: i64 = 1_787_392_800;

fn push_body() -> (String, Vec<(String, &'static str, usize)>) {
    // (stream app, line) pairs; sizes are summed below.
    let mut streams = Vec::new();
    let mut lines = Vec::new();
    for (app, env) in [("api", "prod"), ("web", "prod"), ("api", "dev")] {
        let mut values = Vec::new();
        for i in 0..6i64 {
            let line = if app == "api" {
                format!("level=error msg=\"payment failed\" order={i} took={i}ms")
            } else {
                format!(r#"{{"level":"info","user":{{"id":{i}}},"path":"/p{i}"}}"#)
            };
            let ts = (BASE_S + i * 10) * 1_000_000_000;
            lines.push((app.to_owned(), env, line.len()));
            values.push(serde_json::json!([ts.to_string(), line, {"trace_id": format!("t{i}")}]));
        }
        streams.push(serde_json::json!({"stream": {"app": app, "env": env}, "values": values}));
    }
    (serde_json::json!({ "streams": streams }).to_string(), lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drilldown_endpoints_on_real_victorialogs() {
    let Some(bin) = backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN)\n"),
        );
        return;
    };
    let vl = VictoriaLogs::start(&bin).await;
    let (body, lines) = push_body();
    vl.ingest(body).await;
    let base = support::start_lokivl_with(&vl.url, |s| {
        s.discovery = engine::discovery::loki_defaults();
    })
    .await;
    let start_ns = ((BASE_S - 60) * 1_000_000_000).to_string();
    let end_ns = ((BASE_S + 3600) * 1_000_000_000).to_string();
    let start_rfc = "2026-08-22T09:59:00.000Z";
    let end_rfc = "2026-08-22T11:00:00.000Z";
    let tags = [("X-Query-Tags", "Source=grafana-lokiexplore-app")];

    // index/stats: exact line bytes.
    let prod_bytes: usize = lines.iter().filter(|l| l.1 == "prod").map(|l| l.2).sum();
    let (st, _, b) = client::try_get(
        &url(
            &base,
            "/loki/api/v1/index/stats",
            &[
                ("query", r#"{env="prod"}"#),
                ("start", &start_ns),
                ("end", &end_ns),
            ],
        ),
        &[],
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{b}");
    let v: serde_json::Value = serde_json::from_str(&b).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"streams":2,"chunks":2,"bytes":prod_bytes,"entries":12})
    );

    // index/volume by service_name (synthesized from app), RFC3339 times.
    let api_bytes: usize = lines.iter().filter(|l| l.0 == "api").map(|l| l.2).sum();
    let web_bytes: usize = lines.iter().filter(|l| l.0 == "web").map(|l| l.2).sum();
    let (st, _, b) = client::try_get(
        &url(
            &base,
            "/loki/api/v1/index/volume",
            &[
                ("query", r#"{service_name=~".+"}"#),
                ("start", start_rfc),
                ("end", end_rfc),
                ("limit", "5000"),
            ],
        ),
        &tags,
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{b}");
    let v: serde_json::Value = serde_json::from_str(&b).unwrap();
    let result = v["data"]["result"].as_array().unwrap();
    assert_eq!(result.len(), 2);
    assert_eq!(
        result[0]["metric"],
        serde_json::json!({"service_name": "api"})
    );
    assert_eq!(result[0]["value"][1], api_bytes.to_string());
    assert_eq!(result[1]["value"][1], web_bytes.to_string());

    // detected_labels with an empty query.
    let (_, _, b) = client::try_get(
        &url(
            &base,
            "/loki/api/v1/detected_labels",
            &[("query", ""), ("start", start_rfc), ("end", end_rfc)],
        ),
        &tags,
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&b).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"detectedLabels":[{"label":"app","cardinality":2},{"label":"env","cardinality":2},{"label":"service_name","cardinality":2}]})
    );

    // detected_fields over Drilldown's pipeline.
    let (st, _, b) = client::try_get(
        &url(
            &base,
            "/loki/api/v1/detected_fields",
            &[
                (
                    "query",
                    r#"{service_name="api"} | json | logfmt | drop __error__, __error_details__"#,
                ),
                ("start", start_rfc),
                ("end", end_rfc),
            ],
        ),
        &tags,
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    // service_name is not stored, so a selector on it alone finds nothing in VictoriaLogs.
    assert!(st == 200, "{b}");
    let (st, _, b) = client::try_get(
        &url(
            &base,
            "/loki/api/v1/detected_fields",
            &[
                (
                    "query",
                    r#"{app="api"} | json | logfmt | drop __error__, __error_details__"#,
                ),
                ("start", start_rfc),
                ("end", end_rfc),
            ],
        ),
        &tags,
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{b}");
    let v: serde_json::Value = serde_json::from_str(&b).unwrap();
    let fields = v["fields"].as_array().unwrap();
    let f = |n: &str| {
        fields
            .iter()
            .find(|f| f["label"] == n)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(f("order")["cardinality"], 6);
    assert_eq!(f("order")["type"], "int");
    assert_eq!(f("took")["type"], "duration");
    assert_eq!(f("order")["parsers"], serde_json::json!(["logfmt"]));
    assert_eq!(f("trace_id")["parsers"], serde_json::Value::Null);
    assert_eq!(f("trace_id")["cardinality"], 6);

    // detected field values, ns times (Grafana's language provider).
    let (_, _, b) = client::try_get(
        &url(
            &base,
            "/loki/api/v1/detected_field/user_id/values",
            &[
                ("query", r#"{app="web"}"#),
                ("start", &start_ns),
                ("end", &end_ns),
                ("limit", "1000"),
            ],
        ),
        &[],
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&b).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"limit":1000,"values":["0","1","2","3","4","5"]})
    );

    // patterns with Grafana's step.
    let (st, _, b) = client::try_get(
        &url(
            &base,
            "/loki/api/v1/patterns",
            &[
                ("query", r#"{app="api"}"#),
                ("start", start_rfc),
                ("end", end_rfc),
                ("step", "5000ms"),
            ],
        ),
        &tags,
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{b}");
    let v: serde_json::Value = serde_json::from_str(&b).unwrap();
    assert_eq!(v["data"][0]["level"], "error");
    let total: i64 = v["data"][0]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[1].as_i64().unwrap())
        .sum();
    assert_eq!(total, 12, "{b}");
    assert_eq!(v["data"][0]["samples"][0], serde_json::json!([BASE_S, 2]));

    // drilldown-limits.
    let (st, _, b) = client::try_get(&format!("{base}/loki/api/v1/drilldown-limits"), &[])
        .await
        .map(client::Answer::parts)
        .unwrap();
    assert_eq!(st, 200);
    assert!(b.contains(r#""pattern_ingester_enabled":true"#), "{b}");
}
