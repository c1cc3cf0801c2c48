//! Small HTTP clients for the attacks: one request with a deadline, raw
//! `/ready` probes on a fresh connection, and URL builders.

use std::time::{Duration, Instant};

use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An answer: status and body text.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub took: Duration,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}",
                self.body.chars().take(500).collect::<String>()
            )
        })
    }

    /// The first 300 characters, for failure messages.
    pub fn short(&self) -> String {
        let b: String = self.body.chars().take(300).collect();
        format!("{} after {:?}: {b}", self.status, self.took)
    }
}

/// Sends one request; `Err` on a connection failure or when `deadline` passed.
pub async fn send(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    deadline: Duration,
) -> Result<Answer, String> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut b = http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let req = b
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let answer = async {
        let resp = client.request(req).await.map_err(|e| format!("{e:?}"))?;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("{e:?}"))?
            .to_bytes();
        Ok::<_, String>((status, body))
    };
    match tokio::time::timeout(deadline, answer).await {
        Ok(Ok((status, body))) => Ok(Answer {
            status,
            body: String::from_utf8_lossy(&body).into_owned(),
            took: t0.elapsed(),
        }),
        Ok(Err(e)) => Err(format!("request failed after {:?}: {e}", t0.elapsed())),
        Err(_) => Err(format!("no answer within {deadline:?}")),
    }
}

pub async fn get(url: &str, deadline: Duration) -> Result<Answer, String> {
    send("GET", url, &[], Vec::new(), deadline).await
}

pub async fn get_with(
    url: &str,
    headers: &[(&str, &str)],
    deadline: Duration,
) -> Result<Answer, String> {
    send("GET", url, headers, Vec::new(), deadline).await
}

/// POSTs `pairs` as a form.
pub async fn post_form(
    url: &str,
    pairs: &[(&str, &str)],
    deadline: Duration,
) -> Result<Answer, String> {
    send(
        "POST",
        url,
        &[("content-type", "application/x-www-form-urlencoded")],
        qs(pairs).into_bytes(),
        deadline,
    )
    .await
}

/// Percent-encodes `pairs`.
pub fn qs(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// `base` + `path` + `?` + encoded pairs.
pub fn url(base: &str, path: &str, pairs: &[(&str, &str)]) -> String {
    format!("{base}{path}?{}", qs(pairs))
}

/// One `GET /ready` on a fresh connection: status and time to the whole answer.
pub async fn ready_once(addr: &str, deadline: Duration) -> Result<(u16, Duration), String> {
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

/// Whether the answer is one lokivl may give to a hostile request: 200, or a
/// 4xx refusal. A 5xx, a dropped connection or no answer is a failure.
pub fn assert_handled(case: &str, what: &str, r: &Result<Answer, String>) {
    match r {
        Ok(a) if a.status == 200 || (400..500).contains(&a.status) => {}
        Ok(a) => panic!("{case}: {what}: expected 200 or a 4xx, got {}", a.short()),
        Err(e) => panic!("{case}: {what}: {e}"),
    }
}
