//! One tail: history, then live entries, pings, limits and close codes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use logsql_ast::LogPlan;
use tokio::sync::mpsc;

use super::TailState;
use super::frame::{
    Dropped, Encoder, Entry, MAX_DROPPED_PER_FRAME, MAX_ENTRIES_PER_FRAME, write_frame,
};
use super::slots::Slot;
use super::upstream::TailRequest;
use crate::backend::Endpoint;
use crate::direction::Direction;

/// WebSocket close code for a server-side failure (Loki's `CloseInternalServerErr`).
pub const CLOSE_INTERNAL: u16 = 1011;
/// Loki's close reason after `tail_max_duration`.
pub const MAX_DURATION_TEXT: &str = "reached tail max duration limit";
/// Loki pings every second so dead connections are found.
const PING_PERIOD: Duration = Duration::from_secs(1);
/// Lines buffered between VictoriaLogs and a slow client before entries are dropped.
const CHANNEL_LINES: usize = 1024;
/// How far back the first VictoriaLogs poll looks; older lines are filtered out anyway.
const START_OFFSET: Duration = Duration::from_secs(5);
/// Longest close reason a WebSocket close frame can carry.
const MAX_REASON: usize = 123;

/// What one tail runs.
#[derive(Debug)]
pub struct Session {
    /// The lowered query.
    pub plan: LogPlan,
    /// Encodes batches into frame entries.
    pub encoder: Encoder,
    /// History entries sent first (Loki's `limit`).
    pub limit: u32,
    /// First nanosecond of the history.
    pub start: i64,
    /// Loki's `delay_for`.
    pub delay_for: Duration,
}

/// What the VictoriaLogs reader reports.
#[derive(Debug)]
enum Event {
    Line(Bytes),
    Failed(String),
}

