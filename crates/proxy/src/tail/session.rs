//! One tail: history, then live entries, pings, limits and close codes.
//!
//! The socket belongs to a [`pump`] task; the session queues messages for
//! it in a small outbox and never waits on the client, so pings and
//! `tail_max_duration` fire whatever the client does (a stuck client then
//! gets `CLOSE_GRACE` to take the close frame). A client that does not
//! take a message within `--tail-write-timeout` is disconnected by the
//! pump, which closes the outbox and ends the session (and frees its slot).

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket};
use bytes::{Bytes, BytesMut};
use hyper::body::Incoming;
use logsql_ast::LogPlan;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::TailState;
use super::frame::{Dropped, Encoder, Entry, MAX_ENTRIES_PER_FRAME, write_frame};
use super::pump::{close_message, pump};
use super::reader::{Event, QUEUE_LINES, Reader};
use super::slots::Slot;
use super::upstream::TailRequest;
use crate::backend::{BackendError, Request, Take};
use crate::context::RequestContext;
use engine::direction::Direction;

pub use super::pump::CLOSE_INTERNAL;

/// Loki's close reason after `tail_max_duration`.
pub const MAX_DURATION_TEXT: &str = "reached tail max duration limit";
/// Loki pings every second so dead connections are found.
const PING_PERIOD: Duration = Duration::from_secs(1);
/// Messages queued for the pump: a frame and a ping while another is written.
const OUTBOX: usize = 2;
/// Longest wait, once a tail ends, for its last frames and close frame to be written.
const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// How far back the first VictoriaLogs poll looks; older lines are filtered out anyway.
const START_OFFSET: Duration = Duration::from_secs(5);

/// What one tail runs.
#[derive(Debug)]
pub struct Session {
    /// The request's context: the tenant every VictoriaLogs call is for.
    pub ctx: RequestContext,
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

/// How a tail ends.
#[derive(Debug)]
enum End {
    /// The client left, or was disconnected for not reading: nothing more to send.
    Gone,
    /// Close with 1011 and this reason.
    Close(String),
}

/// Runs a tail on `socket` until the client leaves, an error, or the max duration.
///
pub async fn run(socket: WebSocket, state: TailState, slot: Result<Slot, String>, mut s: Session) {
    let write_timeout = state.settings.write_timeout;
    let (out, outbox) = mpsc::channel(OUTBOX);
    let mut pump = AbortOnDrop(tokio::spawn(pump(socket, outbox, write_timeout)));
    let end = match &slot {
        Ok(_) => tail(&state, &mut s, &out).await,
        Err(text) => End::Close(text.clone()),
    };
    // The close, and what is still queued, get a short grace: the client may
    // be the reason the tail ends, and the slot is held until the pump stops.
    let until = Instant::now() + write_timeout.min(CLOSE_GRACE);
    if let End::Close(reason) = end {
        let close = close_message(CLOSE_INTERNAL, &reason);
        let _ = tokio::time::timeout_at(until, out.send(close)).await;
    }
    drop(out);
    let _ = tokio::time::timeout_at(until, &mut pump.0).await;
    drop(pump);
    drop(slot);
}

/// Waits on the session's steps while watching the client and the max duration.
struct Watch<'a> {
    out: &'a mpsc::Sender<Message>,
    deadline: Instant,
}

impl Watch<'_> {
    async fn guard<T>(&self, fut: impl Future<Output = T>) -> Result<T, End> {
        tokio::select! {
            v = fut => Ok(v),
            () = self.out.closed() => Err(End::Gone),
            () = tokio::time::sleep_until(self.deadline) => Err(End::Close(MAX_DURATION_TEXT.to_owned())),
        }
    }
}

/// History, then the live loop; returns how the tail ends.
async fn tail(state: &TailState, s: &mut Session, out: &mpsc::Sender<Message>) -> End {
    let watch = Watch {
        out,
        deadline: Instant::now() + state.settings.max_duration,
    };
    let t0 = crate::params::timestamp::now_ns();
    let categorize = s.encoder.categorize();
    // History: the newest `limit` entries of [start, t0), oldest first.
    let entries = match watch.guard(history(state, s, t0)).await {
        Ok(Ok(entries)) => entries,
        Ok(Err(e)) => return End::Close(e),
        Err(end) => return end,
    };
    for chunk in entries.chunks(MAX_ENTRIES_PER_FRAME) {
        let frame = write_frame(chunk, &[], categorize);
        match watch.guard(out.send(Message::Text(frame.into()))).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return End::Gone,
            Err(end) => return end,
        }
    }
    drop(entries);
    let req = TailRequest {
        query: s.plan.query.to_string(),
        start_offset: START_OFFSET + s.delay_for,
        // VictoriaLogs refuses `offset=0`; 1 ms is as close to Loki's no delay as it goes.
        offset: s.delay_for.max(Duration::from_millis(1)),
        refresh_interval: state.settings.refresh_interval,
    };
    let body = match watch.guard(open(state, &s.ctx, &req)).await {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return End::Close(e.to_string()),
        Err(end) => return end,
    };
    let dropped: Arc<Mutex<Vec<Dropped>>> = Arc::default();
    let queued: Arc<AtomicUsize> = Arc::default();
    let (tx, rx) = mpsc::channel(QUEUE_LINES);
    let reader = Reader {
        t0,
        tx,
        dropped: Arc::clone(&dropped),
        queued: Arc::clone(&queued),
        max_line: state.settings.max_line_bytes,
    };
    let _reader = AbortOnDrop(tokio::spawn(reader.run(body)));
    let live = Live {
        rx,
        dropped,
        queued,
        categorize,
    };
    live.run(s, &watch).await
}

