//! `labels`, `label/service_name/values`, `series` and the tail's history
//! with Loki's label discovery, against a real VictoriaLogs. The expected
//! metadata answers are what Loki 3.7.8 (default `discover_service_name`,
//! `discover_log_levels: true`) answered for the same push, checked by hand.
//! Skipped (one printed line) without a VictoriaLogs binary (`LOKIVL_VL_BIN`).

use crate::support;

use std::time::Duration;

use crate::support::backend::{self, VictoriaLogs};
use crate::support::client::{self, url};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// 2026-08-22T10:00:00Z.
const BASE_S: i64 = 1_787_392_800;

fn ns(offset_s: i64) -> String {
    ((BASE_S + offset_s) * 1_000_000_000).to_string()
}

fn push_body() -> String {
    json!({"streams": [
        {"stream": {"app": "api", "env": "prod"}, "values": [[ns(1), "level=error boom", {"trace_id": "t1"}]]},
        // `service` comes before `app` in Loki's list.
        {"stream": {"service": "svc", "app": "other"}, "values": [[ns(2), "info x"]]},
        {"stream": {"env": "orphan"}, "values": [[ns(3), "no name"]]},
        {"stream": {"service_name": "stored", "app": "ig"}, "values": [[ns(4), "warn y"]]},
    ]})
    .to_string()
}

async fn start_lokivl(backend: &str, discovery: logsql_ast::Discovery) -> String {
    support::start_lokivl_with(backend, |s| s.discovery = discovery).await
}

/// The `data` of a metadata answer over the pushed range.
async fn data(base: &str, path: &str, extra: &[(&str, &str)]) -> Value {
    let (start, end) = (ns(-60), ns(600));
    let mut params: Vec<(&str, &str)> = vec![("start", &start), ("end", &end)];
    params.extend_from_slice(extra);
    let a = client::try_get(&url(base, path, &params), &[])
        .await
        .map(client::Answer::parts)
        .unwrap();
    assert_eq!(a.0, 200, "{path} {extra:?}: {}", a.2);
    let v: Value = serde_json::from_str(&a.2).unwrap();
    v["data"].clone()
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next text frame (pings skipped).
async fn next_text(ws: &mut Ws) -> String {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => return t.to_string(),
            Some(Ok(Message::Ping(_))) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_and_tail_show_service_name_on_real_victorialogs() {
    let Some(bin) = backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN)\n"),
        );
        return;
    };
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(push_body()).await;
    let on = start_lokivl(&vl.url, engine::discovery::loki_defaults()).await;

    assert_eq!(
        data(&on, "/loki/api/v1/labels", &[]).await,
        json!(["app", "env", "service", "service_name"])
    );
    assert_eq!(
        data(&on, "/loki/api/v1/label/service_name/values", &[]).await,
        json!(["api", "stored", "svc", "unknown_service"])
    );
    assert_eq!(
        data(&on, "/loki/api/v1/series", &[]).await,
        json!([
            {"app": "api", "env": "prod", "service_name": "api"},
            {"app": "ig", "service_name": "stored"},
            {"app": "other", "service": "svc", "service_name": "svc"},
            {"env": "orphan", "service_name": "unknown_service"},
        ])
    );
    // Selectors on service_name match the derived value.
    assert_eq!(
        data(
            &on,
            "/loki/api/v1/series",
            &[("match[]", r#"{service_name="api"}"#)]
        )
        .await,
        json!([{"app": "api", "env": "prod", "service_name": "api"}])
    );
    assert_eq!(
        data(
            &on,
            "/loki/api/v1/labels",
            &[("query", r#"{service_name="unknown_service"}"#)]
        )
        .await,
        json!(["env", "service_name"])
    );
    assert_eq!(
        data(
            &on,
            "/loki/api/v1/label/app/values",
            &[("query", r#"{service_name=~"s.*"}"#)]
        )
        .await,
        json!(["ig", "other"])
    );
    assert_eq!(
        data(
            &on,
            "/loki/api/v1/label/service_name/values",
            &[("query", r#"{env=~".+"}"#)]
        )
        .await,
        json!(["api", "unknown_service"])
    );

    // The tail's history frame is labelled as a log query answer.
    let ws_base = on.replacen("http://", "ws://", 1);
    let start = ns(-60);
    let tail = url(
        &ws_base,
        "/loki/api/v1/tail",
        &[
            ("query", r#"{service_name="api"}"#),
            ("start", &start),
            ("limit", "10"),
        ],
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(tail).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), next_text(&mut ws))
        .await
        .expect("history frame");
    let v: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(
        v,
        json!({"streams": [{
            "stream": {"app": "api", "detected_level": "error", "env": "prod", "service_name": "api", "trace_id": "t1"},
            "values": [[ns(1), "level=error boom"]],
        }]})
    );
    // Live entries go through VictoriaLogs' tail with the rewritten selector
    // (`service` wins over `app`: this stream's service_name is `api`). For
    // a bare selector Loki sends live entries with their stream labels only
    // (no `detected_level`, which is metadata; tests/differential/tail.rs).
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
        .to_string();
    vl.ingest(
        json!({"streams": [
            {"stream": {"service": "api", "app": "x"}, "values": [[now, "[WARN] live"]]},
            {"stream": {"app": "other"}, "values": [[now, "not selected"]]},
        ]})
        .to_string(),
    )
    .await;
    let live = tokio::time::timeout(Duration::from_secs(5), next_text(&mut ws))
        .await
        .expect("live frame");
    let v: Value = serde_json::from_str(&live).unwrap();
    assert_eq!(
        v,
        json!({"streams": [{
            "stream": {"app": "x", "service": "api", "service_name": "api"},
            "values": [[now, "[WARN] live"]],
        }]})
    );
    let _ = ws.close(None).await;

    // Switched off: stored labels only.
    let off = start_lokivl(&vl.url, logsql_ast::Discovery::default()).await;
    assert_eq!(
        data(&off, "/loki/api/v1/labels", &[]).await,
        json!(["app", "env", "service", "service_name"])
    );
    assert_eq!(
        data(&off, "/loki/api/v1/label/service_name/values", &[]).await,
        json!(["stored"])
    );
    assert_eq!(
        data(
            &off,
            "/loki/api/v1/series",
            &[("match[]", r#"{service_name="api"}"#)]
        )
        .await,
        json!([])
    );
}
