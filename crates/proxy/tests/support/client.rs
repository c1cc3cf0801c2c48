//! The one HTTP client of the test kit, and its one [`Answer`].
//!
//! Every suite asks lokivl (and Loki, and VictoriaLogs) through this file.
//! The load benchmark includes it too (`benches/loadbench/client.rs`, with
//! `#[path]`), so this file uses nothing else of the kit or of lokivl: only
//! hyper-util, http, bytes, tokio, serde_json and form_urlencoded.
//!
//! The free functions open a fresh client (so a fresh connection) per call,
//! as each suite did before; [`Client`] is the keep-alive client for load
//! and soak loops. Raw-socket probes (`/ready` on a fresh connection,
//! requests the `http` crate refuses to build) are at the end.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// An HTTP answer as a test sees it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The body as text (invalid UTF-8 replaced).
    pub body: String,
    /// From sending the request to the end of the body.
    pub took: Duration,
}

impl Answer {
    /// The body as JSON; panics (a test failure) when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}",
                self.body.chars().take(500).collect::<String>()
            )
        })
    }

    /// The `content-type` header, or `""`.
    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .map_or("", |v| v.to_str().unwrap())
    }

    /// Asserts a Go `http.Error` answer (`/ready`, the 404 page): plain text
    /// ending in one newline, which is stripped from the returned text.
    pub fn assert_go_http_error(&self, status: StatusCode) -> &str {
        assert_eq!(self.status, status, "body: {}", self.body);
        assert_eq!(self.content_type(), "text/plain; charset=utf-8");
        self.body
            .strip_suffix('\n')
            .unwrap_or_else(|| panic!("http.Error ends with a newline: {:?}", self.body))
    }

    /// Asserts Loki's plain-text error contract and returns the text.
    pub fn assert_error(&self, status: StatusCode) -> &str {
        assert_eq!(self.status, status, "body: {}", self.body);
        assert_eq!(self.content_type(), "text/plain; charset=utf-8");
        assert_eq!(
            self.headers.get("x-content-type-options").unwrap(),
            "nosniff"
        );
        // Loki writes query errors with fmt.Fprint: no trailing newline.
        assert!(
            !self.body.ends_with('\n'),
            "Loki's error bodies end without a newline: {:?}",
            self.body
        );
        &self.body
    }

    /// Status, content type and body, for suites that compare all three.
    pub fn parts(self) -> (u16, String, String) {
        let ct = self.content_type().to_owned();
        (self.status.as_u16(), ct, self.body)
    }

    /// Status, time and the first 300 characters, for failure messages.
    pub fn short(&self) -> String {
        let b: String = self.body.chars().take(300).collect();
        format!("{} after {:?}: {b}", self.status.as_u16(), self.took)
    }
}

/// An error and its sources, joined with `": "`.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

impl Answer {
    /// The answer of a whole response read as `fetch` does; `t0` is when it was sent.
    pub fn from_parts(status: StatusCode, headers: HeaderMap, body: &[u8], t0: Instant) -> Self {
        Answer {
            status,
            headers,
            body: String::from_utf8_lossy(body).into_owned(),
            took: t0.elapsed(),
        }
    }
}

/// A keep-alive HTTP/1 client (plain `http://` only).
#[derive(Debug, Clone)]
pub struct Client {
    inner: hyper_util::client::legacy::Client<HttpConnector, Full<Bytes>>,
}

impl Default for Client {
    fn default() -> Self {
        Self::new()
    }
}

impl Client {
    /// A client with hyper's default pool.
    pub fn new() -> Self {
        Self {
            inner: hyper_util::client::legacy::Client::builder(TokioExecutor::new())
                .build_http::<Full<Bytes>>(),
        }
    }

    /// A client keeping up to `pool` idle connections per host (30 s),
    /// with `TCP_NODELAY`, for load loops.
    pub fn pooled(pool: usize) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        Self {
            inner: hyper_util::client::legacy::Client::builder(TokioExecutor::new())
                .pool_max_idle_per_host(pool)
                .pool_idle_timeout(Duration::from_secs(30))
                .build(connector),
        }
    }

    /// Sends `req` and reads the whole body as bytes (the load benchmark
    /// only counts them). `Err` carries the error chain.
    pub async fn fetch(
        &self,
        req: http::Request<Full<Bytes>>,
    ) -> Result<(StatusCode, HeaderMap, Bytes), String> {
        let resp = self.inner.request(req).await.map_err(|e| error_chain(&e))?;
        let (head, body) = resp.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|e| error_chain(&e))?
            .to_bytes();
        Ok((head.status, head.headers, body))
    }

    /// Any method, with headers and a body; `Err` on a connection failure.
    pub async fn send(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Answer, String> {
        let mut b = http::Request::builder().method(method).uri(url);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        let req = b
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        let (status, headers, body) = self.fetch(req).await?;
        Ok(Answer::from_parts(status, headers, &body, t0))
    }

    /// [`Client::send`] with a deadline on the whole answer.
    pub async fn send_within(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
        deadline: Duration,
    ) -> Result<Answer, String> {
        let t0 = Instant::now();
        match tokio::time::timeout(deadline, self.send(method, url, headers, body)).await {
            Ok(Ok(a)) => Ok(a),
            Ok(Err(e)) => Err(format!("request failed after {:?}: {e}", t0.elapsed())),
            Err(_) => Err(format!("no answer within {deadline:?}")),
        }
    }
}

// --- One request on a fresh client -------------------------------------

