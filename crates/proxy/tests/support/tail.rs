//! The WebSocket clients of the tail tests, which read or never read, and
//! the rows they tail. The fake VictoriaLogs behind lokivl is
//! [`super::fake_vl`] in its tail mode ([`super::fake_vl::tail`]); lokivl
//! runs in front with its connection bounds
//! ([`super::lokivl::start_bounded`]).

use std::time::Duration;

use futures_util::StreamExt as _;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// One NDJSON row at `secs`, with a message of `pad` bytes, newline included.
pub fn row(secs: i64, pad: usize) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(secs).unwrap();
    let ts = t
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let msg = "x".repeat(pad);
    format!(
        "{{\"_time\":\"{ts}\",\"_stream_id\":\"s1\",\"_stream\":\"{{app=\\\"api\\\"}}\",\"_msg\":\"{msg}\",\"app\":\"api\"}}\n"
    )
}

pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const QUERY: &str = "query=%7Bapp%3D%22api%22%7D";

/// A tail of `{app="api"}` for `tenant`.
pub async fn connect(addr: &str, tenant: &str) -> Result<Ws, String> {
    let mut req = format!("ws://{addr}/loki/api/v1/tail?{QUERY}")
        .into_client_request()
        .unwrap();
    req.headers_mut()
        .insert("x-scope-orgid", tenant.parse().unwrap());
    match tokio::time::timeout(
        Duration::from_secs(30),
        tokio_tungstenite::connect_async(req),
    )
    .await
    {
        Ok(Ok((ws, _))) => Ok(ws),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no handshake within 30 s".to_owned()),
    }
}

/// A tail whose client has a tiny receive buffer and never reads: once the
/// socket buffers are full, lokivl's writes stall.
pub async fn connect_not_reading(addr: &str, tenant: &str) -> Ws {
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let stream = sock.connect(addr.parse().unwrap()).await.unwrap();
    let mut req = format!("ws://{addr}/loki/api/v1/tail?{QUERY}")
        .into_client_request()
        .unwrap();
    req.headers_mut()
        .insert("x-scope-orgid", tenant.parse().unwrap());
    let handshake =
        tokio_tungstenite::client_async(req, tokio_tungstenite::MaybeTlsStream::Plain(stream));
    let (ws, _) = tokio::time::timeout(Duration::from_secs(30), handshake)
        .await
        .expect("a handshake within 30 s")
        .unwrap();
    ws
}

/// Next text or close frame (pings skipped), within `wait` in all.
pub async fn next(ws: &mut Ws, wait: Duration) -> Message {
    let until = tokio::time::Instant::now() + wait;
    loop {
        let m = tokio::time::timeout_at(until, ws.next())
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

pub fn close_of(m: Message) -> (CloseCode, String) {
    match m {
        Message::Close(Some(f)) => (f.code, f.reason.to_string()),
        other => panic!("expected a close frame, got {other:?}"),
    }
}

/// Whether a new tail for `tenant` is let in: it gets a ping rather than a close.
pub async fn tail_admitted(addr: &str, tenant: &str) -> bool {
    let Ok(mut ws) = connect(addr, tenant).await else {
        return false;
    };
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::time::timeout_at(until, ws.next()).await {
            Ok(Some(Ok(Message::Ping(_)))) => return true,
            Ok(Some(Ok(Message::Text(_) | Message::Pong(_)))) => {}
            _ => return false,
        }
    }
}

/// Whether lokivl closes `ws` within `wait`. Reads the socket's raw bytes
/// (the frames are discarded, pings unanswered), so the client stays one
/// that never reads.
pub async fn closed_by_lokivl_within(ws: &mut Ws, wait: Duration) -> bool {
    use tokio::io::AsyncReadExt as _;
    let raw = ws.get_mut();
    let mut buf = vec![0u8; 16 << 10];
    tokio::time::timeout(wait, async {
        while let Ok(n) = raw.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await
    .is_ok()
}

/// GET `path` on `addr` with a client-side deadline; the status, if answered.
pub async fn get_status(addr: &str, path: &str, wait: Duration) -> Option<u16> {
    super::client::get_within(&format!("http://{addr}{path}"), &[], wait)
        .await
        .ok()
        .map(|a| a.status.as_u16())
}
