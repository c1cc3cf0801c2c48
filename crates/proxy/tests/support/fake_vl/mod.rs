//! The one fake VictoriaLogs of the kit. A test builds it with
//! [`FakeVl::builder`] and picks its modes:
//!
//! - canned answers per path ([`Builder::answer`], see [`canned`]), every
//!   request recorded ([`FakeVl::requests`]) and lokivl's time-bucket
//!   offset probe answered as a release does ([`Builder::probe`]);
//! - rows from a dataset that honours `start`, `end` and the row limits
//!   lokivl asks for ([`Builder::rows`], see [`rows`]), per VictoriaLogs
//!   tenant, with a slow tenant or failing queries switched at run time;
//! - a streaming `/select/logsql/tail` ([`Builder::tail`], see [`tail`]):
//!   refusals, lines, floods, an endless line;
//! - raw-TCP faults ([`Builder::fault`], see [`faults`]): hung, slow,
//!   garbage, truncated, killed and restarted on the same port;
//! - HTTPS with the kit's test PKI ([`Builder::tls`], [`Builder::mtls`], see
//!   [`tls`]);
//! - the test's own routes ([`Builder::routes`]) when the answer is what the
//!   test is about (a release's bucketing, a fan-out that gathers calls).
//!
//! [`harness`] puts lokivl in front of a canned fake.

pub mod canned;
pub mod faults;
mod handler;
pub mod rows;
pub mod tail;
pub mod tls;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{Method, StatusCode};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use canned::{
    Canned, END_NS, Harness, PROBE_V126, PROBE_V151, START_NS, fake_vl, fake_vl_release, harness,
    harness_discovering, harness_release,
};
pub use faults::Fault;
pub use rows::Dataset;
pub use tail::Tail;

/// One request VictoriaLogs received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    pub path: String,
    /// Query-string and form-body pairs, in that order.
    pub form: Vec<(String, String)>,
    /// The `AccountID` and `ProjectID` headers (VictoriaLogs' tenant), if sent.
    pub account: Option<String>,
    pub project: Option<String>,
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

    /// The first value of `key`, or `""` when absent.
    pub fn first(&self, key: &str) -> &str {
        self.form
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
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

    /// The VictoriaLogs account, `"0"` when the header is absent (as VictoriaLogs reads it).
    pub fn account_or_default(&self) -> &str {
        self.account.as_deref().unwrap_or("0")
    }
}

/// What every mode shares: the configuration and what the fake saw.
#[derive(Default)]
struct Shared {
    /// Requests received, probes and health checks included.
    requests: AtomicU64,
    answers: HashMap<String, Canned>,
    probe: String,
    probes: AtomicUsize,
    record: bool,
    log: Mutex<Vec<Recorded>>,
    rows: rows::RowsState,
    tails: tail::TailState,
    faults: faults::FaultState,
}

/// How the fake is configured before it starts; see the module doc.
pub struct Builder {
    answers: HashMap<String, Canned>,
    probe: String,
    record: bool,
    rows: Option<(Dataset, bool)>,
    tail: Option<Tail>,
    fault: Option<Fault>,
    tls: Option<Arc<rustls::ServerConfig>>,
    routes: Option<Router>,
}

impl Builder {
    /// Answers `path` with `canned` (any method).
    pub fn answer(mut self, path: &str, canned: Canned) -> Self {
        self.answers.insert(path.to_owned(), canned);
        self
    }

    /// [`Builder::answer`] for each pair.
    pub fn answers(mut self, answers: Vec<(&str, Canned)>) -> Self {
        for (p, c) in answers {
            self.answers.insert(p.to_owned(), c);
        }
        self
    }

    /// The answer to lokivl's offset probe ([`PROBE_V126`], the default;
    /// [`PROBE_V151`]; or `""` for a server without entries).
    pub fn probe(mut self, probe: &str) -> Self {
        probe.clone_into(&mut self.probe);
        self
    }

