//! Reads VictoriaLogs' tail NDJSON into bounded lines for the session.
//!
//! Two bounds keep a tail's memory fixed whatever VictoriaLogs sends and
//! however slowly the client reads:
//! - one row may be at most `--tail-max-line-bytes` long; a longer one ends
//!   the tail (close code 1011 with [`line_too_long_text`]) instead of being
//!   buffered without end;
//! - at most [`QUEUE_BYTES`] of rows (and [`QUEUE_LINES`] rows) wait for
//!   the session; past that, entries are dropped and reported in
//!   `dropped_entries`, as Loki's tailer does for a slow client.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::sync::mpsc;

use super::frame::{Dropped, MAX_DROPPED_PER_FRAME};

/// Rows waiting for the session before entries are dropped.
pub const QUEUE_LINES: usize = 1024;
/// Bytes of rows waiting for the session before entries are dropped (a row
/// alone always passes, so one row at the line bound still gets through).
pub const QUEUE_BYTES: usize = 8 << 20;

/// What the reader reports to the session.
#[derive(Debug)]
pub enum Event {
    /// One NDJSON row, without its newline.
    Line(Bytes),
    /// The tail cannot go on: this text becomes the close reason.
    Failed(String),
}

/// The close reason when VictoriaLogs sends a row over `limit` bytes.
pub fn line_too_long_text(limit: usize) -> String {
    format!("VictoriaLogs sent a tail entry over {limit} bytes (--tail-max-line-bytes)")
}

/// The reader's side of the queue to the session.
#[derive(Debug)]
pub struct Reader {
    /// Rows before this nanosecond are skipped (they were in the history).
    pub t0: i64,
    /// To the session.
    pub tx: mpsc::Sender<Event>,
    /// Entries dropped since the last frame.
    pub dropped: Arc<Mutex<Vec<Dropped>>>,
    /// Bytes of rows in `tx` (the session subtracts what it takes).
    pub queued: Arc<AtomicUsize>,
    /// `--tail-max-line-bytes`.
    pub max_line: usize,
}

impl Reader {
    /// Reads `body` until it ends, fails, breaks a bound or the session leaves.
    pub async fn run(self, mut body: Incoming) {
        let mut buf = BytesMut::new();
        // `buf[..scanned]` holds no newline: each byte is searched once.
        let mut scanned = 0;
        loop {
            let frame = match body.frame().await {
                Some(Ok(f)) => f,
                Some(Err(e)) => {
                    let text = format!("reading the VictoriaLogs tail failed: {e}");
                    let _ = self.tx.send(Event::Failed(text)).await;
                    return;
                }
                None => {
                    let rest = String::from_utf8_lossy(&buf).trim().to_owned();
                    let text = if rest.is_empty() {
                        "VictoriaLogs ended the tail".to_owned()
                    } else {
                        rest
                    };
                    let _ = self.tx.send(Event::Failed(text)).await;
                    return;
                }
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            buf.extend_from_slice(&data);
            loop {
                let Some(off) = memchr::memchr(b'\n', &buf[scanned..]) else {
                    scanned = buf.len();
                    if buf.len() > self.max_line {
                        return self.too_long().await;
                    }
                    break;
                };
                let pos = scanned + off;
                scanned = 0;
                if pos > self.max_line {
                    return self.too_long().await;
                }
                let line = buf.split_to(pos + 1).freeze().slice(..pos);
                if !self.line(line).await {
                    return;
                }
            }
        }
    }

    async fn too_long(&self) {
        let text = line_too_long_text(self.max_line);
        let _ = self.tx.send(Event::Failed(text)).await;
    }

    /// Handles one row; `false` when the tail must stop.
    async fn line(&self, line: Bytes) -> bool {
        if line.iter().all(u8::is_ascii_whitespace) {
            return true;
        }
        if line.first() != Some(&b'{') {
            // VictoriaLogs writes its error text into the stream once it has started.
            let text = String::from_utf8_lossy(&line).trim().to_owned();
            let _ = self.tx.send(Event::Failed(text)).await;
            return false;
        }
        let Some(head) = Dropped::from_line(&line) else {
            return true;
        };
        if head.ts < self.t0 {
            return true;
        }
        let len = line.len();
        let before = self.queued.fetch_add(len, Ordering::AcqRel);
        let fits = before == 0 || before + len <= QUEUE_BYTES;
        let sent = if fits {
            self.tx.try_send(Event::Line(line))
        } else {
            Err(mpsc::error::TrySendError::Full(Event::Line(line)))
        };
        match sent {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.queued.fetch_sub(len, Ordering::AcqRel);
                let mut d = self.dropped.lock().unwrap_or_else(|p| p.into_inner());
                if d.len() < MAX_DROPPED_PER_FRAME {
                    d.push(head);
                }
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pad: usize) -> Bytes {
        let msg = "x".repeat(pad);
        Bytes::from(format!(
            r#"{{"_time":"2026-01-01T00:00:01Z","_stream":"{{app=\"a\"}}","_msg":"{msg}"}}"#
        ))
    }

    #[tokio::test]
    async fn queued_rows_are_bounded_by_bytes_and_a_lone_row_always_passes() {
        let (tx, mut rx) = mpsc::channel(QUEUE_LINES);
        let r = Reader {
            t0: 0,
            tx,
            dropped: Arc::default(),
            queued: Arc::default(),
            max_line: 16 << 20,
        };
        let big = row(QUEUE_BYTES / 2 + 1);
        assert!(r.line(big.clone()).await);
        assert!(r.line(big.clone()).await);
        assert_eq!(
            r.dropped.lock().unwrap().len(),
            1,
            "over the byte budget: dropped"
        );
        // Taken by the session: the budget is free again.
        let Some(Event::Line(l)) = rx.recv().await else {
            panic!("a row")
        };
        r.queued.fetch_sub(l.len(), Ordering::AcqRel);
        // A row larger than the whole budget passes when nothing waits.
        assert!(r.line(row(QUEUE_BYTES + 1)).await);
        assert!(matches!(rx.try_recv(), Ok(Event::Line(_))));
        assert_eq!(r.dropped.lock().unwrap().len(), 1);
    }
}
