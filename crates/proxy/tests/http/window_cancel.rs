//! Window fills end with their requests: when the client of a split
//! `query_range` leaves, its windows' VictoriaLogs calls are cancelled and no
//! further window starts, with or without the cache; a window fill that
//! another request still waits for goes on and is stored.
//!
//! The fake VictoriaLogs holds every call until released and counts the calls
//! whose connection lokivl dropped before the answer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::client::get;
use crate::support::client::qs;
use crate::support::fake_vl::START_NS;
use crate::support::lokivl::start_proxy;
use axum::Router;
use axum::extract::{Form, State};

const HOUR: i64 = 3_600_000_000_000;
const BOUND: Duration = Duration::from_secs(10);

#[derive(Clone)]
struct Vl {
    /// `(path, start)` of every call.
    calls: Arc<Mutex<Vec<(String, i64)>>>,
    cancelled: Arc<AtomicUsize>,
    release: tokio::sync::watch::Sender<bool>,
}

impl Vl {
    fn calls(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

/// Counts the call as cancelled unless it answered.
struct Held(Option<Arc<AtomicUsize>>);

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.fetch_add(1, Ordering::SeqCst);
        }
    }
}

async fn answer(
    State(vl): State<Vl>,
    uri: axum::http::Uri,
    Form(form): Form<Vec<(String, String)>>,
) -> String {
    // lokivl's time-bucket offset probe is answered at once, as v1.51 does:
    // it is not a window.
    if form
        .iter()
        .any(|(k, v)| k == "query" && v == proxy::backend::dialect::PROBE)
    {
        return crate::support::fake_vl::PROBE_V151.to_owned();
    }
    let start: i64 = form
        .iter()
        .find(|(k, _)| k == "start")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    vl.calls
        .lock()
        .unwrap()
        .push((uri.path().to_owned(), start));
    let mut held = Held(Some(Arc::clone(&vl.cancelled)));
    let _ = vl.release.subscribe().wait_for(|r| *r).await;
    held.0 = None;
    if uri.path() != "/select/logsql/query" {
        return r#"{"values":[]}"#.to_owned();
    }
    // One entry a minute into the window.
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(start + 60_000_000_000))
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    format!(
        "{{\"_time\":\"{t}\",\"_stream_id\":\"s\",\"_stream\":\"{{app=\\\"api\\\"}}\",\"_msg\":\"from {start}\",\"app\":\"api\"}}\n"
    )
}

async fn fake_vl() -> (Vl, String) {
    let vl = Vl {
        calls: Arc::default(),
        cancelled: Arc::default(),
        release: tokio::sync::watch::Sender::new(false),
    };
    let app = Router::new()
        .route("/select/logsql/{*rest}", axum::routing::post(answer))
        .with_state(vl.clone());
    let addr = crate::support::fake_vl::FakeVl::serving(app).await.addr;
    (vl, addr)
}

async fn proxy(addr: &str, cache: bool) -> String {
    let mut s = proxy::config::Settings::new(&format!("http://{addr}")).unwrap();
    s.cache.max_bytes = if cache { 64 << 20 } else { 0 };
    s.cache.windows.interval = Duration::from_secs(3600);
    s.cache.windows.parallelism = 2;
    start_proxy(s).await
}

fn log_url(base: &str, hours: i64, extra: &[(&str, &str)]) -> String {
    let mut pairs = vec![
        ("query", r#"{app="api"}"#.to_owned()),
        ("start", START_NS.to_string()),
        ("end", (START_NS + hours * HOUR).to_string()),
        ("direction", "forward".to_owned()),
    ];
    pairs.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    format!("{base}/loki/api/v1/query_range?{}", qs(&pairs))
}

/// Waits (up to [`BOUND`]) until `f` holds.
async fn until(what: &str, f: impl Fn() -> bool) {
    let began = Instant::now();
    while !f() {
        assert!(began.elapsed() < BOUND, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Starts a request and drops its client once `calls` VictoriaLogs calls are held.
async fn leave_after(vl: &Vl, url: String, calls: usize) {
    let client = tokio::spawn(async move { get(&url).await });
    until("the first windows are asked", || vl.calls() >= calls).await;
    client.abort();
    let _ = client.await;
}

async fn client_leaving_cancels_its_windows(cache: bool, url: impl Fn(&str) -> String) {
    let (vl, addr) = fake_vl().await;
    let base = proxy(&addr, cache).await;
    // Four hourly windows, two at a time: the client leaves while both are held.
    leave_after(&vl, url(&base), 2).await;
    until("both window calls are cancelled", || {
        vl.cancelled.load(Ordering::SeqCst) == 2
    })
    .await;
    // Released now, nothing would answer them; no later window was started.
    vl.release.send_replace(true);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(vl.calls(), 2, "{:?}", vl.calls.lock().unwrap());
}

#[tokio::test]
async fn a_log_range_stops_when_its_client_leaves() {
    client_leaving_cancels_its_windows(true, |b| log_url(b, 4, &[])).await;
}

/// Without a cache the range runs unsplit: its one call is cancelled.
#[tokio::test]
async fn a_log_range_stops_when_its_client_leaves_without_a_cache() {
    let (vl, addr) = fake_vl().await;
    let base = proxy(&addr, false).await;
    leave_after(&vl, log_url(&base, 4, &[]), 1).await;
    until("the call is cancelled", || {
        vl.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
    vl.release.send_replace(true);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let calls = vl.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].1, START_NS, "the whole range, unsplit");
}

#[tokio::test]
async fn a_metric_range_stops_when_its_client_leaves() {
    client_leaving_cancels_its_windows(true, |b| {
        format!(
            "{b}/loki/api/v1/query_range?{}",
            qs(&[
                ("query", r#"sum(count_over_time({app="api"}[1m]))"#),
                ("start", &START_NS.to_string()),
                ("end", &(START_NS + 4 * HOUR).to_string()),
                ("step", "60"),
            ])
        )
    })
    .await;
}

#[tokio::test]
async fn a_window_another_request_waits_for_is_finished_and_kept() {
    let (vl, addr) = fake_vl().await;
    let base = proxy(&addr, true).await;
    // A asks two windows and leaves; B asks the same windows (another
    // whole-request key: `step` does not change a log query's windows).
    let url_a = log_url(&base, 2, &[]);
    let url_b = log_url(&base, 2, &[("step", "1")]);
    let a = tokio::spawn(async move { get(&url_a).await });
    until("A's windows are asked", || vl.calls() == 2).await;
    let b = tokio::spawn(async move { get(&url_b).await });
    // B joins A's two fills (no call of its own) before A's client leaves.
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.abort();
    let _ = a.await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(vl.cancelled.load(Ordering::SeqCst), 0);
    vl.release.send_replace(true);
    let b = b.await.unwrap();
    assert_eq!(b.status, 200, "{}", b.body);
    let v = b.json();
    let lines: Vec<&str> = v["data"]["result"][0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[1].as_str().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            format!("from {START_NS}"),
            format!("from {}", START_NS + HOUR)
        ]
    );
    assert_eq!(vl.calls(), 2);
    // Both windows were stored: a third shape of the request is answered without a call.
    let c = get(&log_url(&base, 2, &[("step", "2")])).await;
    assert_eq!(c.status, 200, "{}", c.body);
    assert_eq!(c.json()["data"]["result"], v["data"]["result"]);
    assert_eq!(vl.calls(), 2);
}
