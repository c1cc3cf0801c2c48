//! Live tail against a real VictoriaLogs: lines pushed after the socket opens
//! arrive over the WebSocket within 2 s, in Loki's frame format.
//! Skipped (one printed line) when `LOKIVL_VL_BIN` is unset.

use crate::support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt as _;
use tokio_tungstenite::tungstenite::Message;

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

fn push_body(app: &str, lines: &[(i64, String)]) -> String {
    let values: Vec<serde_json::Value> = lines
        .iter()
        .map(|(ts, l)| serde_json::json!([ts.to_string(), l, {"trace_id": "t-1"}]))
        .collect();
    serde_json::json!({"streams": [{"stream": {"app": app, "env": "e2e"}, "values": values}]})
        .to_string()
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
async fn pushed_lines_arrive_within_two_seconds() {
    if std::env::var_os("LOKIVL_VL_BIN").is_none() {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: LOKIVL_VL_BIN is not set\n"),
        );
        return;
    }
    let bin = support::backend::find_vl_binary().expect("LOKIVL_VL_BIN points to a file");
    let vl = support::backend::VictoriaLogs::start(&bin).await;
    let old = now_ns() - 30_000_000_000;
    vl.ingest(push_body("tailed", &[(old, "history line".into())]))
        .await;

    let settings = proxy::config::Settings::new(&vl.url).unwrap();
    let base = support::lokivl::start_proxy(settings).await;
    let addr = base.trim_start_matches("http://");

    let url = format!("ws://{addr}/loki/api/v1/tail?query=%7Bapp%3D%22tailed%22%7D&limit=10");
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    // History first.
    let first = tokio::time::timeout(Duration::from_secs(5), next_text(&mut ws))
        .await
        .expect("history frame");
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["streams"][0]["values"][0][1], "history line", "{first}");
    assert_eq!(v["streams"][0]["values"][0][0], old.to_string());

    // Give VictoriaLogs' tail its first poll, then push new lines.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let t = now_ns();
    let new: Vec<(i64, String)> = (0..3).map(|i| (t + i, format!("live line {i}"))).collect();
    vl.ingest(push_body("tailed", &new)).await;
    let pushed = std::time::Instant::now();
    let mut got: Vec<serde_json::Value> = Vec::new();
    while got.len() < 3 {
        let left = Duration::from_secs(2).saturating_sub(pushed.elapsed());
        let frame = tokio::time::timeout(left, next_text(&mut ws))
            .await
            .unwrap_or_else(|_| panic!("only {} of 3 lines within 2 s: {got:?}", got.len()));
        let v: serde_json::Value = serde_json::from_str(&frame).unwrap();
        assert!(v.get("dropped_entries").is_none(), "{frame}");
        got.extend(v["streams"].as_array().unwrap().iter().cloned());
    }
    for (i, s) in got.iter().enumerate() {
        assert_eq!(
            s["stream"],
            serde_json::json!({"app": "tailed", "env": "e2e"}),
            "live entries of a bare selector carry the stream labels only, as Loki's"
        );
        assert_eq!(s["values"][0][0], (t + i as i64).to_string());
        assert_eq!(s["values"][0][1], format!("live line {i}"));
        assert_eq!(s["values"][0].as_array().unwrap().len(), 2);
    }
}
