//! Live tail against an `https://` VictoriaLogs: the tail's own streaming
//! client uses the backend's TLS settings, so lines arrive over the
//! WebSocket as they do over plain HTTP.

use std::time::Duration;

use crate::support::fake_vl::{Canned, FakeVl, Tail};
use crate::support::lokivl::start_proxy;
use crate::support::tls::pki;
use futures_util::StreamExt;
use proxy::config::{Config, Settings};
use tokio_tungstenite::tungstenite::Message;

fn settings(args: &[&str]) -> Settings {
    let mut argv = vec!["lokivl"];
    argv.extend_from_slice(args);
    Config::load(argv).unwrap().validate().unwrap()
}

#[tokio::test]
async fn tail_reaches_an_https_backend_with_its_ca() {
    let pki = pki("tls-tail");
    // A live line: entries from before the socket opened belong to the history.
    let ts = (time::OffsetDateTime::now_utc() + time::Duration::seconds(1))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let line = format!(
        r#"{{"_time":"{ts}","_stream_id":"s1","_stream":"{{app=\"api\"}}","_msg":"over tls","app":"api"}}"#
    );
    // A fake VictoriaLogs over HTTPS: no history, and a tail that sends one
    // line and stays open.
    let vl = FakeVl::builder()
        .answer("/select/logsql/query", Canned::ok(""))
        .tail(Tail::Lines(vec![line]))
        .tls(&pki)
        .start()
        .await
        .addr;
    let base = start_proxy(settings(&[
        "--backend",
        &format!("https://{vl}"),
        "--backend-tls-ca-file",
        pki.ca.to_str().unwrap(),
    ]))
    .await;
    let url = format!(
        "{}/loki/api/v1/tail?query=%7Bapp%3D%22api%22%7D",
        base.replacen("http://", "ws://", 1)
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let text = loop {
        let m = tokio::time::timeout_at(deadline, ws.next())
            .await
            .expect("a text frame within 10 s")
            .expect("socket open")
            .expect("frame ok");
        match m {
            Message::Text(t) => break t.to_string(),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("expected a text frame, got {other:?}"),
        }
    };
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["streams"][0]["stream"]["app"], "api", "{text}");
    assert_eq!(v["streams"][0]["values"][0][1], "over tls", "{text}");
}
