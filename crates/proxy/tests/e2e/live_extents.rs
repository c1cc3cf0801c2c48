//! Cache extents of live windows, against a real VictoriaLogs: a dashboard
//! over "the last 3 hours" that refreshes asks VictoriaLogs for the fresh
//! tail only (the steps newer than `--cache-freshness`), and still answers
//! exactly what an unsplit lokivl without a cache answers, new lines
//! included.
//!
//! A forwarder in front of VictoriaLogs logs every request lokivl sends, in
//! order and repeats included; each request's `start`/`end` say which logs
//! it read.
//!
//! Needs a real VictoriaLogs (`LOKIVL_VL_BIN`); skipped with one line otherwise.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use crate::support::backend::VictoriaLogs;
use crate::support::client::{self, url};
use serde_json::{Value, json};

const SEC: i64 = 1_000_000_000;
const MIN: i64 = 60 * SEC;
const HOUR: i64 = 60 * MIN;
/// lokivl's default `--cache-freshness` (Loki's `max_cache_freshness_per_query`).
const FRESHNESS: i64 = 10 * MIN;

fn now_ns() -> i64 {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(d.as_nanos()).expect("time fits i64")
}

/// Two streams with a line every 10 s from `from` to `to`.
fn push_body(from: i64, to: i64) -> String {
    let streams: Vec<Value> = ["api", "web"]
        .iter()
        .enumerate()
        .map(|(k, app)| {
            let mut values = Vec::new();
            let mut t = from + k as i64 * 3 * SEC + 17;
            let mut i = 0;
            while t < to {
                values.push(json!([
                    t.to_string(),
                    format!("{app} request {i} status=200")
                ]));
                t += 10 * SEC;
                i += 1;
            }
            json!({"stream": {"env": "e2e", "app": app}, "values": values})
        })
        .collect();
    json!({ "streams": streams }).to_string()
}

/// The answer of a metric `query_range` up to its `"stats"`.
async fn ask(base: &str, query: &str, start: i64, end: i64, step: &str) -> String {
    let (s, e) = (start.to_string(), end.to_string());
    ask_with(
        base,
        &[("query", query), ("start", &s), ("end", &e), ("step", step)],
    )
    .await
}

/// The answer of a log `query_range` up to its `"stats"`.
async fn ask_log(base: &str, query: &str, range: (i64, i64), limit: &str, dir: &str) -> String {
    let (s, e) = (range.0.to_string(), range.1.to_string());
    let params = [
        ("query", query),
        ("start", &s),
        ("end", &e),
        ("limit", limit),
        ("direction", dir),
    ];
    ask_with(base, &params).await
}

async fn ask_with(base: &str, params: &[(&str, &str)]) -> String {
    let a = client::try_get(&url(base, "/loki/api/v1/query_range", params), &[])
        .await
        .expect("lokivl answers");
    assert_eq!(a.status, 200, "{}", a.body);
    a.body
        .split(",\"stats\":")
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// One request lokivl sent: its path and parameters, and the `start`/`end` it read.
type Span = (String, i64, i64);

/// A loopback forwarder to VictoriaLogs that logs every request.
struct Log {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
}

#[derive(Clone)]
struct Upstream {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
}

/// The form of a request (query string and body) and its `start`/`end`.
fn form_of(uri: &Uri, body: &[u8]) -> (String, Option<i64>, Option<i64>) {
    let mut params: Vec<(String, String)> = Vec::new();
    if let Some(q) = uri.query() {
        params.extend(form_urlencoded::parse(q.as_bytes()).into_owned());
    }
    params.extend(form_urlencoded::parse(body).into_owned());
    let find = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse::<i64>().ok())
    };
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (k, v) in &params {
        form.append_pair(k, v);
    }
    (form.finish(), find("start"), find("end"))
}

