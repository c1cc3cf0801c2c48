//! The client against a real memcached (`memcached` from the OS packages;
//! each test prints one `skipped:` line when it is absent), and against
//! servers that misbehave on purpose.

use std::process::{Child, Command, Stdio};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use super::*;

/// A memcached on a free loopback port, killed on drop.
struct Memcached {
    child: Child,
    addr: String,
}

impl Drop for Memcached {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn memcached_bin() -> Option<String> {
    [
        "/usr/bin/memcached",
        "/usr/local/bin/memcached",
        "/usr/sbin/memcached",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .map(str::to_owned)
}

async fn start_memcached() -> Option<Memcached> {
    let Some(bin) = memcached_bin() else {
        // Past the test harness's capture: one line, also when the test passes.
        let _ =
            std::io::Write::write_all(&mut std::io::stderr(), b"skipped: memcached not found\n");
        return None;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut cmd = Command::new(bin);
    cmd.args([
        "-l",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-U",
        "0",
        "-m",
        "16",
    ]);
    // As root (CI), memcached refuses to start without a user to drop to.
    cmd.args(["-u", "nobody"]);
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Memcached { child, addr };
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(&server.addr).await.is_ok() {
            return Some(server);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("memcached did not start on {}", server.addr);
}

fn tier_at(addr: &str, max_item_bytes: usize) -> SharedTier {
    let config = SharedConfig {
        servers: Servers::parse(&format!("memcached://{addr}")).unwrap(),
        timeout: Duration::from_millis(500),
        circuit_open: Duration::from_secs(10),
        max_item_bytes,
        pool_size: 4,
    };
    SharedTier::memcached(&config, lifetimes())
}

fn replica_at(addr: &str, max_item_bytes: usize) -> Cache {
    Cache::new(Settings {
        max_bytes: 64 << 20,
    })
    .with_shared(tier_at(addr, max_item_bytes))
}

/// Waits (bounded) until `cache`'s tier counted `n` stored writes.
async fn wait_stored(cache: &Cache, n: u64) {
    for _ in 0..500 {
        if cache.shared_stats().unwrap().stored >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("expected {n} stored, stats {:?}", cache.shared_stats());
}

#[tokio::test]
async fn two_replicas_share_a_closed_answer_through_memcached() {
    let Some(m) = start_memcached().await else {
        return;
    };
    let (a, b) = (replica_at(&m.addr, 1 << 20), replica_at(&m.addr, 1 << 20));
    let body: &'static str = "{\"status\":\"success\",\"data\":[\"app\",\"level\"]}";
    let k = key("1:0", "q=shared");
    assert_eq!(answer(&a, k.clone(), body, TTL).await.1, Outcome::Miss);
    wait_stored(&a, 1).await;
    let l = b
        .get_or_fetch::<_, Infallible>(k, async { unreachable!("answered by memcached") })
        .await
        .unwrap();
    assert_eq!(
        (l.body.as_ref(), l.outcome),
        (body.as_bytes(), Outcome::SharedHit)
    );
    // A body of binary bytes with CRLFs inside survives the text protocol.
    let binary: &'static [u8] = b"\r\nEND\r\n\x00\xff";
    let kb = key("1:0", "q=binary");
    a.insert(kb.clone(), Fetched::new(Bytes::from_static(binary), TTL))
        .await;
    wait_stored(&a, 2).await;
    assert_eq!(b.get_through(&kb).await.as_deref(), Some(binary));
    // Another tenant's identical request is not there.
    assert_eq!(
        answer(&b, key("2:0", "q=shared"), "two", TTL).await.1,
        Outcome::Miss
    );
    let s = b.shared_stats().unwrap();
    assert_eq!((s.hit, s.miss, s.error, s.timeout), (2, 1, 0, 0));
}

#[tokio::test]
async fn the_servers_too_large_refusal_is_counted_and_keeps_the_circuit_closed() {
    let Some(m) = start_memcached().await else {
        return;
    };
    // Allow 4 MiB on our side: memcached's own 1 MiB item limit refuses it.
    let a = replica_at(&m.addr, 4 << 20);
    let big: &'static str = "x".repeat(2 << 20).leak();
    for i in 0..4 {
        answer(&a, key("1:0", &format!("q=big{i}")), big, TTL).await;
    }
    for _ in 0..500 {
        if a.shared_stats().unwrap().too_large == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let s = a.shared_stats().unwrap();
    assert_eq!(
        (s.too_large, s.error, s.skipped, s.open_circuits),
        (4, 0, 0, 0)
    );
    // The server is still used.
    answer(&a, key("1:0", "q=small"), "small", TTL).await;
    wait_stored(&a, 1).await;
}

/// A server that accepts connections and runs `reply` on each.
async fn misbehaving(reply: &'static [u8], then_hang: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let _ = sock.write_all(reply).await;
                if then_hang {
                    std::future::pending::<()>().await;
                }
            });
        }
    });
    addr
}

#[tokio::test]
async fn a_silent_server_costs_the_timeout_then_is_skipped() {
    let addr = misbehaving(b"", true).await;
    let a = replica_at(&addr, 1 << 20);
    for i in 0..4 {
        let (body, _) = answer(&a, key("1:0", &format!("q={i}")), "upstream", LIVE).await;
        assert_eq!(body.as_ref(), b"upstream");
    }
    let s = a.shared_stats().unwrap();
    assert_eq!((s.timeout, s.skipped, s.open_circuits), (3, 1, 1));
}

#[tokio::test]
async fn an_announced_value_over_the_bound_is_not_read() {
    // Claims a 1 GiB value: refused at once, nothing allocated.
    let addr = misbehaving(b"VALUE k 0 1073741824\r\n", true).await;
    let a = replica_at(&addr, 1 << 20);
    let (body, outcome) = answer(&a, key("1:0", "q=x"), "upstream", LIVE).await;
    assert_eq!(
        (body.as_ref(), outcome),
        (b"upstream".as_slice(), Outcome::Miss)
    );
    let s = a.shared_stats().unwrap();
    assert_eq!((s.error, s.timeout), (1, 0));
}

#[tokio::test]
async fn a_dead_server_is_an_error_not_a_failed_answer() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let a = replica_at(&format!("127.0.0.1:{port}"), 1 << 20);
    let (body, outcome) = answer(&a, key("1:0", "q=x"), "upstream", LIVE).await;
    assert_eq!(
        (body.as_ref(), outcome),
        (b"upstream".as_slice(), Outcome::Miss)
    );
    assert_eq!(a.shared_stats().unwrap().error, 1);
}
