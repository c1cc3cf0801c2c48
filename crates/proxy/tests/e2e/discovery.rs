//! Loki's label discovery against a real VictoriaLogs: streams pushed with
//! only `app` (or `service`, or nothing Loki derives a name from) are found
//! by `{service_name="…"}`, and answers carry `service_name` and
//! `detected_level` as Loki 3.7 stores them.

use crate::support;

use crate::support::backend::{self, VictoriaLogs};
use crate::support::client::{self, url};
use serde_json::{Value, json};

/// 2026-08-22T10:00:00Z.
const BASE_S: i64 = 1_787_392_800;

fn push_body() -> String {
    let ns = |i: i64| ((BASE_S + i) * 1_000_000_000).to_string();
    json!({"streams": [
        {"stream": {"app": "api", "env": "prod"}, "values": [
            [ns(1), "level=error msg=\"payment failed\""],
            [ns(2), r#"{"level":"info","msg":"ok"}"#],
            [ns(3), "[WARN] slow"],
            [ns(4), "level=error msg=again"],
        ]},
        // service wins over app in Loki's order.
        {"stream": {"service": "api", "app": "other"}, "values": [
            [ns(5), "debug: tick"],
        ]},
        // service_name stored: kept as is.
        {"stream": {"service_name": "api", "app": "ignored"}, "values": [
            [ns(6), "GET /x 200", {"level": "Warning"}],
        ]},
        {"stream": {"app": "web"}, "values": [[ns(7), "info web"]]},
        {"stream": {"env": "orphan"}, "values": [[ns(8), "no name"]]},
    ]})
    .to_string()
}

async fn start_lokivl(backend: &str, discovery: logsql_ast::Discovery) -> String {
    support::start_lokivl_with(backend, |s| s.discovery = discovery).await
}

async fn query(base: &str, q: &str, headers: &[(&str, &str)]) -> Value {
    let (start, end) = (
        ((BASE_S - 60) * 1_000_000_000).to_string(),
        ((BASE_S + 600) * 1_000_000_000).to_string(),
    );
    let (st, _, b) = client::try_get(
        &url(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", q),
                ("start", &start),
                ("end", &end),
                ("limit", "100"),
                ("direction", "forward"),
            ],
        ),
        headers,
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(st, 200, "{q}: {b}");
    serde_json::from_str(&b).unwrap()
}

/// `(stream labels, lines)` of each stream of an answer.
fn streams(v: &Value) -> Vec<(Value, Vec<String>)> {
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let lines = s["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e[1].as_str().unwrap().to_owned())
                .collect();
            (s["stream"].clone(), lines)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_name_and_detected_level_on_real_victorialogs() {
    let Some(bin) = backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN)\n"),
        );
        return;
    };
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(push_body()).await;
    let base = start_lokivl(&vl.url, engine::discovery::loki_defaults()).await;

    // `{service_name="api"}` finds the app-only, service-only and stored streams.
    let v = query(&base, r#"{service_name="api"}"#, &[]).await;
    assert_eq!(
        streams(&v),
        vec![
            (
                json!({"app": "api", "detected_level": "error", "env": "prod", "service_name": "api"}),
                vec![
                    "level=error msg=\"payment failed\"".to_owned(),
                    "level=error msg=again".to_owned()
                ]
            ),
            (
                json!({"app": "api", "detected_level": "info", "env": "prod", "service_name": "api"}),
                vec![r#"{"level":"info","msg":"ok"}"#.to_owned()]
            ),
            (
                json!({"app": "api", "detected_level": "warn", "env": "prod", "service_name": "api"}),
                vec!["[WARN] slow".to_owned()]
            ),
            (
                json!({"app": "ignored", "detected_level": "warn", "level": "Warning", "service_name": "api"}),
                vec!["GET /x 200".to_owned()]
            ),
            (
                json!({"app": "other", "detected_level": "debug", "service": "api", "service_name": "api"}),
                vec!["debug: tick".to_owned()]
            ),
        ]
    );

    // categorize-labels: service_name in the stream, detected_level as metadata.
    let v = query(
        &base,
        r#"{service_name="api", env="prod"}"#,
        &[("X-Loki-Response-Encoding-Flags", "categorize-labels")],
    )
    .await;
    let result = &v["data"]["result"];
    assert_eq!(result.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        result[0]["stream"],
        json!({"app": "api", "env": "prod", "service_name": "api"})
    );
    let levels: Vec<&str> = result[0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e[2]["structuredMetadata"]["detected_level"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(levels, ["error", "info", "warn", "error"]);

    // unknown_service is the stream with none of the labels; regex and negation.
    let v = query(&base, r#"{service_name="unknown_service"}"#, &[]).await;
    assert_eq!(streams(&v).len(), 1);
    assert_eq!(streams(&v)[0].1, ["no name"]);
    let v = query(&base, r#"{service_name=~"w.*|unknown_service"}"#, &[]).await;
    let lines: Vec<String> = streams(&v).into_iter().flat_map(|s| s.1).collect();
    assert_eq!(lines, ["info web", "no name"]);
    let v = query(&base, r#"{service_name!="api", service_name=~".+"}"#, &[]).await;
    let lines: Vec<String> = streams(&v).into_iter().flat_map(|s| s.1).collect();
    assert_eq!(lines, ["info web", "no name"]);

    // A level filter runs on the derived value.
    let v = query(
        &base,
        r#"{service_name="api"} | detected_level="error""#,
        &[],
    )
    .await;
    let lines: Vec<String> = streams(&v).into_iter().flat_map(|s| s.1).collect();
    assert_eq!(
        lines,
        [
            "level=error msg=\"payment failed\"",
            "level=error msg=again"
        ]
    );

    // Switched off, the same selector reads the stored label only.
    let off = start_lokivl(&vl.url, logsql_ast::Discovery::default()).await;
    let v = query(&off, r#"{service_name="api"}"#, &[]).await;
    assert_eq!(
        streams(&v),
        vec![(
            json!({"app": "ignored", "level": "Warning", "service_name": "api"}),
            vec!["GET /x 200".to_owned()]
        )]
    );
}
