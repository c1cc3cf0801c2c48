//! Logs Drilldown's metric panels against a real VictoriaLogs with
//! discovery on: `sum by (detected_level)` and `sum by (service_name)` of
//! `count_over_time` over streams that never stored `service_name` or
//! `detected_level`, checked against counts computed from the pushed data.

use crate::support;

use std::collections::BTreeMap;

use crate::support::backend::{self, VictoriaLogs};
use crate::support::client::{self, url};
use serde_json::{Value, json};

/// 2026-08-22T10:00:00Z.
const BASE_S: i64 = 1_787_392_800;

/// One pushed entry with the `service_name` and `detected_level` Loki's
/// ingest gives it (Loki 3.7 defaults).
struct Entry {
    stream: Value,
    line: &'static str,
    metadata: Option<Value>,
    service: &'static str,
    level: &'static str,
}

fn dataset() -> Vec<Entry> {
    let e = |stream: Value, line, metadata, service, level| Entry {
        stream,
        line,
        metadata,
        service,
        level,
    };
    vec![
        e(
            json!({"app": "api", "env": "prod"}),
            "level=error msg=\"payment failed\"",
            None,
            "api",
            "error",
        ),
        e(
            json!({"app": "api", "env": "prod"}),
            r#"{"level":"info","msg":"ok"}"#,
            None,
            "api",
            "info",
        ),
        e(
            json!({"app": "api", "env": "prod"}),
            "[WARN] slow",
            None,
            "api",
            "warn",
        ),
        e(
            json!({"app": "api", "env": "prod"}),
            "level=error msg=again",
            None,
            "api",
            "error",
        ),
        // `service` wins over `app` in Loki's order.
        e(
            json!({"service": "api", "app": "other"}),
            "debug: tick",
            None,
            "api",
            "debug",
        ),
        // A stored service_name is kept; a level field of the metadata wins over the line.
        e(
            json!({"service_name": "api", "app": "ignored"}),
            "GET /x 200 error",
            Some(json!({"level": "Warning"})),
            "api",
            "warn",
        ),
        e(json!({"app": "web"}), "info web", None, "web", "info"),
        e(
            json!({"env": "orphan"}),
            "no name",
            None,
            "unknown_service",
            "unknown",
        ),
    ]
}

fn push_body(data: &[Entry]) -> String {
    let streams: Vec<Value> = data
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let ns = ((BASE_S + 1 + i as i64) * 1_000_000_000).to_string();
            let value = match &e.metadata {
                Some(m) => json!([ns, e.line, m]),
                None => json!([ns, e.line]),
            };
            json!({"stream": e.stream, "values": [value]})
        })
        .collect();
    json!({ "streams": streams }).to_string()
}

async fn start_lokivl(backend: &str, discovery: logsql_ast::Discovery) -> String {
    support::start_lokivl_with(backend, |s| s.discovery = discovery).await
}

/// A range query with steps BASE+60 s and BASE+120 s: the first 1m window
/// holds every entry, the second none.
async fn query(base: &str, q: &str) -> Value {
    let (start, end) = (
        ((BASE_S + 60) * 1_000_000_000).to_string(),
        ((BASE_S + 120) * 1_000_000_000).to_string(),
    );
    let (st, _, b) = client::try_get(
        &url(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", q),
                ("start", &start),
                ("end", &end),
                ("step", "60"),
                ("limit", "100"),
            ],
        ),
        &[],
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{q}: {b}");
    serde_json::from_str(&b).unwrap()
}

/// `label value → count` of a matrix whose series each have one point at BASE+60 s.
fn counts(v: &Value, label: &str) -> BTreeMap<String, String> {
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let values = s["values"].as_array().unwrap();
            assert_eq!(values.len(), 1, "{s}");
            assert_eq!(values[0][0], json!(BASE_S + 60), "{s}");
            (
                s["metric"][label].as_str().unwrap().to_owned(),
                values[0][1].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn expected<'a>(
    data: &'a [Entry],
    key: impl Fn(&'a Entry) -> Option<&'a str>,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for e in data {
        if let Some(k) = key(e) {
            *out.entry(k.to_owned()).or_default() += 1;
        }
    }
    out.into_iter().map(|(k, n)| (k, n.to_string())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drilldown_metric_panels_on_real_victorialogs() {
    let Some(bin) = backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN)\n"),
        );
        return;
    };
    let data = dataset();
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(push_body(&data)).await;
    let base = start_lokivl(&vl.url, engine::discovery::loki_defaults()).await;

    // Service card / volume histogram: levels of one service.
    let want = expected(&data, |e| (e.service == "api").then_some(e.level));
    assert_eq!(want.len(), 4, "the dataset covers several levels");
    for q in [
        r#"sum by (detected_level) (count_over_time({service_name="api"}[1m]))"#,
        r#"sum by (detected_level) (count_over_time({service_name="api"} | drop __error__ [1m]))"#,
    ] {
        assert_eq!(
            counts(&query(&base, q).await, "detected_level"),
            want,
            "{q}"
        );
    }

    // Service list: entries per derived service, counted in VictoriaLogs per stream.
    let want = expected(&data, |e| Some(e.service));
    assert_eq!(
        counts(
            &query(
                &base,
                r#"sum by (service_name) (count_over_time({service_name=~".+"}[1m]))"#
            )
            .await,
            "service_name"
        ),
        want
    );
    // A filter on the synthesized level runs per entry.
    let want = expected(&data, |e| (e.level == "error").then_some(e.service));
    assert_eq!(
        counts(
            &query(&base, r#"sum by (service_name) (count_over_time({service_name=~".+"} | detected_level="error" [1m]))"#).await,
            "service_name"
        ),
        want
    );

    // Without `by`, a series carries the labels of the log answer's stream.
    let metric = query(&base, r#"count_over_time({app="web"}[1m])"#).await;
    let (st, _, b) = client::try_get(
        &url(
            &base,
            "/loki/api/v1/query_range",
            &[
                ("query", r#"{app="web"}"#),
                ("start", &((BASE_S - 60) * 1_000_000_000).to_string()),
                ("end", &((BASE_S + 60) * 1_000_000_000).to_string()),
                ("limit", "10"),
            ],
        ),
        &[],
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{b}");
    let logs: Value = serde_json::from_str(&b).unwrap();
    let stream = &logs["data"]["result"][0]["stream"];
    assert_eq!(
        *stream,
        json!({"app": "web", "detected_level": "info", "service_name": "web"})
    );
    assert_eq!(metric["data"]["result"][0]["metric"], *stream);
    assert_eq!(metric["data"]["result"].as_array().unwrap().len(), 1);
}
