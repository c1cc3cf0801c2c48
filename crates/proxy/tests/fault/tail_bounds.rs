//! The live tail's bounds against a fake VictoriaLogs, over real sockets:
//! clients that never read are disconnected after the write timeout (an
//! unanswered ping, or a stalled write; one that reads keeps its quiet
//! tail) and their slots freed while
//! `/ready` keeps answering, `tail_max_duration` ends a tail whose client
//! is stuck, the cap over all tenants, the bound on one VictoriaLogs row
//! and on what a client may send, and the tail's VictoriaLogs call counted
//! by the shared circuit breaker.

use std::time::Duration;

use crate::support::fake_vl::FakeVl;
use crate::support::fake_vl::tail::{Tail, fake_tailing};
use crate::support::lokivl::start_bounded;
use crate::support::tail::*;
use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// A fake that floods each tail with `rows` rows of about 1 KiB, all live.
async fn flooding_fake(rows: usize) -> FakeVl {
    let chunk = Bytes::from(row(now_secs() + 3600, 1000));
    fake_tailing(Tail::Repeat { chunk, times: rows }).await
}

/// Polls until a new tail for `tenant` is let in, for up to `wait`.
async fn admitted_within(addr: &str, tenant: &str, wait: Duration) -> bool {
    let until = tokio::time::Instant::now() + wait;
    while tokio::time::Instant::now() < until {
        if tail_admitted(addr, tenant).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    false
}

/// A fake whose tails bring nothing new: only pings go to the clients.
async fn quiet_fake() -> FakeVl {
    fake_tailing(Tail::Repeat {
        chunk: Bytes::new(),
        times: 0,
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_tails_that_never_read_are_disconnected_and_ready_answers() {
    const TAILS: usize = 200;
    const WRITE_TIMEOUT: Duration = Duration::from_secs(3);
    let vl = quiet_fake().await;
    let addr = start_bounded(&vl.url, |s| {
        s.tail.max_concurrent = TAILS;
        s.tail.max_concurrent_total = TAILS;
        s.tail.write_timeout = WRITE_TIMEOUT;
    })
    .await;
    let opened = tokio::time::Instant::now();
    let mut stuck = Vec::with_capacity(TAILS);
    for _ in 0..TAILS {
        stuck.push(connect_not_reading(&addr, "1").await);
    }
    // While they all run, one more tail is refused with the cap's text (only
    // checkable while the first ones cannot have been disconnected yet).
    if opened.elapsed() < WRITE_TIMEOUT / 2 {
        let mut refused = connect(&addr, "2").await.unwrap();
        let (code, reason) = close_of(next(&mut refused, Duration::from_secs(10)).await);
        assert_eq!(code, CloseCode::Error);
        assert_eq!(
            reason,
            format!(
                "max concurrent tail requests limit exceeded, count > limit ({} > {TAILS}) over all tenants",
                TAILS + 1
            )
        );
    }
    assert_eq!(
        get_status(&addr, "/ready", Duration::from_secs(10)).await,
        Some(200),
        "/ready answers while {TAILS} clients do not read"
    );
    // Their pings stay unanswered: the write timeout disconnects them and frees the slots.
    assert!(
        admitted_within(&addr, "2", Duration::from_secs(60)).await,
        "a slot is freed after the write timeout"
    );
    // lokivl closed them all. Read as raw bytes: a WebSocket client would
    // answer the buffered pings and keep a tail not yet timed out alive.
    let mut open = Vec::new();
    for (i, ws) in stuck.iter_mut().enumerate() {
        if !closed_by_lokivl_within(ws, Duration::from_secs(30)).await {
            open.push(i);
        }
    }
    assert_eq!(open, Vec::<usize>::new(), "tails lokivl did not disconnect");
}

/// The ping rule drops only clients that do not read: one that reads (and
/// so answers each ping as it arrives) keeps a quiet tail through pings
/// spanning several write timeouts.
#[tokio::test]
async fn a_client_that_reads_keeps_a_quiet_tail_past_the_write_timeout() {
    const PINGS: usize = 5;
    let vl = quiet_fake().await;
    let addr = start_bounded(&vl.url, |s| {
        s.tail.write_timeout = Duration::from_secs(1);
    })
    .await;
    let mut ws = connect(&addr, "1").await.unwrap();
    // Pings go out a second apart: five of them span four write timeouts.
    let mut pings = 0;
    while pings < PINGS {
        match tokio::time::timeout(Duration::from_secs(30), ws.next()).await {
            Ok(Some(Ok(Message::Ping(_)))) => pings += 1,
            Ok(Some(Ok(Message::Text(_) | Message::Pong(_)))) => {}
            other => panic!("the tail of a reading client ended after {pings} pings: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_client_that_talks_but_never_reads_is_disconnected_when_a_write_stalls() {
    // 6 MiB of entries: more than the socket buffers hold.
    let vl = flooding_fake(6_000).await;
    let addr = start_bounded(&vl.url, |s| {
        s.tail.max_concurrent_total = 1;
        s.tail.write_timeout = Duration::from_secs(1);
        s.server.write_timeout = Duration::from_secs(3600);
    })
    .await;
    let mut stuck = connect_not_reading(&addr, "1").await;
    // It keeps sending (so it is never silent), but it never reads.
    let talker = tokio::spawn(async move {
        for _ in 0..600 {
            if stuck
                .send(Message::Text("still here".into()))
                .await
                .is_err()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        stuck
    });
    assert!(
        admitted_within(&addr, "2", Duration::from_secs(50)).await,
        "the stalled write disconnected the client and freed the slot"
    );
    talker.abort();
}

#[tokio::test]
async fn max_duration_ends_a_tail_whose_client_is_stuck() {
    let vl = flooding_fake(6_000).await;
    let addr = start_bounded(&vl.url, |s| {
        s.tail.max_concurrent_total = 1;
        s.tail.max_duration = Duration::from_secs(2);
        // Far longer than the test: only the max duration can end the tail.
        s.tail.write_timeout = Duration::from_secs(3600);
        s.server.write_timeout = Duration::from_secs(3600);
    })
    .await;
    let _stuck = connect_not_reading(&addr, "1").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!tail_admitted(&addr, "2").await, "the only slot is held");
    assert!(
        admitted_within(&addr, "2", Duration::from_secs(30)).await,
        "tail_max_duration freed the slot although the client never read"
    );
}

#[tokio::test]
async fn the_cap_over_all_tenants() {
    let vl = quiet_fake().await;
    let addr = start_bounded(&vl.url, |s| s.tail.max_concurrent_total = 2).await;
    let mut a = connect(&addr, "1").await.unwrap();
    let _b = connect(&addr, "2").await.unwrap();
    // Both run (a ping each), so the third is over the cap.
    assert!(matches!(
        tokio::time::timeout(
            Duration::from_secs(5),
            futures_util::StreamExt::next(&mut a)
        )
        .await,
        Ok(Some(Ok(Message::Ping(_))))
    ));
    let mut c = connect(&addr, "3").await.unwrap();
    let (code, reason) = close_of(next(&mut c, Duration::from_secs(5)).await);
    assert_eq!(code, CloseCode::Error);
    assert_eq!(
        reason,
        "max concurrent tail requests limit exceeded, count > limit (3 > 2) over all tenants"
    );
    a.close(None).await.unwrap();
    assert!(
        admitted_within(&addr, "3", Duration::from_secs(30)).await,
        "the slot is freed when a tail ends"
    );
}

#[tokio::test]
async fn a_row_over_the_line_bound_closes_the_tail_with_1011() {
    // A row of 200 KiB that never ends, against a bound of 64 KiB.
    let vl = fake_tailing(Tail::Repeat {
        chunk: Bytes::from(vec![b'{'; 8192]),
        times: 25,
    })
    .await;
    let addr = start_bounded(&vl.url, |s| s.tail.max_line_bytes = 64 << 10).await;
    let mut ws = connect(&addr, "1").await.unwrap();
    let (code, reason) = close_of(next(&mut ws, Duration::from_secs(10)).await);
    assert_eq!(code, CloseCode::Error);
    assert_eq!(
        reason,
        "VictoriaLogs sent a tail entry over 65536 bytes (--tail-max-line-bytes)"
    );
}

#[tokio::test]
async fn a_complete_row_over_the_line_bound_closes_the_tail_too() {
    let vl = fake_tailing(Tail::Repeat {
        chunk: Bytes::from(row(now_secs() + 3600, 100 << 10)),
        times: 1,
    })
    .await;
    let addr = start_bounded(&vl.url, |s| s.tail.max_line_bytes = 64 << 10).await;
    let mut ws = connect(&addr, "1").await.unwrap();
    let (code, reason) = close_of(next(&mut ws, Duration::from_secs(10)).await);
    assert_eq!(code, CloseCode::Error);
    assert!(
        reason.starts_with("VictoriaLogs sent a tail entry over 65536 bytes"),
        "{reason}"
    );
}

#[tokio::test]
async fn rows_under_the_line_bound_are_delivered() {
    let vl = fake_tailing(Tail::Repeat {
        chunk: Bytes::from(row(now_secs() + 3600, 60 << 10)),
        times: 1,
    })
    .await;
    let addr = start_bounded(&vl.url, |s| s.tail.max_line_bytes = 64 << 10).await;
    let mut ws = connect(&addr, "1").await.unwrap();
    let Message::Text(t) = next(&mut ws, Duration::from_secs(10)).await else {
        panic!("an entry frame expected")
    };
    let v: serde_json::Value = serde_json::from_str(&t).unwrap();
    assert_eq!(
        v["streams"][0]["values"][0][1].as_str().map(str::len),
        Some(60 << 10)
    );
}

#[tokio::test]
async fn a_client_message_over_64_kib_closes_with_1009() {
    let vl = quiet_fake().await;
    let addr = start_bounded(&vl.url, |_| {}).await;
    let mut ws = connect(&addr, "1").await.unwrap();
    // Small messages are read and ignored, as Loki does.
    ws.send(Message::Text("hello".into())).await.unwrap();
    ws.send(Message::Text("x".repeat(100 << 10).into()))
        .await
        .unwrap();
    let (code, reason) = close_of(next(&mut ws, Duration::from_secs(10)).await);
    assert_eq!(code, CloseCode::Size);
    assert_eq!(reason, "message too big");
}

#[tokio::test]
async fn the_tail_call_counts_towards_the_shared_circuit_breaker() {
    let vl = fake_tailing(Tail::Refuse(500, "disk on fire")).await;
    let addr = start_bounded(&vl.url, |s| {
        s.backend_options.breaker_failures = 1;
        s.backend_options.breaker_cooldown = Duration::from_secs(600);
    })
    .await;
    let mut first = connect(&addr, "1").await.unwrap();
    let (code, reason) = close_of(next(&mut first, Duration::from_secs(10)).await);
    assert_eq!(code, CloseCode::Error);
    assert!(reason.contains("disk on fire"), "{reason}");
    // That failure opened the breaker: the next tail is refused before reaching VictoriaLogs.
    let mut second = connect(&addr, "1").await.unwrap();
    let (code, reason) = close_of(next(&mut second, Duration::from_secs(10)).await);
    assert_eq!(code, CloseCode::Error);
    assert!(reason.starts_with("VictoriaLogs is failing"), "{reason}");
    assert_eq!(vl.tail_calls(), 1);
    assert_eq!(
        get_status(&addr, "/ready", Duration::from_secs(10)).await,
        Some(503)
    );
}

#[tokio::test]
async fn an_open_tail_holds_a_connection_slot_until_it_closes() {
    let vl = quiet_fake().await;
    let addr = start_bounded(&vl.url, |s| s.server.max_connections = 1).await;
    let mut ws = connect(&addr, "1").await.unwrap();
    assert!(matches!(
        tokio::time::timeout(
            Duration::from_secs(5),
            futures_util::StreamExt::next(&mut ws)
        )
        .await,
        Ok(Some(Ok(Message::Ping(_))))
    ));
    let ready = {
        let addr = addr.clone();
        tokio::spawn(async move { get_status(&addr, "/ready", Duration::from_secs(30)).await })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !ready.is_finished(),
        "served while the tail holds the only connection slot"
    );
    ws.close(None).await.unwrap();
    while let Some(Ok(_)) = futures_util::StreamExt::next(&mut ws).await {}
    assert_eq!(ready.await.unwrap(), Some(200));
}
