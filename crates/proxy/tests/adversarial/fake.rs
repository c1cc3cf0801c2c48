//! A fake VictoriaLogs for the adversarial suite: `/health`, row queries
//! answered from a dataset that honours `start`, `end` and the row limits
//! lokivl asks for, empty answers on the other select endpoints, and a
//! `/select/logsql/tail` whose behaviour the case chooses (silent, flooding,
//! or one endless line).
//!
//! Rows can differ per VictoriaLogs tenant (`AccountID` header), and one
//! account can be made slow, so the cache-poisoning and breaker cases can see
//! which tenant an answer came from.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::rows::Dataset;

/// What `/select/logsql/tail` does.
#[derive(Clone)]
pub enum Tail {
    /// 200 and then nothing, connection held open.
    Silent,
    /// First `opening_rows` rows of `opening_line_bytes` each, then `rows`
    /// rows of `line_bytes` every `every`; stamped a day ahead so a tail
    /// started now keeps them (built once per stream, then shared).
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

/// One request the fake received.
#[derive(Debug, Clone)]
pub struct Call {
    pub path: String,
    pub account: String,
    pub form: Vec<(String, String)>,
}

impl Call {
    /// The first value of form field `key`, or `""`.
    pub fn get(&self, key: &str) -> &str {
        self.form
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }
}

struct Shared {
    datasets: Mutex<HashMap<String, Arc<Dataset>>>,
    default: Mutex<Arc<Dataset>>,
    tail: Mutex<Arc<TailPlan>>,
    tail_by_account: Mutex<HashMap<String, Arc<TailPlan>>>,
    slow: Mutex<Option<(String, Duration)>>,
    /// `/select/logsql/query` answered with this status and text instead (when set).
    query_error: Mutex<Option<(StatusCode, String)>>,
    calls: Mutex<Vec<Call>>,
    record: bool,
    requests: AtomicU64,
    rows_served: AtomicU64,
    open_tails: Arc<AtomicUsize>,
    tails_opened: AtomicU64,
}

/// The fake; dropping it stops nothing (the test's runtime ends with the test).
#[derive(Clone)]
pub struct FakeVl {
    pub url: String,
    shared: Arc<Shared>,
}

impl FakeVl {
    /// Starts the fake on a free loopback port, serving `rows` to every tenant.
    pub async fn start(rows: Dataset) -> FakeVl {
        Self::start_with(rows, true).await
    }

