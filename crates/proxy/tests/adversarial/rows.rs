//! VictoriaLogs NDJSON rows for the fake, and datasets that answer a query
//! the way VictoriaLogs would: only rows in `[start, end]`, the newest
//! `limit` for a `limit` argument, the oldest N for a `sort … limit N` or
//! `limit N` pipe.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;

use super::fake::Call;

/// 2026-08-22T09:00:00Z, the start of the hour most cases query.
pub const HOUR_START_NS: i64 = 1_787_389_200_000_000_000;
/// One hour later.
pub const HOUR_END_NS: i64 = HOUR_START_NS + 3_600_000_000_000;

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

/// One NDJSON row of stream `{app="<app>"}` with message `msg` and extra
/// top-level fields (structured metadata to lokivl).
pub fn row(ns: i64, app: &str, msg: &str, extra: &[(&str, &str)]) -> String {
    let mut obj = serde_json::Map::new();
    obj.insert("_time".into(), rfc3339(ns).into());
    obj.insert("_stream_id".into(), format!("id-{app}").into());
    obj.insert("_stream".into(), format!("{{app=\"{app}\"}}").into());
    obj.insert("_msg".into(), msg.into());
    obj.insert("app".into(), app.into());
    for (k, v) in extra {
        obj.insert((*k).into(), (*v).into());
    }
    serde_json::Value::Object(obj).to_string()
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

    /// The rows of `call` and how many there are.
    pub fn select(&self, call: &Call) -> (usize, Bytes) {
        let lo = call.get("start").parse::<i64>().unwrap_or(i64::MIN);
        let hi = call.get("end").parse::<i64>().unwrap_or(i64::MAX);
        let newest = call.get("limit").parse::<usize>().ok();
        let oldest = pipe_limit(call.get("query"));
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
                let from = if a == 0 { 0 } else { ends[a - 1] };
                (b - a, buf.slice(from..ends[b - 1]))
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
