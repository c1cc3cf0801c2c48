//! The rows mode: `/select/logsql/query` answered from a dataset the way
//! VictoriaLogs would: only rows in `[start, end)` (`end` exclusive, as
//! v1.51 reads lokivl's), the newest `limit` for a `limit` argument, the
//! oldest N for a `sort … limit N` or `limit N` pipe; stats queries match
//! nothing. Rows can differ per VictoriaLogs tenant (`AccountID` header),
//! one account can be made slow and queries made to fail, so a test can see
//! which tenant an answer came from.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::Recorded;

pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos() as i64
}

/// RFC 3339 with nanoseconds, as VictoriaLogs writes `_time`.
pub fn rfc3339(ns: i64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ns)).expect("valid time");
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.nanosecond()
    )
}

/// A row generator for [`Dataset::Periodic`].
pub type MakeRow = Arc<dyn Fn(i64) -> String + Send + Sync>;

/// Rows the fake answers `/select/logsql/query` from.
pub enum Dataset {
    /// Fixed rows sorted by time, pre-rendered so answers are slices.
    Static {
        times: Vec<i64>,
        /// End offset (after the newline) of row i in `buf`.
        ends: Vec<usize>,
        buf: Bytes,
    },
    /// A row at every multiple of `period_ns`, rendered on demand; at most
    /// `max_per_call` rows per answer.
    Periodic {
        period_ns: i64,
        make: MakeRow,
        max_per_call: usize,
    },
}

impl Dataset {
    /// No rows at all.
    pub fn empty() -> Dataset {
        Dataset::fixed(Vec::new())
    }

    /// Fixed rows `(time, ndjson row)`, in any order.
    pub fn fixed(mut rows: Vec<(i64, String)>) -> Dataset {
        rows.sort_by_key(|(t, _)| *t);
        let mut buf = Vec::with_capacity(rows.iter().map(|(_, r)| r.len() + 1).sum());
        let mut times = Vec::with_capacity(rows.len());
        let mut ends = Vec::with_capacity(rows.len());
        for (t, r) in rows {
            buf.extend_from_slice(r.as_bytes());
            buf.push(b'\n');
            times.push(t);
            ends.push(buf.len());
        }
        Dataset::Static {
            times,
            ends,
            buf: Bytes::from(buf),
        }
    }

    /// `n` rows spread evenly over `[start, end)`, the i-th made by `make(i, ns)`.
    pub fn spread(n: usize, start: i64, end: i64, make: impl Fn(usize, i64) -> String) -> Dataset {
        let step = (end - start) / n.max(1) as i64;
        Dataset::fixed(
            (0..n)
                .map(|i| {
                    let t = start + i as i64 * step;
                    (t, make(i, t))
                })
                .collect(),
        )
    }

    /// The rows of `call` and how many there are; `scrambled` reorders them
    /// (fixed rows only) so that time order is not VictoriaLogs' order.
    pub fn select(&self, call: &Recorded, scrambled: bool) -> (usize, Bytes) {
        let lo = call.first("start").parse::<i64>().unwrap_or(i64::MIN);
        let hi = call.first("end").parse::<i64>().map_or(i64::MAX, |e| e - 1);
        let newest = call.first("limit").parse::<usize>().ok();
        let oldest = pipe_limit(call.first("query"));
        match self {
            Dataset::Static { times, ends, buf } => {
                let mut a = times.partition_point(|&t| t < lo);
                let mut b = times.partition_point(|&t| t <= hi);
                if a >= b {
                    return (0, Bytes::new());
                }
                if let Some(n) = newest {
                    a = a.max(b.saturating_sub(n));
                }
                if let Some(n) = oldest {
                    b = b.min(a + n);
                }
                if a >= b {
                    return (0, Bytes::new());
                }
                let start_of = |i: usize| if i == 0 { 0 } else { ends[i - 1] };
                if !scrambled {
                    return (b - a, buf.slice(start_of(a)..ends[b - 1]));
                }
                let mut order: Vec<usize> = (a..b).collect();
                order.sort_by_key(|&i| (times[i] / 7) % 5);
                let mut out = Vec::with_capacity(ends[b - 1] - start_of(a));
                for i in order {
                    out.extend_from_slice(&buf[start_of(i)..ends[i]]);
                }
                (b - a, Bytes::from(out))
            }
            Dataset::Periodic {
                period_ns,
                make,
                max_per_call,
            } => {
                let p = *period_ns;
                let lo = lo.max(0);
                let mut first = lo.div_euclid(p) + i64::from(lo.rem_euclid(p) != 0);
                let mut last = hi.div_euclid(p);
                if first > last {
                    return (0, Bytes::new());
                }
                let cap = (*max_per_call).min(newest.unwrap_or(usize::MAX)) as i64;
                if let Some(n) = oldest {
                    last = last.min(first + n.min(*max_per_call) as i64 - 1);
                }
                first = first.max(last - cap + 1);
                let mut out = String::new();
                for k in first..=last {
                    out.push_str(&make(k * p));
                    out.push('\n');
                }
                ((last - first + 1) as usize, Bytes::from(out))
            }
        }
    }
}

