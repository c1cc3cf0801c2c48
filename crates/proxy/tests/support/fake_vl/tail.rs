//! The tail mode: what `/select/logsql/tail` streams. Bytes are built once
//! per [`Tail`] and shared, so the fake can send hundreds of MiB to hundreds
//! of tails without spending the test's CPU or memory on it. Each stream is
//! counted while open, so a test sees when lokivl closed it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;

use super::Recorded;
use super::rows::{now_ns, rfc3339};

/// What `/select/logsql/tail` does.
#[derive(Debug, Clone)]
pub enum Tail {
    /// 200 and then nothing, connection held open.
    Silent,
    /// This status and text at once.
    Refuse(u16, &'static str),
    /// `chunk` sent `times` times, then the stream stays open.
    Repeat { chunk: Bytes, times: usize },
    /// These lines (each followed by `\n`), then the stream stays open.
    Lines(Vec<String>),
    /// These lines, then VictoriaLogs' mid-stream error text, then the end.
    LinesThenError(Vec<String>, &'static str),
    /// First `opening_rows` rows of `opening_line_bytes` each, then `rows`
    /// rows of `line_bytes` every `every`; stamped a day ahead so a tail
    /// started now keeps them.
    Flood {
        opening_rows: usize,
        opening_line_bytes: usize,
        rows: usize,
        line_bytes: usize,
        every: Duration,
    },
    /// One line that never ends: `chunk_bytes` more bytes every `every`.
    EndlessLine { chunk_bytes: usize, every: Duration },
}

/// A [`Tail`] with its bytes built.
struct Plan {
    refuse: Option<(u16, &'static str)>,
    /// Sent first, in order.
    opening: Vec<Bytes>,
    /// Then this chunk, this many times.
    repeat: (Bytes, usize),
    then: Then,
}

enum Then {
    /// The stream stays open, silent.
    Open,
    /// The stream ends.
    End,
    /// This chunk every period, for ever.
    Every(Duration, Bytes),
}

/// `n` NDJSON rows with messages of `bytes` bytes, a day ahead of now.
fn rows_ahead(n: usize, bytes: usize) -> Bytes {
    let ahead = now_ns() + 86_400_000_000_000;
    let pad = "x".repeat(bytes);
    let mut out = String::with_capacity(n * (bytes + 120));
    for i in 0..n {
        out.push_str(&format!(
            r#"{{"_time":"{}","_stream_id":"s","_stream":"{{app=\"api\"}}","_msg":"{pad}","app":"api"}}"#,
            rfc3339(ahead + i as i64)
        ));
        out.push('\n');
    }
    Bytes::from(out)
}

impl Plan {
    fn new(tail: Tail) -> Plan {
        let lines = |l: Vec<String>| l.into_iter().map(|l| Bytes::from(l + "\n")).collect();
        let plan = |opening, then| Plan {
            refuse: None,
            opening,
            repeat: (Bytes::new(), 0),
            then,
        };
        match tail {
            Tail::Silent => plan(Vec::new(), Then::Open),
            Tail::Refuse(status, text) => Plan {
                refuse: Some((status, text)),
                ..plan(Vec::new(), Then::End)
            },
            Tail::Repeat { chunk, times } => Plan {
                repeat: (chunk, times),
                ..plan(Vec::new(), Then::Open)
            },
            Tail::Lines(l) => plan(lines(l), Then::Open),
            Tail::LinesThenError(l, err) => {
                let mut chunks: Vec<Bytes> = lines(l);
                chunks.push(Bytes::from(format!("{err}\n")));
                plan(chunks, Then::End)
            }
            Tail::Flood {
                opening_rows,
                opening_line_bytes,
                rows,
                line_bytes,
                every,
            } => plan(
                vec![rows_ahead(opening_rows, opening_line_bytes)],
                Then::Every(every, rows_ahead(rows, line_bytes)),
            ),
            Tail::EndlessLine { chunk_bytes, every } => plan(
                vec![Bytes::from_static(
                    br#"{"_time":"2026-08-22T09:30:00Z","_stream_id":"s1","_stream":"{app=\"api\"}","_msg":""#,
                )],
                Then::Every(every, Bytes::from("y".repeat(chunk_bytes))),
            ),
        }
    }

    fn stream(&self) -> BoxStream<'static, Bytes> {
        let (chunk, times) = self.repeat.clone();
        let head = futures_util::stream::iter(self.opening.clone()).chain(
            futures_util::stream::iter(std::iter::repeat_n(chunk, times)),
        );
        match &self.then {
            Then::Open => head.chain(futures_util::stream::pending()).boxed(),
            Then::End => head.boxed(),
            Then::Every(every, filler) => {
                let (every, filler) = (*every, filler.clone());
                head.chain(futures_util::stream::unfold((), move |()| {
                    let filler = filler.clone();
                    async move {
                        tokio::time::sleep(every).await;
                        Some((filler, ()))
                    }
                }))
                .boxed()
            }
        }
    }
}

/// Counts an open tail stream until the stream is dropped (lokivl closed it).
struct OpenTail(Arc<AtomicUsize>);

impl Drop for OpenTail {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The tail mode's state; off until a [`Tail`] is set.
#[derive(Default)]
pub(super) struct TailState {
    default: Mutex<Option<Arc<Plan>>>,
    by_account: Mutex<HashMap<String, Arc<Plan>>>,
    calls: AtomicUsize,
    open: Arc<AtomicUsize>,
}

impl TailState {
    pub(super) fn set(&self, account: Option<&str>, tail: Tail) {
        let plan = Arc::new(Plan::new(tail));
        match account {
            Some(a) => {
                self.by_account.lock().unwrap().insert(a.to_owned(), plan);
            }
            None => *self.default.lock().unwrap() = Some(plan),
        }
    }

    pub(super) fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    pub(super) fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// The answer to a `/select/logsql/tail` call; `None` when the mode is off.
    pub(super) fn answer(&self, call: &Recorded) -> Option<Response> {
        let default = self.default.lock().unwrap().clone()?;
        let plan = self
            .by_account
            .lock()
            .unwrap()
            .get(call.account_or_default())
            .cloned()
            .unwrap_or(default);
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some((status, text)) = plan.refuse {
            return Some((StatusCode::from_u16(status).unwrap(), text).into_response());
        }
        self.open.fetch_add(1, Ordering::SeqCst);
        let guard = OpenTail(Arc::clone(&self.open));
        let chunks = plan.stream().map(move |c| {
            let _open = &guard;
            Ok::<_, std::convert::Infallible>(c)
        });
        Some(
            (
                StatusCode::OK,
                [("content-type", "application/stream+json")],
                Body::from_stream(chunks),
            )
                .into_response(),
        )
    }
}

/// A healthy fake without history (`/select/logsql/query` answers nothing)
/// whose tails do `tail`.
pub async fn fake_tailing(tail: Tail) -> super::FakeVl {
    super::FakeVl::builder()
        .answer(super::handler::QUERY, super::Canned::ok(""))
        .answer("/health", super::Canned::ok("OK"))
        .tail(tail)
        .start()
        .await
}
