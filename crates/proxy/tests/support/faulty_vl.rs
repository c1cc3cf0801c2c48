//! The fake VictoriaLogs in its faulty mode, on raw TCP, whose behaviour a
//! test switches at run time: healthy, hung, slow, garbage, truncated, or
//! killed (listener closed) and restarted on the same port. Raw TCP because
//! hyper-based fakes cannot send a broken body on purpose.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What the fake does with the next requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
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

pub struct FaultyVl {
    pub port: u16,
    mode: Arc<Mutex<Mode>>,
    task: Mutex<Option<JoinHandle<()>>>,
    /// Connections whose client closed while the fake was hung on them.
    pub closed_while_hung: Arc<AtomicUsize>,
    pub requests: Arc<AtomicU64>,
}

impl FaultyVl {
    pub async fn start(mode: Mode) -> Arc<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let fake = Arc::new(Self {
            port,
            mode: Arc::new(Mutex::new(mode)),
            task: Mutex::new(None),
            closed_while_hung: Arc::default(),
            requests: Arc::default(),
        });
        fake.spawn(listener);
        fake
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    /// Closes the listener and every open connection: "connection refused" from now on.
    pub fn kill(&self) {
        if let Some(t) = self.task.lock().unwrap().take() {
            t.abort();
        }
    }

    /// Listens again on the same port.
    pub async fn restart(&self) {
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", self.port)).await {
                Ok(l) => break l,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        self.spawn(listener);
    }

    fn spawn(&self, listener: TcpListener) {
        let mode = self.mode.clone();
        let closed = self.closed_while_hung.clone();
        let requests = self.requests.clone();
        let task = tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                conns.spawn(serve(
                    stream,
                    mode.clone(),
                    closed.clone(),
                    requests.clone(),
                ));
            }
        });
        *self.task.lock().unwrap() = Some(task);
    }
}

impl Drop for FaultyVl {
    fn drop(&mut self) {
        self.kill();
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

async fn serve(
    mut s: TcpStream,
    mode: Arc<Mutex<Mode>>,
    closed: Arc<AtomicUsize>,
    requests: Arc<AtomicU64>,
) {
    while read_request(&mut s).await.is_some() {
        requests.fetch_add(1, Ordering::SeqCst);
        let m = mode.lock().unwrap().clone();
        match m {
            Mode::Healthy(body) => {
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
            Mode::Hung => {
                // Wait for the client to give up: a read of 0 bytes.
                let mut b = [0u8; 64];
                loop {
                    match s.read(&mut b).await {
                        Ok(0) | Err(_) => {
                            closed.fetch_add(1, Ordering::SeqCst);
                            return;
                        }
                        Ok(_) => {}
                    }
                }
            }
            Mode::Slow(ms) => {
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
            Mode::Garbage => {
                let body = "<html>502 from some load balancer</html>\n{\"_time\":";
                let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(body.as_bytes()).await;
            }
            Mode::Truncated => {
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