/// Runs a tail on `socket` until the client leaves, an error, or the max duration.
///
/// Must run inside [`crate::tenant::scope`] so VictoriaLogs calls carry the tenant.
pub async fn run(
    mut socket: WebSocket,
    state: TailState,
    slot: Result<Slot, String>,
    mut s: Session,
) {
    let _slot = match slot {
        Ok(slot) => slot,
        Err(text) => return close(&mut socket, &text).await,
    };
    let t0 = crate::params::timestamp::now_ns();
    let categorize = s.encoder.categorize();
    // History: the newest `limit` entries of [start, t0), oldest first.
    match history(&state, &mut s, t0).await {
        Ok(entries) => {
            for chunk in entries.chunks(MAX_ENTRIES_PER_FRAME) {
                let frame = write_frame(chunk, &[], categorize);
                if socket.send(Message::Text(frame.into())).await.is_err() {
                    return;
                }
            }
        }
        Err(e) => return close(&mut socket, &e).await,
    }
    let req = TailRequest {
        query: s.plan.query.to_string(),
        start_offset: START_OFFSET + s.delay_for,
        // VictoriaLogs refuses `offset=0`; 1 ms is as close to Loki's no delay as it goes.
        offset: s.delay_for.max(Duration::from_millis(1)),
        refresh_interval: state.settings.refresh_interval,
    };
    let body = match state.upstream.open(&req).await {
        Ok(b) => b,
        Err(e) => return close(&mut socket, &e).await,
    };
    let dropped: Arc<Mutex<Vec<Dropped>>> = Arc::default();
    let (tx, mut rx) = mpsc::channel(CHANNEL_LINES);
    let reader = tokio::spawn(read_lines(body, t0, tx, Arc::clone(&dropped)));
    let _abort = AbortOnDrop(reader);

    let deadline = tokio::time::Instant::now() + state.settings.max_duration;
    let mut ping = tokio::time::interval(PING_PERIOD);
    ping.tick().await;
    let mut batch: Vec<Event> = Vec::with_capacity(MAX_ENTRIES_PER_FRAME);
    loop {
        tokio::select! {
            msg = socket.recv() => match msg {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
            _ = ping.tick() => {
                if socket.send(Message::Ping(Bytes::new())).await.is_err() {
                    return;
                }
                // Drops noticed while no entry got through are reported without waiting for one.
                let lost = take_dropped(&dropped, &s.plan.discovery);
                if !lost.is_empty() {
                    let frame = write_frame(&[], &lost, categorize);
                    if socket.send(Message::Text(frame.into())).await.is_err() {
                        return;
                    }
                }
            }
            () = tokio::time::sleep_until(deadline) => {
                return close(&mut socket, MAX_DURATION_TEXT).await;
            }
            n = rx.recv_many(&mut batch, MAX_ENTRIES_PER_FRAME) => {
                if n == 0 {
                    return close(&mut socket, "VictoriaLogs ended the tail").await;
                }
                let mut lines = BytesMut::new();
                let mut failure = None;
                for ev in batch.drain(..) {
                    match ev {
                        Event::Line(l) => {
                            lines.extend_from_slice(&l);
                            lines.extend_from_slice(b"\n");
                        }
                        Event::Failed(e) => failure = Some(e),
                    }
                }
                let entries = if lines.is_empty() {
                    Vec::new()
                } else {
                    match s.encoder.entries(lines, true).await {
                        Ok(e) => e,
                        Err(e) => return close(&mut socket, &e).await,
                    }
                };
                let lost = take_dropped(&dropped, &s.plan.discovery);
                if !entries.is_empty() || !lost.is_empty() {
                    let frame = write_frame(&entries, &lost, categorize);
                    if socket.send(Message::Text(frame.into())).await.is_err() {
                        return;
                    }
                }
                if let Some(e) = failure {
                    return close(&mut socket, &e).await;
                }
            }
        }
    }
}

/// The history part, oldest first.
async fn history(state: &TailState, s: &mut Session, t0: i64) -> Result<Vec<Entry>, String> {
    if s.start >= t0 {
        return Ok(Vec::new());
    }
    let limit = s.limit as usize;
    if s.plan.has_proxy_stages() {
        let answer = crate::pipeline::run::log_range(
            &state.backend,
            &s.plan,
            s.start,
            t0,
            limit,
            Direction::Backward,
            s.encoder.categorize(),
        )
        .await
        .map_err(|e| e.to_string())?;
        return super::frame::flatten(&answer);
    }
    let (q, start, end, n) = (
        s.plan.query.to_string(),
        s.start.to_string(),
        (t0 - 1).to_string(),
        limit.to_string(),
    );
    let form = [
        ("query", q.as_str()),
        ("start", &start),
        ("end", &end),
        ("limit", &n),
    ];
    let body = state
        .backend
        .post_form(Endpoint::Query, &form)
        .await
        .map_err(|e| e.to_string())?;
    let mut entries = s.encoder.entries(body, false).await?;
    // VictoriaLogs' `limit` already kept the newest; keep the bound anyway.
    if entries.len() > limit {
        entries.drain(..entries.len() - limit);
    }
    Ok(entries)
}

/// Reads VictoriaLogs' NDJSON, forwarding lines at or after `t0`; a full
/// channel means a slow client: the entry is recorded as dropped.
async fn read_lines(
    mut body: Incoming,
    t0: i64,
    tx: mpsc::Sender<Event>,
    dropped: Arc<Mutex<Vec<Dropped>>>,
) {
    let mut buf = BytesMut::new();
    loop {
        let frame = match body.frame().await {
            Some(Ok(f)) => f,
            Some(Err(e)) => {
                let _ = tx
                    .send(Event::Failed(format!(
                        "reading the VictoriaLogs tail failed: {e}"
                    )))
                    .await;
                return;
            }
            None => {
                let rest = String::from_utf8_lossy(&buf).trim().to_owned();
                let text = if rest.is_empty() {
                    "VictoriaLogs ended the tail".to_owned()
                } else {
                    rest
                };
                let _ = tx.send(Event::Failed(text)).await;
                return;
            }
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        buf.extend_from_slice(&data);
        while let Some(pos) = buf.iter().position(|&b| b == b'\n') {
            let line = buf.split_to(pos + 1).freeze();
            let line = line.slice(..pos);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if line.first() != Some(&b'{') {
                // VictoriaLogs writes its error text into the stream once it has started.
                let text = String::from_utf8_lossy(&line).trim().to_owned();
                let _ = tx.send(Event::Failed(text)).await;
                return;
            }
            let Some(head) = Dropped::from_line(&line) else {
                continue;
            };
            if head.ts < t0 {
                continue;
            }
            match tx.try_send(Event::Line(line)) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    let mut d = dropped.lock().unwrap_or_else(|p| p.into_inner());
                    if d.len() < MAX_DROPPED_PER_FRAME {
                        d.push(head);
                    }
                }
                Err(mpsc::error::TrySendError::Closed(_)) => return,
            }
        }
    }
}

/// The entries dropped since the last frame, labelled as Loki reports them.
fn take_dropped(dropped: &Mutex<Vec<Dropped>>, discovery: &logsql_ast::Discovery) -> Vec<Dropped> {
    let mut lost = std::mem::take(&mut *dropped.lock().unwrap_or_else(|p| p.into_inner()));
    for d in &mut lost {
        d.discover(discovery);
    }
    lost
}

/// Sends close 1011 with `reason` (cut to what a close frame holds).
async fn close(socket: &mut WebSocket, reason: &str) {
    let mut end = reason.len().min(MAX_REASON);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let frame = CloseFrame {
        code: CLOSE_INTERNAL,
        reason: reason[..end].to_owned().into(),
    };
    let _ = socket.send(Message::Close(Some(frame))).await;
}

/// Stops the VictoriaLogs reader (and so its connection) when the tail ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
