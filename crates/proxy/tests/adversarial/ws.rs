//! WebSocket clients of `/loki/api/v1/tail`: ones that read, and ones that
//! never read (a tiny receive buffer, so the kernel does not soak up what
//! lokivl sends and lokivl's writes really block).
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::time::Duration;

use futures_util::StreamExt as _;
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::HeaderValue;

pub type Ws = WebSocketStream<TcpStream>;

/// Opens a tail of `query` as tenant `tenant`; `recv_buffer` shrinks the
/// socket's receive buffer (set before connecting, so the window stays small).
pub async fn open_tail(
    addr: &str,
    query: &str,
    tenant: &str,
    recv_buffer: Option<u32>,
) -> Result<Ws, String> {
    let q = form_urlencoded::Serializer::new(String::new())
        .append_pair("query", query)
        .append_pair("limit", "10")
        .finish();
    let mut req = format!("ws://{addr}/loki/api/v1/tail?{q}")
        .into_client_request()
        .map_err(|e| e.to_string())?;
    req.headers_mut().insert(
        "x-scope-orgid",
        HeaderValue::from_str(tenant).map_err(|e| e.to_string())?,
    );
    let socket = TcpSocket::new_v4().map_err(|e| e.to_string())?;
    if let Some(n) = recv_buffer {
        socket.set_recv_buffer_size(n).map_err(|e| e.to_string())?;
    }
    let stream = socket
        .connect(addr.parse().map_err(|e| format!("{e}"))?)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (ws, _) = tokio::time::timeout(
        Duration::from_secs(10),
        tokio_tungstenite::client_async(req, stream),
    )
    .await
    .map_err(|_| "no WebSocket handshake within 10 s".to_owned())?
    .map_err(|e| format!("handshake: {e}"))?;
    Ok(ws)
}

/// The first text or close frame within `deadline` (pings skipped).
pub async fn first_message(ws: &mut Ws, deadline: Duration) -> Result<Message, String> {
    tokio::time::timeout(deadline, async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(m)) => return Ok(m),
                Some(Err(e)) => return Err(format!("read: {e}")),
                None => return Err("closed without a close frame".to_owned()),
            }
        }
    })
    .await
    .map_err(|_| format!("no frame within {deadline:?}"))?
}