async fn forward(State(up): State<Upstream>, uri: Uri, body: Bytes) -> Response {
    let (form, start, end) = form_of(&uri, &body);
    if let (Some(start), Some(end)) = (start, end) {
        let what = format!("{} {form}", uri.path());
        up.spans.lock().expect("log").push((what, start, end));
    }
    let url = format!("{}{}", up.url, uri.path());
    match client::try_post(&url, "application/x-www-form-urlencoded", form.into_bytes()).await {
        Ok(a) => {
            let ct = a.content_type().to_owned();
            let status = StatusCode::from_u16(a.status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
            (status, [(axum::http::header::CONTENT_TYPE, ct)], a.body).into_response()
        }
        Err(e) => (StatusCode::BAD_GATEWAY, e).into_response(),
    }
}

impl Log {
    async fn start(upstream: &str) -> Log {
        let spans = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new().fallback(forward).with_state(Upstream {
            url: upstream.to_owned(),
            spans: Arc::clone(&spans),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Log { url, spans }
    }

    /// Requests logged so far.
    fn len(&self) -> usize {
        self.spans.lock().expect("log").len()
    }

    /// Requests logged after the first `n`.
    fn since(&self, n: usize) -> Vec<Span> {
        self.spans.lock().expect("log")[n..].to_vec()
    }
}

/// What both dashboards need: a real VictoriaLogs holding 3 h 10 min of
/// logs up to now, the request log in front of it, a caching lokivl behind
/// the log and an unsplit, cache-off lokivl for the expected answers. Both
/// refreshes of a test fall in one minute (a `start` that crossed a minute
/// would read the clipped first window again, as it should), so it waits out
/// the end of a minute first. `None` (after one `skipped:` line) without a
/// VictoriaLogs binary.
struct Dashboard {
    vl: VictoriaLogs,
    log: Log,
    split: String,
    whole: String,
}

async fn dashboard() -> Option<Dashboard> {
    let Some(bin) = std::env::var_os("LOKIVL_VL_BIN").map(std::path::PathBuf::from) else {
        eprintln!("skipped: LOKIVL_VL_BIN is not set (a VictoriaLogs binary)");
        return None;
    };
    let vl = VictoriaLogs::start(&bin).await;
    if now_ns().rem_euclid(MIN) > 40 * SEC {
        tokio::time::sleep(Duration::from_nanos(
            (MIN - now_ns().rem_euclid(MIN) + SEC) as u64,
        ))
        .await;
    }
    let t0 = now_ns();
    vl.ingest(push_body(t0 - 3 * HOUR - 10 * MIN, t0 - SEC))
        .await;
    let log = Log::start(&vl.url).await;
    let split = support::start_lokivl(&log.url).await;
    let whole = support::start_lokivl_with(&vl.url, |c| c.cache.max_bytes = 0).await;
    Some(Dashboard {
        vl,
        log,
        split,
        whole,
    })
}

/// What differs between two log answers cut by [`ask_log`], short enough
/// for a CI log: the entries only one side has (at most 10 each), the
/// streams' entry counts, and the spans and limits of the requests lokivl
/// sent, in order.
fn difference(split: &str, whole: &str, log: &Log) -> String {
    fn entries(answer: &str) -> (Vec<(String, String, String)>, Vec<String>) {
        let v: Value = serde_json::from_str(&format!("{answer}}}}}")).unwrap_or(Value::Null);
        let mut all = Vec::new();
        let mut counts = Vec::new();
        for s in v["data"]["result"].as_array().into_iter().flatten() {
            let labels = s["stream"].to_string();
            let values = s["values"].as_array().cloned().unwrap_or_default();
            counts.push(format!("{labels}: {}", values.len()));
            for e in values {
                all.push((labels.clone(), e[0].to_string(), e[1].to_string()));
            }
        }
        (all, counts)
    }
    let ((a, ca), (b, cb)) = (entries(split), entries(whole));
    let only = |x: &[(String, String, String)], y: &[(String, String, String)]| {
        x.iter()
            .filter(|e| !y.contains(e))
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
    };
    format!(
        "split streams {ca:?}, whole streams {cb:?}; only in split {:?}; only in whole {:?}; \
         split head {}; whole head {}; requests {:?}",
        only(&a, &b),
        only(&b, &a),
        &split[..split.len().min(200)],
        &whole[..whole.len().min(200)],
        log.since(0)
            .iter()
            .map(|(what, s, e)| {
                let limit = what.rsplit("limit=").next().unwrap_or("");
                format!("{s}..{e} limit {limit}")
            })
            .collect::<Vec<_>>()
    )
}

fn seconds(spans: &[Span]) -> i64 {
    spans.iter().map(|(_, s, e)| (e - s) / SEC).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refreshing_metric_dashboard_asks_only_for_the_fresh_tail() {
    let Some(Dashboard {
        vl,
        log,
        split,
        whole,
    }) = dashboard().await
    else {
        return;
    };
    let query = r#"sum by (app) (count_over_time({app=~"api|web|late"}[1m]))"#;

    // First refresh: everything is read once.
    let end1 = now_ns();
    let first = ask(&split, query, end1 - 3 * HOUR, end1, "60").await;
    assert_eq!(first, ask(&whole, query, end1 - 3 * HOUR, end1, "60").await);
    let spans1 = log.since(0);
    let read1 = seconds(&spans1);
    assert!(
        read1 >= 3 * 3600,
        "first refresh read {read1} s: {spans1:?}"
    );
    assert!(!first.contains(r#""app":"late""#), "{first}");

    // A line arrives, and the dashboard refreshes a few seconds later.
    let before = log.len();
    vl.push_lines("late", &[(now_ns() - SEC, "late request".to_owned())])
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let end2 = now_ns();
    let second = ask(&split, query, end2 - 3 * HOUR, end2, "60").await;
    assert_eq!(
        second,
        ask(&whole, query, end2 - 3 * HOUR, end2, "60").await,
        "a refresh served from extents equals the unsplit answer"
    );
    assert!(
        second.contains(r#""app":"late""#),
        "the new line is counted: {second}"
    );
    let spans2 = log.since(before);
    assert!(!spans2.is_empty(), "the fresh tail is asked again");
    // Only logs newer than the freshness bound of the first refresh (less
    // one step and one range of reach) are read again.
    let oldest = spans2.iter().map(|(_, s, _)| *s).min().unwrap_or(0);
    assert!(
        oldest >= end1 - FRESHNESS - 3 * MIN,
        "second refresh read from {} s before its end: {spans2:?}",
        (end2 - oldest) / SEC
    );
    let read2 = seconds(&spans2);
    assert!(
        read2 <= (FRESHNESS + 3 * MIN) / SEC,
        "second refresh read {read2} s, first {read1} s: {spans2:?}"
    );
    eprintln!("requested seconds of logs: first refresh {read1}, second {read2}");
}

/// Log queries over the last 3 hours, asked by a dashboard that refreshes:
/// the second refresh reads only the fresh piece of the live window (and the
/// oldest window, clipped by a `start` that moved), and every answer is
/// the unsplit one for the same range, the new line included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refreshing_log_dashboard_asks_only_for_the_fresh_piece() {
    let Some(Dashboard {
        vl,
        log,
        split,
        whole,
    }) = dashboard().await
    else {
        return;
    };
    let query = r#"{app=~"api|web|late"}"#;
    let asks = [
        ("100", "backward"),
        ("5000", "backward"),
        ("100", "forward"),
    ];

    let end1 = now_ns();
    let range1 = (end1 - 3 * HOUR, end1);
    for (limit, dir) in asks {
        let a = ask_log(&split, query, range1, limit, dir).await;
        let w = ask_log(&whole, query, range1, limit, dir).await;
        assert!(a == w, "{limit} {dir}: {}", difference(&a, &w, &log));
        assert!(!a.contains("late request"));
    }
    let read1 = seconds(&log.since(0));

    let before = log.len();
    vl.push_lines("late", &[(now_ns() - SEC, "late request".to_owned())])
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let end2 = now_ns();
    let range2 = (end2 - 3 * HOUR, end2);
    for (limit, dir) in asks {
        let a = ask_log(&split, query, range2, limit, dir).await;
        let w = ask_log(&whole, query, range2, limit, dir).await;
        assert!(
            a == w,
            "{limit} {dir}: a refresh with cut windows equals the unsplit answer \
             (ranges {range1:?}, {range2:?}): {}",
            difference(&a, &w, &log)
        );
        if dir == "backward" {
            assert!(a.contains("late request"), "the new line is returned");
        }
    }
    let spans2 = log.since(before);
    // The oldest window, clipped by the moved `start`, ends at the first
    // interval boundary after it; everything else read is fresh.
    let first_boundary = (range2.0 / HOUR + 1) * HOUR;
    let (oldest, fresh): (Vec<_>, Vec<_>) = spans2
        .iter()
        .cloned()
        .partition(|(_, _, e)| *e <= first_boundary);
    assert!(!fresh.is_empty(), "the fresh piece is asked again");
    // Each query reads at most the freshness bound plus a minute, from the
    // first refresh's fresh mark on.
    for (k, s, e) in &fresh {
        assert!(
            *s >= end1 - FRESHNESS - 2 * MIN && e - s <= FRESHNESS + 2 * MIN,
            "read {} s, from {} s before the end: {k}",
            (e - s) / SEC,
            (end2 - s) / SEC
        );
    }
    let (read2, clipped) = (seconds(&fresh), seconds(&oldest));
    eprintln!(
        "log refreshes ({} queries): first read {read1} s of logs, second {read2} s fresh \
         + {clipped} s of the clipped oldest window",
        asks.len()
    );
}