/// GET `url`; panics on a connection failure (a test failure).
pub async fn get(url: &str) -> Answer {
    get_with(url, &[]).await
}

/// GET `url` with extra headers; panics on a connection failure.
pub async fn get_with(url: &str, headers: &[(&str, &str)]) -> Answer {
    try_get(url, headers).await.unwrap()
}

/// `method` with a body of `content_type`; panics on a connection failure.
pub async fn request(method: Method, url: &str, body: &str, content_type: &str) -> Answer {
    send(
        method.as_str(),
        url,
        &[("content-type", content_type)],
        body.as_bytes().to_vec(),
    )
    .await
    .unwrap()
}

/// GET `url` with extra headers; `Err` on a connection failure.
pub async fn try_get(url: &str, headers: &[(&str, &str)]) -> Result<Answer, String> {
    send("GET", url, headers, Vec::new()).await
}

/// POST `body` to `url`; `Err` on a connection failure.
pub async fn try_post(url: &str, content_type: &str, body: Vec<u8>) -> Result<Answer, String> {
    send("POST", url, &[("content-type", content_type)], body).await
}

/// Any method, with headers and a body; `Err` on a connection failure.
pub async fn send(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<Answer, String> {
    Client::new().send(method, url, headers, body).await
}

/// [`send`] with a deadline; `Err` on a connection failure or when it passed.
pub async fn send_within(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    deadline: Duration,
) -> Result<Answer, String> {
    Client::new()
        .send_within(method, url, headers, body, deadline)
        .await
}

/// GET with headers and a deadline.
pub async fn get_within(
    url: &str,
    headers: &[(&str, &str)],
    deadline: Duration,
) -> Result<Answer, String> {
    send_within("GET", url, headers, Vec::new(), deadline).await
}

/// POSTs `pairs` as a form, with a deadline.
pub async fn post_form_within(
    url: &str,
    pairs: &[(&str, &str)],
    deadline: Duration,
) -> Result<Answer, String> {
    send_within(
        "POST",
        url,
        &[("content-type", "application/x-www-form-urlencoded")],
        qs(pairs).into_bytes(),
        deadline,
    )
    .await
}

/// Percent-encodes `pairs` as a query string.
pub fn qs(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// `base` + `path` + `?` + encoded pairs.
pub fn url(base: &str, path: &str, pairs: &[(&str, &str)]) -> String {
    format!("{base}{path}?{}", qs(pairs))
}

// --- Raw sockets --------------------------------------------------------

/// Sends raw bytes (for requests the `http` crate refuses to build, such as
/// URLs over 64 KiB or invalid UTF-8) and returns the status code and body.
pub async fn raw(base: &str, request: &[u8]) -> (u16, String) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let addr = base.trim_start_matches("http://");
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

/// A raw GET of `target` with `Connection: close`.
pub async fn raw_get(base: &str, target: &[u8]) -> (u16, String) {
    let mut req = b"GET ".to_vec();
    req.extend_from_slice(target);
    req.extend_from_slice(b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    raw(base, &req).await
}

/// One `GET /ready` on a fresh connection: status and time to the whole answer.
pub async fn ready_once(addr: &str, deadline: Duration) -> Result<(u16, Duration), String> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let t0 = Instant::now();
    let probe = async {
        let mut s = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        s.write_all(b"GET /ready HTTP/1.1\r\nHost: lokivl\r\nConnection: close\r\n\r\n")
            .await
            .map_err(|e| format!("write: {e}"))?;
        let mut out = Vec::new();
        s.read_to_end(&mut out)
            .await
            .map_err(|e| format!("read: {e}"))?;
        let text = String::from_utf8_lossy(&out);
        text.split(' ')
            .nth(1)
            .and_then(|c| c.parse::<u16>().ok())
            .ok_or_else(|| format!("no status line in {text:?}"))
    };
    match tokio::time::timeout(deadline, probe).await {
        Ok(Ok(status)) => Ok((status, t0.elapsed())),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(format!("no /ready answer within {deadline:?}")),
    }
}

/// [`ready_once`] with blocking I/O, for a probe on its own thread: its
/// timing then does not include delays of the test's own runtime, which
/// also runs the fake VictoriaLogs and the attacking clients.
pub fn ready_blocking(addr: &str, deadline: Duration) -> Result<(u16, Duration), String> {
    use std::io::{Read as _, Write as _};
    let t0 = Instant::now();
    let sock: std::net::SocketAddr = addr.parse().map_err(|e| format!("{e}"))?;
    let mut s = std::net::TcpStream::connect_timeout(&sock, deadline)
        .map_err(|e| format!("connect: {e}"))?;
    let left = |t0: Instant| {
        deadline
            .saturating_sub(t0.elapsed())
            .max(Duration::from_millis(1))
    };
    s.set_write_timeout(Some(left(t0)))
        .map_err(|e| e.to_string())?;
    s.write_all(b"GET /ready HTTP/1.1\r\nHost: lokivl\r\nConnection: close\r\n\r\n")
        .map_err(|e| format!("write: {e}"))?;
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        if t0.elapsed() >= deadline {
            return Err(format!("no /ready answer within {deadline:?}"));
        }
        s.set_read_timeout(Some(left(t0)))
            .map_err(|e| e.to_string())?;
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!("no /ready answer within {deadline:?}"));
            }
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let text = String::from_utf8_lossy(&out);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| format!("no status line in {text:?}"))?;
    Ok((status, t0.elapsed()))
}
