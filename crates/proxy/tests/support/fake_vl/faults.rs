//! The faults mode, on raw TCP, whose behaviour a test switches at run
//! time ([`super::FakeVl::set_fault`]): healthy, hung, slow, garbage,
//! truncated; or killed (listener and connections closed) and restarted on
//! the same port ([`super::FakeVl::kill`], [`super::FakeVl::restart`]). Raw
//! TCP because hyper-based fakes cannot send a broken body on purpose.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::Shared;

/// What the faulty fake does with the next requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answers `body` with 200.
    Healthy(String),
    /// Reads the request and never answers.
    Hung,
    /// Sends the head, then one body byte every `0` ms.
    Slow(u64),
    /// 200 with a body that is not NDJSON.
    Garbage,
    /// Declares a Content-Length, sends part of it and closes.
    Truncated,
}

/// One NDJSON entry as VictoriaLogs writes it.
pub const LINE: &str = r#"{"_time":"2026-08-22T09:30:00Z","_stream_id":"s1","_stream":"{app=\"api\"}","_msg":"hello","app":"api"}"#;

/// The faults mode's state.
#[derive(Default)]
pub(super) struct FaultState {
    fault: Mutex<Option<Fault>>,
    /// Connections whose client closed while the fake was hung on them.
    closed_while_hung: AtomicUsize,
}

impl FaultState {
    pub(super) fn set(&self, fault: Fault) {
        *self.fault.lock().unwrap() = Some(fault);
    }

    pub(super) fn closed_while_hung(&self) -> usize {
        self.closed_while_hung.load(Ordering::SeqCst)
    }
}

/// Accepts connections until the task is aborted, which closes them all.
pub(super) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let mut conns = tokio::task::JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        while conns.try_join_next().is_some() {}
        conns.spawn(serve_conn(stream, Arc::clone(&shared)));
    }
}

/// Reads one request (head plus Content-Length body); `None` on EOF.
async fn read_request(s: &mut TcpStream) -> Option<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(())
}

async fn serve_conn(mut s: TcpStream, shared: Arc<Shared>) {
    while read_request(&mut s).await.is_some() {
        shared.requests.fetch_add(1, Ordering::SeqCst);
        let fault = shared.faults.fault.lock().unwrap().clone();
        let Some(fault) = fault else { return };
        match fault {
            Fault::Healthy(body) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/stream+json\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                );
                if s.write_all(head.as_bytes()).await.is_err()
                    || s.write_all(body.as_bytes()).await.is_err()
                {
                    return;
                }
            }
            Fault::Hung => {
                // Wait for the client to give up: a read of 0 bytes.
                let mut b = [0u8; 64];
                loop {
                    match s.read(&mut b).await {
                        Ok(0) | Err(_) => {
                            shared
                                .faults
                                .closed_while_hung
                                .fetch_add(1, Ordering::SeqCst);
                            return;
                        }
                        Ok(_) => {}
                    }
                }
            }
            Fault::Slow(ms) => {
                let body = format!("{LINE}\n").repeat(20);
                let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                if s.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for b in body.as_bytes() {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    if s.write_all(&[*b]).await.is_err() {
                        return;
                    }
                }
            }
            Fault::Garbage => {
                let body = "<html>502 from some load balancer</html>\n{\"_time\":";
                let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(body.as_bytes()).await;
            }
            Fault::Truncated => {
                let body = format!("{LINE}\n{LINE}\n");
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n",
                    body.len() * 10
                );
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(body.as_bytes()).await;
                return; // close mid-body
            }
        }
    }
}

/// A log query_range URL over the hour the fake's entry is in.
///
/// Each call asks a distinct query: identical requests would be coalesced or
/// answered by the response cache, and these tests need each one to reach the
/// backend.
pub fn query_url(base: &str) -> String {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let q = form_urlencoded::Serializer::new(String::new())
        .append_pair("query", &format!(r#"{{app="api"}} != "req-{n}""#))
        .append_pair("start", "1787389200000000000")
        .append_pair("end", "1787392800000000000")
        .finish();
    format!("{base}/loki/api/v1/query_range?{q}")
}

/// Settings with short timeouts so faults show within a second.
pub fn settings(backend: &str) -> proxy::config::Settings {
    let mut s = proxy::config::Settings::new(backend).unwrap();
    s.backend_timeout = Duration::from_millis(600);
    s.backend_options.breaker_failures = 3;
    s.backend_options.breaker_cooldown = Duration::from_millis(500);
    s
}
