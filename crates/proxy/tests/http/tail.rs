//! `/loki/api/v1/tail` against a fake VictoriaLogs: parameter errors before the
//! upgrade, origin checks, what is sent to `/select/logsql/tail`, history and
//! live frames, close codes (backend error, max duration, max concurrent
//! tails) and dropped entries for a client that does not read.

use std::time::Duration;

use crate::support::fake_vl::{Canned, FakeVl, Tail};
use futures_util::StreamExt as _;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// The fake VictoriaLogs: `history` answered to `/select/logsql/query`,
/// `tail` on `/select/logsql/tail`, every request recorded.
async fn start_fake(tail: Tail, history: &str) -> FakeVl {
    FakeVl::builder()
        .answer("/select/logsql/query", Canned::ok(history))
        .tail(tail)
        .start()
        .await
}

/// lokivl served by its own loop (the one with upgrades), in front of `backend`.
async fn start_lokivl(backend: &str, tune: impl FnOnce(&mut proxy::config::Settings)) -> String {
    let base = crate::support::lokivl::start_lokivl_with(backend, tune).await;
    base.trim_start_matches("http://").to_owned()
}

fn line(secs: i64, msg: &str) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(secs).unwrap();
    let ts = t
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    format!(
        r#"{{"_time":"{ts}","_stream_id":"s1","_stream":"{{app=\"api\"}}","_msg":"{msg}","app":"api"}}"#
    )
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(addr: &str, query: &str, headers: &[(&str, &str)]) -> Result<Ws, String> {
    let url = format!(
        "ws://{addr}/loki/api/v1/tail?{}",
        form_urlencoded::Serializer::new(String::new())
            .append_pair("query", query)
            .finish()
    );
    let mut req = url.into_client_request().unwrap();
    for (k, v) in headers {
        req.headers_mut().insert(
            http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    tokio_tungstenite::connect_async(req)
        .await
        .map(|(ws, _)| ws)
        .map_err(|e| e.to_string())
}

/// Next text frame or close frame (pings skipped), within `wait`.
async fn next(ws: &mut Ws, wait: Duration) -> Message {
    loop {
        let m = tokio::time::timeout(wait, ws.next())
            .await
            .expect("a frame in time")
            .expect("socket open")
            .expect("frame ok");
        match m {
            Message::Ping(_) | Message::Pong(_) => {}
            other => return other,
        }
    }
}

fn close_of(m: Message) -> (CloseCode, String) {
    match m {
        Message::Close(Some(f)) => (f.code, f.reason.to_string()),
        other => panic!("expected a close frame, got {other:?}"),
    }
}

async fn get_plain(addr: &str, q: &str) -> (u16, String) {
    let url = format!("http://{addr}/loki/api/v1/tail?{q}");
    let a = crate::support::client::get(&url).await;
    (a.status.as_u16(), a.body)
}

#[tokio::test]
async fn parameter_errors_are_plain_400_before_the_upgrade() {
    let vl = start_fake(Tail::Lines(vec![]), "").await;
    let addr = start_lokivl(&vl.url, |_| {}).await;
    let cases = [
        (
            "query=%7Bapp%3D%22a%22%7D&delay_for=6",
            "delay_for can't be greater than 5",
        ),
        (
            "query=%7Bapp%3D%22a%22%7D&limit=0",
            "limit must be a positive value",
        ),
        (
            "query=%7Bapp%3D%22a%22%7D&limit=6000",
            "max entries limit per query exceeded, limit > max_entries_limit_per_query (6000 > 5000)",
        ),
        (
            "query=%7Bapp%3D%22a%22%7D&start=yesterday",
            "could not parse 'start' parameter",
        ),
        (
            "query=count_over_time(%7Bapp%3D%22a%22%7D%5B1m%5D)",
            "only log selector is supported",
        ),
        ("query=%7Bapp%3D%22a%22", "parse error"),
    ];
    for (q, want) in cases {
        let (status, body) = get_plain(&addr, q).await;
        assert_eq!(status, 400, "{q}: {body}");
        assert!(body.starts_with(want), "{q}: {body}");
    }
}

#[tokio::test]
async fn foreign_origins_are_refused() {
    let vl = start_fake(Tail::Lines(vec![]), "").await;
    let addr = start_lokivl(&vl.url, |s| {
        s.tail.allowed_origins = vec!["https://grafana.example".into()];
    })
    .await;
    let err = connect(
        &addr,
        r#"{app="api"}"#,
        &[("origin", "https://evil.example")],
    )
    .await
    .unwrap_err();
    assert!(err.contains("403"), "{err}");
    let ok = connect(
        &addr,
        r#"{app="api"}"#,
        &[("origin", "https://grafana.example")],
    )
    .await;
    assert!(ok.is_ok(), "{:?}", ok.err());
    let same_host = format!("http://{addr}");
    assert!(
        connect(&addr, r#"{app="api"}"#, &[("origin", &same_host)])
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn history_then_live_frames_with_the_tenant() {
    let now = now_secs();
    let vl = start_fake(
        Tail::Lines(vec![
            line(now - 3600, "too old: before the socket opened"),
            line(now + 1, "live one"),
            line(now + 2, "live two"),
        ]),
        &(line(now - 30, "from history") + "\n"),
    )
    .await;
    let addr = start_lokivl(&vl.url, |_| {}).await;
    let query = r#"{app="api"}"#;
    let url_query = format!(
        "{}&delay_for=2&limit=7",
        form_urlencoded::Serializer::new(String::new())
            .append_pair("query", query)
            .finish()
    );
    let mut req = format!("ws://{addr}/loki/api/v1/tail?{url_query}")
        .into_client_request()
        .unwrap();
    req.headers_mut()
        .insert("x-scope-orgid", "12:34".parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();

    let Message::Text(first) = next(&mut ws, Duration::from_secs(5)).await else {
        panic!("text frame expected")
    };
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["streams"][0]["stream"], serde_json::json!({"app": "api"}));
    assert_eq!(v["streams"][0]["values"][0][1], "from history");
    assert!(v.get("dropped_entries").is_none(), "{first}");

    let Message::Text(live) = next(&mut ws, Duration::from_secs(5)).await else {
        panic!("text frame expected")
    };
    let v: serde_json::Value = serde_json::from_str(&live).unwrap();
    let lines: Vec<&str> = v["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["values"][0][1].as_str().unwrap())
        .collect();
    assert_eq!(lines, ["live one", "live two"], "{live}");
    assert_eq!(
        v["streams"][0]["values"][0][0],
        format!("{}", (now + 1) * 1_000_000_000)
    );

    let seen = vl.requests();
    let tenant = |r: &crate::support::fake_vl::Recorded| (r.account.clone(), r.project.clone());
    let twelve_34 = (Some("12".to_owned()), Some("34".to_owned()));
    let hist = seen
        .iter()
        .find(|s| s.path == "/select/logsql/query")
        .unwrap();
    assert_eq!(hist.first("limit"), "7", "{:?}", hist.form);
    assert_eq!(tenant(hist), twelve_34);
    let t = seen
        .iter()
        .find(|s| s.path == "/select/logsql/tail")
        .unwrap();
    assert_eq!(tenant(t), twelve_34, "tenant headers on the tail call");
    let get = |k: &str| t.form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("query"), Some(r#"{app="api"}"#));
    assert_eq!(get("offset"), Some("2000ms"));
    assert_eq!(get("refresh_interval"), Some("1000ms"));
}

#[tokio::test]
async fn backend_refusal_closes_with_1011_and_its_text() {
    let vl = start_fake(Tail::Refuse(400, "cannot parse query [x]: bad filter"), "").await;
    let addr = start_lokivl(&vl.url, |_| {}).await;
    let mut ws = connect(&addr, r#"{app="api"}"#, &[]).await.unwrap();
    let (code, reason) = close_of(next(&mut ws, Duration::from_secs(5)).await);
    assert_eq!(code, CloseCode::Error);
    assert!(
        reason.contains("cannot parse query [x]: bad filter"),
        "{reason}"
    );
}

#[tokio::test]
async fn mid_stream_error_delivers_entries_then_closes() {
    let now = now_secs();
    let vl = start_fake(
        Tail::LinesThenError(
            vec![line(now + 1, "before the error")],
            "cannot execute tail query [x]: disk on fire",
        ),
        "",
    )
    .await;
    let addr = start_lokivl(&vl.url, |_| {}).await;
    let mut ws = connect(&addr, r#"{app="api"}"#, &[]).await.unwrap();
    let Message::Text(t) = next(&mut ws, Duration::from_secs(5)).await else {
        panic!("text frame expected")
    };
    assert!(t.contains("before the error"), "{t}");
    let (code, reason) = close_of(next(&mut ws, Duration::from_secs(5)).await);
    assert_eq!(code, CloseCode::Error);
    assert_eq!(reason, "cannot execute tail query [x]: disk on fire");
}

#[tokio::test]
async fn max_duration_closes_with_lokis_text_and_pings_before() {
    let vl = start_fake(Tail::Lines(vec![]), "").await;
    let addr = start_lokivl(&vl.url, |s| {
        s.tail.max_duration = Duration::from_millis(2500)
    })
    .await;
    let mut ws = connect(&addr, r#"{app="api"}"#, &[]).await.unwrap();
    let mut pings = 0;
    let close = loop {
        let m = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        match m {
            Message::Ping(_) => pings += 1,
            Message::Close(_) => break m,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert!(pings >= 1, "a ping every second");
    let (code, reason) = close_of(close);
    assert_eq!(code, CloseCode::Error);
    assert_eq!(reason, "reached tail max duration limit");
}

#[tokio::test]
async fn concurrent_tails_are_limited_per_tenant() {
    let vl = start_fake(Tail::Lines(vec![]), "").await;
    let addr = start_lokivl(&vl.url, |s| s.tail.max_concurrent = 1).await;
    let mut first = connect(&addr, r#"{app="api"}"#, &[("x-scope-orgid", "1")])
        .await
        .unwrap();
    let mut second = connect(&addr, r#"{app="api"}"#, &[("x-scope-orgid", "1")])
        .await
        .unwrap();
    let (code, reason) = close_of(next(&mut second, Duration::from_secs(5)).await);
    assert_eq!(code, CloseCode::Error);
    assert_eq!(
        reason,
        "max concurrent tail requests limit exceeded, count > limit (2 > 1)"
    );
    // Another tenant has its own budget.
    let mut other = connect(&addr, r#"{app="api"}"#, &[("x-scope-orgid", "2")])
        .await
        .unwrap();
    let m = tokio::time::timeout(Duration::from_millis(1500), other.next()).await;
    assert!(matches!(m, Ok(Some(Ok(Message::Ping(_))))), "{m:?}");
    // The slot is freed when the first tail ends.
    first.close(None).await.unwrap();
    while let Some(Ok(_)) = first.next().await {}
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut third = connect(&addr, r#"{app="api"}"#, &[("x-scope-orgid", "1")])
        .await
        .unwrap();
    let m = tokio::time::timeout(Duration::from_millis(1500), third.next()).await;
    assert!(matches!(m, Ok(Some(Ok(Message::Ping(_))))), "{m:?}");
}

#[tokio::test]
async fn a_client_that_does_not_read_gets_dropped_entries() {
    let now = now_secs();
    let pad = "x".repeat(600);
    let total = 20_000;
    let lines: Vec<String> = (0..total)
        .map(|i| line(now + 1 + i / 1000, &format!("entry {i} {pad}")))
        .collect();
    let vl = start_fake(Tail::Lines(lines), "").await;
    let addr = start_lokivl(&vl.url, |_| {}).await;
    // A tiny receive buffer so that lokivl's socket fills quickly.
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let stream = sock.connect(addr.parse().unwrap()).await.unwrap();
    let req = format!("ws://{addr}/loki/api/v1/tail?query=%7Bapp%3D%22api%22%7D")
        .into_client_request()
        .unwrap();
    let (ws, _) =
        tokio_tungstenite::client_async(req, tokio_tungstenite::MaybeTlsStream::Plain(stream))
            .await
            .unwrap();
    // Do not read for a while: the socket buffers fill and lokivl must drop.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut ws = ws;
    let (mut received, mut dropped) = (0usize, 0usize);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut last_text = tokio::time::Instant::now();
    // Until no text frame came for 3 s (pings keep arriving meanwhile).
    while last_text.elapsed() < Duration::from_secs(3) && tokio::time::Instant::now() < deadline {
        let Ok(Some(Ok(m))) = tokio::time::timeout(Duration::from_secs(3), ws.next()).await else {
            break;
        };
        if let Message::Text(t) = m {
            last_text = tokio::time::Instant::now();
            let v: serde_json::Value = serde_json::from_str(&t).unwrap();
            let streams = v["streams"].as_array().unwrap();
            assert!(streams.len() <= 100, "at most 100 entries per frame");
            received += streams.len();
            if let Some(d) = v.get("dropped_entries").and_then(|d| d.as_array()) {
                assert!(d[0]["timestamp"].as_str().unwrap().len() >= 19);
                assert_eq!(d[0]["labels"]["app"], "api");
                dropped += d.len();
            }
        }
    }
    assert!(dropped > 0, "received {received}, nothing reported dropped");
    assert!(received < total as usize, "received {received}");
    // Each entry is either delivered or reported (reports are capped at 1000 per frame).
    assert!(
        received + dropped <= total as usize,
        "received {received}, dropped {dropped}"
    );
}