    /// Like [`Self::start`]; `record` keeps every call for [`Self::calls`]
    /// (off for cases that make hundreds of thousands of calls).
    pub async fn start_with(rows: Dataset, record: bool) -> FakeVl {
        let shared = Arc::new(Shared {
            datasets: Mutex::default(),
            default: Mutex::new(Arc::new(rows)),
            tail: Mutex::new(Arc::new(TailPlan::new(Tail::Silent))),
            tail_by_account: Mutex::default(),
            slow: Mutex::default(),
            query_error: Mutex::default(),
            calls: Mutex::default(),
            record,
            requests: AtomicU64::new(0),
            rows_served: AtomicU64::new(0),
            open_tails: Arc::default(),
            tails_opened: AtomicU64::new(0),
        });
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake VictoriaLogs");
        let url = format!("http://{}", listener.local_addr().expect("fake addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeVl { url, shared }
    }

    /// Rows for VictoriaLogs account `account` (others get the default rows).
    pub fn set_tenant_rows(&self, account: &str, rows: Dataset) {
        self.shared
            .datasets
            .lock()
            .unwrap()
            .insert(account.to_owned(), Arc::new(rows));
    }

    /// Replaces the rows every tenant without its own rows gets.
    pub fn set_rows(&self, rows: Dataset) {
        *self.shared.default.lock().unwrap() = Arc::new(rows);
    }

    pub fn set_tail(&self, tail: Tail) {
        *self.shared.tail.lock().unwrap() = Arc::new(TailPlan::new(tail));
    }

    /// What tails of VictoriaLogs account `account` get instead.
    pub fn set_tail_for(&self, account: &str, tail: Tail) {
        self.shared
            .tail_by_account
            .lock()
            .unwrap()
            .insert(account.to_owned(), Arc::new(TailPlan::new(tail)));
    }

    /// Every call from VictoriaLogs account `account` waits `delay` first.
    pub fn slow_account(&self, account: &str, delay: Duration) {
        *self.shared.slow.lock().unwrap() = Some((account.to_owned(), delay));
    }

    /// `/select/logsql/query` fails with `status` and `text` from now on.
    pub fn fail_queries(&self, status: StatusCode, text: &str) {
        *self.shared.query_error.lock().unwrap() = Some((status, text.to_owned()));
    }

    /// Requests received (health checks included).
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// Rows sent from `/select/logsql/query` so far.
    pub fn rows_served(&self) -> u64 {
        self.shared.rows_served.load(Ordering::SeqCst)
    }

    /// Tail streams currently open (lokivl has not closed them).
    pub fn open_tails(&self) -> usize {
        self.shared.open_tails.load(Ordering::SeqCst)
    }

    /// Tail streams opened so far.
    pub fn tails_opened(&self) -> u64 {
        self.shared.tails_opened.load(Ordering::SeqCst)
    }

    /// Recorded calls other than `/health`, oldest first.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().unwrap().clone()
    }

    /// How many calls were recorded (without copying them).
    pub fn call_count(&self) -> usize {
        self.shared.calls.lock().unwrap().len()
    }

    /// Forgets the recorded calls.
    pub fn clear_calls(&self) {
        self.shared.calls.lock().unwrap().clear();
    }
}

async fn handle(
    State(st): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    st.requests.fetch_add(1, Ordering::SeqCst);
    let path = uri.path().to_owned();
    if path.ends_with("/health") {
        return (StatusCode::OK, "OK").into_response();
    }
    let mut form: Vec<(String, String)> = Vec::new();
    if let Some(q) = uri.query() {
        form.extend(form_urlencoded::parse(q.as_bytes()).into_owned());
    }
    form.extend(form_urlencoded::parse(&body).into_owned());
    let account = headers
        .get("accountid")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("0")
        .to_owned();
    let call = Call {
        path: path.clone(),
        account: account.clone(),
        form,
    };
    if st.record {
        st.calls.lock().unwrap().push(call.clone());
    }
    let slow = st.slow.lock().unwrap().clone();
    if let Some((a, delay)) = slow
        && a == account
    {
        tokio::time::sleep(delay).await;
    }
    match path.as_str() {
        "/select/logsql/query" => {
            if let Some((status, text)) = st.query_error.lock().unwrap().clone() {
                return (status, text).into_response();
            }
            let rows = st
                .datasets
                .lock()
                .unwrap()
                .get(&account)
                .cloned()
                .unwrap_or_else(|| Arc::clone(&st.default.lock().unwrap()));
            if call.get("query").contains("| stats ") {
                // VictoriaLogs computes these; no rows match in the fake.
                return (StatusCode::OK, "").into_response();
            }
            let (n, bytes) = rows.select(&call);
            st.rows_served.fetch_add(n as u64, Ordering::SeqCst);
            (
                StatusCode::OK,
                [("content-type", "application/stream+json")],
                bytes,
            )
                .into_response()
        }
        "/select/logsql/tail" => tail(&st, call),
        "/select/logsql/hits" => json(r#"{"hits":[]}"#),
        "/select/logsql/stats_query_range" => {
            json(r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#)
        }
        "/select/logsql/stats_query" => {
            json(r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#)
        }
        _ => json(r#"{"values":[]}"#),
    }
}

fn json(body: &'static str) -> Response {
    (StatusCode::OK, [("content-type", "application/json")], body).into_response()
}

/// Counts an open tail stream until the stream is dropped (lokivl closed it).
struct OpenTail(Arc<AtomicUsize>);

impl Drop for OpenTail {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A [`Tail`] with its bytes built once, so the fake can send hundreds of
/// MiB to hundreds of tails without spending the test's CPU on it.
struct TailPlan {
    mode: Tail,
    /// Sent first.
    opening: Bytes,
    /// Sent every `every` after that.
    filler: Bytes,
}

impl TailPlan {
    fn new(mode: Tail) -> TailPlan {
        let ahead = super::rows::now_ns() + 86_400_000_000_000;
        let rows_of = |n: usize, bytes: usize| {
            let pad = "x".repeat(bytes);
            let mut out = String::with_capacity(n * (bytes + 120));
            for i in 0..n {
                out.push_str(&format!(
                    r#"{{"_time":"{}","_stream_id":"s","_stream":"{{app=\"api\"}}","_msg":"{pad}","app":"api"}}"#,
                    super::rows::rfc3339(ahead + i as i64)
                ));
                out.push('\n');
            }
            Bytes::from(out)
        };
        let (opening, filler) = match &mode {
            Tail::EndlessLine { chunk_bytes, .. } => (
                Bytes::from_static(
                    br#"{"_time":"2026-08-22T09:30:00Z","_stream_id":"s1","_stream":"{app=\"api\"}","_msg":""#,
                ),
                Bytes::from("y".repeat(*chunk_bytes)),
            ),
            Tail::Flood {
                opening_rows,
                opening_line_bytes,
                rows,
                line_bytes,
                ..
            } => (
                rows_of(*opening_rows, *opening_line_bytes),
                rows_of(*rows, *line_bytes),
            ),
            Tail::Silent => (Bytes::new(), Bytes::new()),
        };
        TailPlan {
            mode,
            opening,
            filler,
        }
    }
}

fn tail(st: &Shared, call: Call) -> Response {
    st.tails_opened.fetch_add(1, Ordering::SeqCst);
    st.open_tails.fetch_add(1, Ordering::SeqCst);
    let guard = OpenTail(Arc::clone(&st.open_tails));
    let plan = st
        .tail_by_account
        .lock()
        .unwrap()
        .get(&call.account)
        .cloned()
        .unwrap_or_else(|| Arc::clone(&st.tail.lock().unwrap()));
    let stream =
        futures_util::stream::unfold((guard, plan, true), |(guard, plan, first)| async move {
            if first {
                let chunk = plan.opening.clone();
                return Some((
                    Ok::<_, std::convert::Infallible>(chunk),
                    (guard, plan, false),
                ));
            }
            match &plan.mode {
                Tail::Silent => std::future::pending::<()>().await,
                Tail::Flood { every, .. } | Tail::EndlessLine { every, .. } => {
                    tokio::time::sleep(*every).await;
                }
            }
            let chunk = plan.filler.clone();
            Some((
                Ok::<_, std::convert::Infallible>(chunk),
                (guard, plan, false),
            ))
        });
    (
        StatusCode::OK,
        [("content-type", "application/stream+json")],
        Body::from_stream(stream),
    )
        .into_response()
}