    /// Whether requests are kept for [`FakeVl::requests`] (on by default;
    /// off for cases that make hundreds of thousands of calls).
    pub fn recording(mut self, on: bool) -> Self {
        self.record = on;
        self
    }

    /// Answers `/select/logsql/query` from `rows` (every tenant without its
    /// own rows), `/health` with OK and the other select endpoints empty.
    pub fn rows(mut self, rows: Dataset) -> Self {
        self.rows = Some((rows, false));
        self
    }

    /// [`Builder::rows`] answered in a scrambled order, as VictoriaLogs may:
    /// lokivl must not rely on its order.
    pub fn rows_scrambled(mut self, rows: Dataset) -> Self {
        self.rows = Some((rows, true));
        self
    }

    /// What `/select/logsql/tail` does.
    pub fn tail(mut self, tail: Tail) -> Self {
        self.tail = Some(tail);
        self
    }

    /// Serves raw TCP with `fault` (switched later with [`FakeVl::set_fault`]).
    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Serves HTTPS with `pki`'s server certificate.
    pub fn tls(mut self, pki: &super::tls::Pki) -> Self {
        self.tls = Some(tls::server_config(pki, false));
        self
    }

    /// [`Builder::tls`], demanding a client certificate signed by `pki`'s CA.
    pub fn mtls(mut self, pki: &super::tls::Pki) -> Self {
        self.tls = Some(tls::server_config(pki, true));
        self
    }

    /// Serves `routes`, the test's own answers, instead of the modes above
    /// (over HTTPS with [`Builder::tls`]).
    pub fn routes(mut self, routes: Router) -> Self {
        self.routes = Some(routes);
        self
    }

    /// Starts the fake on a free loopback port.
    pub async fn start(self) -> FakeVl {
        let shared = Arc::new(Shared {
            answers: self.answers,
            probe: self.probe,
            record: self.record,
            ..Shared::default()
        });
        if let Some((rows, scrambled)) = self.rows {
            shared.rows.set(rows, scrambled);
        }
        if let Some(t) = self.tail {
            shared.tails.set(None, t);
        }
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let server = match self.fault {
            Some(f) => {
                shared.faults.set(f);
                Server::Raw
            }
            None => Server::Http {
                app: self
                    .routes
                    .unwrap_or_else(|| handler::router(Arc::clone(&shared))),
                tls: self.tls,
            },
        };
        let task = Task {
            handle: Mutex::new(None),
            abort_on_drop: matches!(server, Server::Raw),
        };
        let fake = FakeVl {
            url: format!("{scheme}://{addr}"),
            addr,
            shared,
            server,
            task,
        };
        fake.spawn(listener);
        fake
    }
}

enum Server {
    Raw,
    Http {
        app: Router,
        tls: Option<Arc<rustls::ServerConfig>>,
    },
}

/// The fake VictoriaLogs. Dropping it stops a faulty one (its connections
/// close); the others live as long as the test's runtime.
pub struct FakeVl {
    /// `http://127.0.0.1:port` (or `https://`).
    pub url: String,
    /// `127.0.0.1:port`.
    pub addr: String,
    shared: Arc<Shared>,
    server: Server,
    task: Task,
}

impl FakeVl {
    pub fn builder() -> Builder {
        Builder {
            answers: HashMap::new(),
            probe: PROBE_V126.to_owned(),
            record: true,
            rows: None,
            tail: None,
            fault: None,
            tls: None,
            routes: None,
        }
    }

    /// A raw-TCP fake doing `fault`.
    pub async fn faulty(fault: Fault) -> FakeVl {
        Self::builder().fault(fault).start().await
    }

    /// A fake serving the test's own `routes`.
    pub async fn serving(routes: Router) -> FakeVl {
        Self::builder().routes(routes).start().await
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Requests received so far, except lokivl's offset probes (see [`FakeVl::probes`]).
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.log.lock().unwrap().clone()
    }