/// Opens VictoriaLogs' tail through the backend's breaker and gate.
async fn open(
    state: &TailState,
    ctx: &RequestContext,
    req: &TailRequest,
) -> Result<Incoming, BackendError> {
    let admission = state.backend.admit_stream("tail").await?;
    let body = state.upstream.open(ctx, req).await;
    admission.finish(body.as_ref().map(drop));
    body
}

/// The live part: entries from the reader, pings, dropped-entry reports.
struct Live {
    rx: mpsc::Receiver<Event>,
    dropped: Arc<Mutex<Vec<Dropped>>>,
    queued: Arc<AtomicUsize>,
    categorize: bool,
}

impl Live {
    async fn run(mut self, s: &mut Session, watch: &Watch<'_>) -> End {
        let out = watch.out;
        let mut ping = tokio::time::interval(PING_PERIOD);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ping.tick().await;
        let mut batch: Vec<Event> = Vec::with_capacity(MAX_ENTRIES_PER_FRAME);
        // Room for the next frame, taken before entries are pulled from the reader,
        // so that while the client is slow they wait (or are dropped) there.
        let mut room: Option<mpsc::Permit<'_, Message>> = None;
        loop {
            tokio::select! {
                () = out.closed() => return End::Gone,
                () = tokio::time::sleep_until(watch.deadline) => {
                    return End::Close(MAX_DURATION_TEXT.to_owned());
                }
                _ = ping.tick() => {
                    // A full outbox means the pump is stuck on a write, which its timeout ends.
                    let _ = out.try_send(Message::Ping(Bytes::new()));
                    // Drops noticed while no entry got through are reported without waiting for one.
                    if let Some(permit) = room.take().or_else(|| out.try_reserve().ok()) {
                        let lost = take_dropped(&self.dropped, &s.plan.discovery);
                        if lost.is_empty() {
                            room = Some(permit);
                        } else {
                            permit.send(Message::Text(write_frame(&[], &lost, self.categorize).into()));
                        }
                    }
                }
                permit = out.reserve(), if room.is_none() => match permit {
                    Ok(p) => room = Some(p),
                    Err(_) => return End::Gone,
                },
                n = self.rx.recv_many(&mut batch, MAX_ENTRIES_PER_FRAME), if room.is_some() => {
                    if n == 0 {
                        return End::Close("VictoriaLogs ended the tail".to_owned());
                    }
                    let (lines, failure) = self.take(&mut batch);
                    let entries = if lines.is_empty() {
                        Vec::new()
                    } else {
                        match s.encoder.entries(lines, true).await {
                            Ok(e) => e,
                            Err(e) => return End::Close(e),
                        }
                    };
                    let lost = take_dropped(&self.dropped, &s.plan.discovery);
                    if (!entries.is_empty() || !lost.is_empty())
                        && let Some(permit) = room.take()
                    {
                        permit.send(Message::Text(write_frame(&entries, &lost, self.categorize).into()));
                    }
                    if let Some(e) = failure {
                        return End::Close(e);
                    }
                }
            }
        }
    }

    /// Joins the batch's rows into NDJSON (releasing their queue bytes) and
    /// picks out a failure, if any.
    fn take(&self, batch: &mut Vec<Event>) -> (BytesMut, Option<String>) {
        let mut lines = BytesMut::new();
        let mut failure = None;
        for ev in batch.drain(..) {
            match ev {
                Event::Line(l) => {
                    self.queued.fetch_sub(l.len(), Ordering::AcqRel);
                    lines.extend_from_slice(&l);
                    lines.extend_from_slice(b"\n");
                }
                Event::Failed(e) => failure = Some(e),
            }
        }
        (lines, failure)
    }
}

/// The history part, oldest first.
async fn history(state: &TailState, s: &mut Session, t0: i64) -> Result<Vec<Entry>, String> {
    if s.start >= t0 {
        return Ok(Vec::new());
    }
    let limit = s.limit as usize;
    if s.plan.has_proxy_stages() {
        let q = crate::query::log::LogRange {
            start: s.start,
            end: t0,
            limit,
            direction: Direction::Backward,
            categorize: s.encoder.categorize(),
        };
        let answer = crate::query::log::log_range(&state.backend, &s.ctx, &s.plan, q)
            .await
            .map_err(|e| e.to_string())?;
        return Ok(Entry::from_answer(&answer));
    }
    let req = Request::query(s.plan.query.clone(), s.start, t0 - 1).take(Take::Newest(limit));
    let body = state
        .backend
        .send_rows(&s.ctx, &req)
        .await
        .map_err(|e| e.to_string())?;
    let mut entries = s.encoder.entries(body, false).await?;
    // VictoriaLogs' `limit` already kept the newest; keep the bound anyway.
    if entries.len() > limit {
        entries.drain(..entries.len() - limit);
    }
    Ok(entries)
}

/// The entries dropped since the last frame, labelled as Loki reports them.
fn take_dropped(dropped: &Mutex<Vec<Dropped>>, discovery: &logsql_ast::Discovery) -> Vec<Dropped> {
    let mut lost = std::mem::take(&mut *dropped.lock().unwrap_or_else(|p| p.into_inner()));
    for d in &mut lost {
        d.discover(discovery);
    }
    lost
}

/// Stops a task (the VictoriaLogs reader and its connection, or the pump
/// and its socket) when the tail ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