/// N of a trailing `limit N` pipe (`| limit N`, `| sort by (_time) limit N`).
fn pipe_limit(query: &str) -> Option<usize> {
    let at = query.rfind("limit ")?;
    let digits: String = query[at + 6..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The rows mode's state; off until rows are set.
#[derive(Default)]
pub(super) struct RowsState {
    default: Mutex<Option<Arc<Dataset>>>,
    by_account: Mutex<HashMap<String, Arc<Dataset>>>,
    scrambled: AtomicBool,
    slow: Mutex<Option<(String, Duration)>>,
    /// `/select/logsql/query` answered with this status and text instead (when set).
    query_error: Mutex<Option<(StatusCode, String)>>,
    served: AtomicU64,
}

impl RowsState {
    pub(super) fn on(&self) -> bool {
        self.default.lock().unwrap().is_some()
    }

    pub(super) fn scrambled(&self) -> bool {
        self.scrambled.load(Ordering::SeqCst)
    }

    pub(super) fn set(&self, rows: Dataset, scrambled: bool) {
        *self.default.lock().unwrap() = Some(Arc::new(rows));
        self.scrambled.store(scrambled, Ordering::SeqCst);
    }

    pub(super) fn set_tenant(&self, account: &str, rows: Dataset) {
        self.by_account
            .lock()
            .unwrap()
            .insert(account.to_owned(), Arc::new(rows));
    }

    pub(super) fn slow_account(&self, account: &str, delay: Duration) {
        *self.slow.lock().unwrap() = Some((account.to_owned(), delay));
    }

    pub(super) fn delay_for(&self, account: &str) -> Option<Duration> {
        match &*self.slow.lock().unwrap() {
            Some((a, d)) if a == account => Some(*d),
            _ => None,
        }
    }

    pub(super) fn fail_queries(&self, status: StatusCode, text: &str) {
        *self.query_error.lock().unwrap() = Some((status, text.to_owned()));
    }

    pub(super) fn served(&self) -> u64 {
        self.served.load(Ordering::SeqCst)
    }

    /// The answer to a `/select/logsql/query` call; `None` when the mode is off.
    pub(super) fn answer(&self, call: &Recorded) -> Option<Response> {
        let default = self.default.lock().unwrap().clone()?;
        if let Some((status, text)) = self.query_error.lock().unwrap().clone() {
            return Some((status, text).into_response());
        }
        if call.first("query").contains("| stats ") {
            // VictoriaLogs computes these; no rows match in the fake.
            return Some((StatusCode::OK, "").into_response());
        }
        let rows = self
            .by_account
            .lock()
            .unwrap()
            .get(call.account_or_default())
            .cloned()
            .unwrap_or(default);
        let (n, bytes) = rows.select(call, self.scrambled());
        self.served.fetch_add(n as u64, Ordering::SeqCst);
        Some(
            (
                StatusCode::OK,
                [("content-type", "application/stream+json")],
                bytes,
            )
                .into_response(),
        )
    }
}
