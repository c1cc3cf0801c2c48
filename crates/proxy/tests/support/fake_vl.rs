//! The fake VictoriaLogs in its canned mode: it answers each path with a
//! canned body (status, delay) and records every request, so a test can
//! assert both lokivl's answer and the exact requests it sent upstream.
//! [`harness`] puts lokivl in front of it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::lokivl::start_proxy;

/// One request VictoriaLogs received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    pub path: String,
    /// Query-string and form-body pairs, in that order.
    pub form: Vec<(String, String)>,
}

impl Recorded {
    /// The single value of `key`; panics when absent or repeated (a test failure).
    pub fn get(&self, key: &str) -> &str {
        let vals: Vec<&str> = self
            .form
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(vals.len(), 1, "parameter {key:?} in {:?}", self.form);
        vals[0]
    }

    /// The last nanosecond VictoriaLogs was asked to select. `end` goes out
    /// exclusive, with an `extra_filters` of `_time:<end` (nine fraction
    /// digits) that makes VictoriaLogs v1.26 read it as v1.51 does.
    pub fn last_ns(&self) -> i64 {
        let end: i64 = self.get("end").parse().expect("end in nanoseconds");
        let fmt = time::macros::format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:9]Z"
        );
        let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(end))
            .expect("end in range")
            .format(&fmt)
            .expect("format end");
        assert_eq!(self.get("extra_filters"), format!("_time:<{at}"));
        end - 1
    }

    /// Whether `key` was sent at all.
    pub fn has(&self, key: &str) -> bool {
        self.form.iter().any(|(k, _)| k == key)
    }
}

/// A canned answer for one VictoriaLogs path.
#[derive(Debug, Clone)]
pub struct Canned {
    pub status: StatusCode,
    pub body: String,
    pub delay: Duration,
}

impl Canned {
    pub fn ok(body: &str) -> Self {
        Self {
            status: StatusCode::OK,
            body: body.to_owned(),
            delay: Duration::ZERO,
        }
    }
}

/// The answer of VictoriaLogs v1.26 to lokivl's time-bucket offset probe
/// (`proxy::backend::dialect::PROBE`): a bucket starting at 1 (mod 3 ns).
pub const PROBE_V126: &str = "{\"_time\":\"1970-01-01T00:00:00.000000001Z\",\"n\":\"1\"}\n";
/// The answer of VictoriaLogs v1.51 to the probe: a bucket starting at 2 (mod 3 ns).
pub const PROBE_V151: &str = "{\"_time\":\"1970-01-01T00:00:00.000000002Z\",\"n\":\"1\"}\n";

#[derive(Clone, Default)]
struct FakeState {
    answers: Arc<HashMap<String, Canned>>,
    probe: Arc<String>,
    log: Arc<Mutex<Vec<Recorded>>>,
    probes: Arc<Mutex<usize>>,
}

/// The fake VictoriaLogs.
pub struct FakeVl {
    pub addr: String,
    log: Arc<Mutex<Vec<Recorded>>>,
    probes: Arc<Mutex<usize>>,
}

impl FakeVl {
    /// Requests received so far, except lokivl's offset probes (see [`FakeVl::probes`]).
    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// How many offset probes lokivl sent; each was answered as the fake's release does.
    pub fn probes(&self) -> usize {
        *self.probes.lock().unwrap()
    }
}

async fn fake_handler(
    State(st): State<FakeState>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let mut form: Vec<(String, String)> = Vec::new();
    if let Some(q) = uri.query() {
        form.extend(form_urlencoded::parse(q.as_bytes()).into_owned());
    }
    form.extend(form_urlencoded::parse(&body).into_owned());
    let path = uri.path().to_owned();
    if path == "/select/logsql/query"
        && form
            .iter()
            .any(|(k, v)| k == "query" && v == proxy::backend::dialect::PROBE)
    {
        *st.probes.lock().unwrap() += 1;
        return (StatusCode::OK, st.probe.to_string()).into_response();
    }
    st.log.lock().unwrap().push(Recorded {
        method,
        path: path.clone(),
        form,
    });
    match st.answers.get(&path) {
        Some(c) => {
            if !c.delay.is_zero() {
                tokio::time::sleep(c.delay).await;
            }
            (c.status, c.body.clone()).into_response()
        }
        None => (
            StatusCode::NOT_FOUND,
            format!("fake VictoriaLogs has no answer for {path}"),
        )
            .into_response(),
    }
}

/// Starts a fake VictoriaLogs answering `answers` (path → canned answer);
/// it answers the offset probe as VictoriaLogs v1.26 does.
pub async fn fake_vl(answers: Vec<(&str, Canned)>) -> FakeVl {
    fake_vl_release(answers, PROBE_V126).await
}

/// [`fake_vl`] answering the offset probe with `probe` ([`PROBE_V126`],
/// [`PROBE_V151`], or `""` for a server without entries).
pub async fn fake_vl_release(answers: Vec<(&str, Canned)>, probe: &str) -> FakeVl {
    let st = FakeState {
        answers: Arc::new(
            answers
                .into_iter()
                .map(|(p, c)| (p.to_owned(), c))
                .collect(),
        ),
        probe: Arc::new(probe.to_owned()),
        log: Arc::default(),
        probes: Arc::default(),
    };
    let (log, probes) = (st.log.clone(), st.probes.clone());
    let app = Router::new().fallback(fake_handler).with_state(st);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    FakeVl { addr, log, probes }
}

/// A fake VictoriaLogs plus lokivl in front of it.
pub struct Harness {
    pub base: String,
    pub vl: FakeVl,
}

pub async fn harness(answers: Vec<(&str, Canned)>) -> Harness {
    harness_release(answers, PROBE_V126).await
}

/// [`harness`] with the fake answering the offset probe with `probe` (see [`fake_vl_release`]).
pub async fn harness_release(answers: Vec<(&str, Canned)>, probe: &str) -> Harness {
    let vl = fake_vl_release(answers, probe).await;
    let settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    let base = start_proxy(settings).await;
    Harness { base, vl }
}

/// [`harness`] for a lokivl with Loki's default label discovery (the
/// binary's defaults; `Settings::new` synthesizes nothing), as Logs
/// Drilldown users run it.
#[allow(dead_code)]
pub async fn harness_discovering(answers: Vec<(&str, Canned)>) -> Harness {
    let vl = fake_vl_release(answers, PROBE_V126).await;
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.discovery = engine::discovery::loki_defaults();
    let base = start_proxy(settings).await;
    Harness { base, vl }
}

/// The nanosecond timestamps every query test uses: 2026-08-22T10:00:00Z and one hour before.
pub const START_NS: i64 = 1_787_389_200_000_000_000;
pub const END_NS: i64 = 1_787_392_800_000_000_000;

/// Serves `app`, a test's own fake VictoriaLogs routes (streaming, per
/// tenant, slow), on a free loopback port; returns `127.0.0.1:port`.
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}