    /// How many recorded requests match `pred` (without copying them).
    pub fn count(&self, pred: impl Fn(&Recorded) -> bool) -> usize {
        self.shared
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|r| pred(r))
            .count()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        self.shared.log.lock().unwrap().clear();
    }

    /// How many offset probes lokivl sent; each was answered as the fake's release does.
    pub fn probes(&self) -> usize {
        self.shared.probes.load(Ordering::SeqCst)
    }

    /// Every request received, probes and health checks included (counted
    /// in every mode, recording or not).
    pub fn request_count(&self) -> u64 {
        self.shared.requests.load(Ordering::SeqCst)
    }

    /// Rows for VictoriaLogs account `account` (others get the default rows).
    pub fn set_tenant_rows(&self, account: &str, rows: Dataset) {
        self.shared.rows.set_tenant(account, rows);
    }

    /// Replaces the rows every tenant without its own rows gets.
    pub fn set_rows(&self, rows: Dataset) {
        self.shared.rows.set(rows, self.shared.rows.scrambled());
    }

    /// Every call from VictoriaLogs account `account` waits `delay` first.
    pub fn slow_account(&self, account: &str, delay: Duration) {
        self.shared.rows.slow_account(account, delay);
    }

    /// `/select/logsql/query` fails with `status` and `text` from now on.
    pub fn fail_queries(&self, status: StatusCode, text: &str) {
        self.shared.rows.fail_queries(status, text);
    }

    /// Rows sent from `/select/logsql/query` so far.
    pub fn rows_served(&self) -> u64 {
        self.shared.rows.served()
    }

    /// What `/select/logsql/tail` does from now on.
    pub fn set_tail(&self, tail: Tail) {
        self.shared.tails.set(None, tail);
    }

    /// What tails of VictoriaLogs account `account` get instead.
    pub fn set_tail_for(&self, account: &str, tail: Tail) {
        self.shared.tails.set(Some(account), tail);
    }

    /// Calls to `/select/logsql/tail` so far, refused ones included.
    pub fn tail_calls(&self) -> usize {
        self.shared.tails.calls()
    }

    /// Tail streams currently open (lokivl has not closed them).
    pub fn open_tails(&self) -> usize {
        self.shared.tails.open()
    }

    /// What a faulty fake does with the next requests.
    pub fn set_fault(&self, fault: Fault) {
        self.shared.faults.set(fault);
    }

    /// Connections of a faulty fake whose client closed while it was hung on them.
    pub fn closed_while_hung(&self) -> usize {
        self.shared.faults.closed_while_hung()
    }

    /// Closes the listener (and, for a faulty fake, every open connection):
    /// "connection refused" from now on.
    pub fn kill(&self) {
        self.task.abort();
    }

    /// Listens again on the same port.
    pub async fn restart(&self) {
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", self.port())).await {
                Ok(l) => break l,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        self.spawn(listener);
    }

    fn spawn(&self, listener: TcpListener) {
        let task = match &self.server {
            Server::Raw => tokio::spawn(faults::serve(listener, Arc::clone(&self.shared))),
            Server::Http { app, tls: None } => {
                let app = app.clone();
                tokio::spawn(async move {
                    let _ = axum::serve(listener, app).await;
                })
            }
            Server::Http {
                app,
                tls: Some(config),
            } => tokio::spawn(tls::serve(listener, Arc::clone(config), app.clone())),
        };
        *self.task.handle.lock().unwrap() = Some(task);
    }
}

/// The server's task; a faulty fake's is aborted on drop (its connections close).
struct Task {
    handle: Mutex<Option<JoinHandle<()>>>,
    abort_on_drop: bool,
}

impl Task {
    fn abort(&self) {
        if let Some(t) = self.handle.lock().unwrap().take() {
            t.abort();
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if self.abort_on_drop {
            self.abort();
        }
    }
}
