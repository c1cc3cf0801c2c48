//! Connection bounds of the listener over real sockets: a client trickling
//! its head (or sending nothing) is dropped after the header read timeout,
//! an idle keep-alive connection after the idle timeout, a client that
//! stops reading a response after the write timeout, while a slow handler
//! is never cut; past the connection cap new connections wait in the
//! backlog and `/ready` is answered once a connection ends.

#[path = "support/mod.rs"]
mod support;

use std::time::Duration;

use axum::Router;
use axum::routing::get;
use proxy::server::conn::ConnLimits;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Timeouts far past any test, so that only the one under test acts.
const LONG: Duration = Duration::from_secs(3600);
/// A bound on what the tests wait for, far past the short timeouts they configure.
const WAIT: Duration = Duration::from_secs(20);
/// Body of `/big`: more than any socket buffers hold.
const BIG: usize = 32 << 20;

fn limits(header: Duration, idle: Duration, write: Duration) -> ConnLimits {
    ConnLimits {
        max_connections: 0,
        header_read_timeout: header,
        idle_timeout: idle,
        write_timeout: write,
    }
}

/// A plain router served by lokivl's loop under `limits`; returns `host:port`.
async fn serve(limits: ConnLimits) -> String {
    let router = Router::new()
        .route("/ok", get(|| async { "ok" }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(2500)).await;
                "slow"
            }),
        )
        .route("/big", get(|| async { vec![b'x'; BIG] }));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap().to_string();
    tokio::spawn(proxy::server::listen::serve(
        l,
        router,
        limits,
        None,
        std::future::pending(),
    ));
    addr
}

/// Reads until lokivl closes the connection; the bytes read, or `None` if
/// it is still open after `wait`.
async fn read_until_closed(s: &mut TcpStream, wait: Duration) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    tokio::time::timeout(wait, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .ok()?;
    Some(got)
}

/// Reads one response whose body has a `content-length`; returns its head and body.
async fn read_response(s: &mut TcpStream) -> (String, Vec<u8>) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(WAIT, async {
        loop {
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if got.len() >= end + 4 + len {
                    let body = got[end + 4..end + 4 + len].to_vec();
                    return (head, body);
                }
            }
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "connection closed mid-response: {got:?}");
            got.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("a response in time")
}

#[tokio::test]
async fn a_client_trickling_its_head_is_dropped_without_an_answer() {
    let addr = serve(limits(Duration::from_secs(1), LONG, LONG)).await;
    let mut s = TcpStream::connect(&addr).await.unwrap();
    s.write_all(b"GET /ok HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let (mut rd, mut wr) = s.into_split();
    let trickle = tokio::spawn(async move {
        for i in 0..600 {
            if wr
                .write_all(format!("X-Slow-{i}: y\r\n").as_bytes())
                .await
                .is_err()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let mut got = Vec::new();
    let closed = tokio::time::timeout(WAIT, rd.read_to_end(&mut got)).await;
    trickle.abort();
    assert!(closed.is_ok(), "still open although the head never ended");
    assert!(
        got.is_empty(),
        "no answer: {}",
        String::from_utf8_lossy(&got)
    );
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_dropped_after_the_header_timeout() {
    let addr = serve(limits(Duration::from_secs(1), LONG, LONG)).await;
    let mut s = TcpStream::connect(&addr).await.unwrap();
    assert_eq!(read_until_closed(&mut s, WAIT).await, Some(Vec::new()));
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let addr = serve(limits(LONG, Duration::from_secs(1), LONG)).await;
    let mut s = TcpStream::connect(&addr).await.unwrap();
    // Two requests on one connection: it is kept alive between them.
    for _ in 0..2 {
        s.write_all(b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let (head, body) = read_response(&mut s).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert_eq!(body, b"ok");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Then idle: closed quietly, with nothing more sent.
    assert_eq!(read_until_closed(&mut s, WAIT).await, Some(Vec::new()));
}

#[tokio::test]
async fn a_slow_handler_is_not_cut_by_the_head_or_idle_timeouts() {
    let addr = serve(limits(Duration::from_secs(1), Duration::from_secs(1), LONG)).await;
    let mut s = TcpStream::connect(&addr).await.unwrap();
    s.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let (head, body) = read_response(&mut s).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert_eq!(body, b"slow");
}

#[tokio::test]
async fn a_client_that_stops_reading_a_response_is_disconnected() {
    let addr = serve(limits(LONG, LONG, Duration::from_secs(1))).await;
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let mut s = sock.connect(addr.parse().unwrap()).await.unwrap();
    s.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    // Not reading: lokivl's writes stall once the socket buffers are full.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let got = read_until_closed(&mut s, WAIT)
        .await
        .expect("lokivl closed the connection of a client that stopped reading");
    assert!(
        got.len() < BIG,
        "{} bytes: the response was cut off",
        got.len()
    );
}

#[tokio::test]
async fn past_the_connection_cap_connections_wait_and_ready_answers_once_one_ends() {
    // A VictoriaLogs that is healthy, for `/ready`.
    let vl = crate::support::fake_vl::fake_vl(vec![(
        "/health",
        crate::support::fake_vl::Canned::ok("OK"),
    )])
    .await;
    let vl_url = vl.url.clone();

    let addr = crate::support::lokivl::start_bounded(&vl_url, |settings| {
        settings.server = ConnLimits {
            max_connections: 2,
            ..limits(LONG, LONG, LONG)
        };
    })
    .await;

    // Two connections that send nothing hold both slots.
    let first = TcpStream::connect(&addr).await.unwrap();
    let _second = TcpStream::connect(&addr).await.unwrap();
    // Let the loop accept both before the third connects.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ready = {
        let addr = addr.clone();
        tokio::spawn(async move {
            let mut s = TcpStream::connect(&addr).await.unwrap();
            s.write_all(b"GET /ready HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            read_response(&mut s).await
        })
    };
    // Connected (the kernel's backlog) but not served: no slot is free.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!ready.is_finished(), "served past the connection cap");
    drop(first);
    let (head, body) = tokio::time::timeout(WAIT, ready)
        .await
        .expect("/ready answered once a connection ended")
        .unwrap();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert_eq!(body, b"ready\n");
}
