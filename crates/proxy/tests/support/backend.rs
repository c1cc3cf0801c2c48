//! The VictoriaLogs side of the end-to-end checks: a real instance (one
//! node, or with `LOKIVL_VL_CLUSTER=1` a cluster of two storage nodes and a
//! `-storageNode` front) with a recorder in front of it, or a replay server
//! that answers from golden files.
//!
//! Both sit on loopback between lokivl and VictoriaLogs. The recorder keys each
//! exchange by path and normalised form parameters, so the replay server can
//! answer the same request with the same bytes on a machine without
//! VictoriaLogs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::client;

/// One recorded VictoriaLogs exchange.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Exchange {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

/// The golden file: request key → exchange, sorted for stable diffs.
pub type Golden = BTreeMap<String, Exchange>;

/// The VictoriaLogs release lines the goldens are recorded from. Every
/// replay checks lokivl against each, since their LogsQL differs in
/// meaning (see `proxy::backend::dialect`); a missing recording fails.
pub const VL_RELEASES: [&str; 2] = ["v1.26", "v1.51"];

/// Where the goldens recorded from VictoriaLogs `release` live.
pub fn golden_root(release: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("victorialogs-{release}"))
}

/// Where the end-to-end suite's VictoriaLogs responses from `release` live.
pub fn golden_path(release: &str) -> PathBuf {
    golden_root(release).join("e2e/victorialogs.json")
}

/// The release line (`v1.51`) of the VictoriaLogs binary `bin`, which names
/// the golden directory a recording goes to: `LOKIVL_VL_RELEASE` if set,
/// else the version the binary prints. Panics when neither names one (a
/// binary built without version information): a recording must not go to
/// another release's directory.
pub fn release_of(bin: &Path) -> String {
    if let Ok(r) = std::env::var("LOKIVL_VL_RELEASE") {
        return r;
    }
    let out = Command::new(bin)
        .arg("-version")
        .output()
        .expect("run victoria-logs -version");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    release_in(&text).unwrap_or_else(|| {
        panic!(
            "{} prints no version ({text:?}); set LOKIVL_VL_RELEASE (e.g. v1.26) to record its goldens",
            bin.display()
        )
    })
}

/// `vMAJOR.MINOR` of the first `vMAJOR.MINOR.PATCH` in `text`.
fn release_in(text: &str) -> Option<String> {
    text.match_indices('v').find_map(|(i, _)| {
        let mut parts = text[i + 1..].splitn(3, '.');
        let major = parts.next()?;
        let minor = parts.next()?;
        let patch = parts.next()?;
        let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let patch_ok = patch.bytes().next().is_some_and(|b| b.is_ascii_digit());
        (num(major) && num(minor) && patch_ok).then(|| format!("v{major}.{minor}"))
    })
}

/// Path plus sorted form parameters (from the query string and a form body).
pub fn request_key(uri: &Uri, body: &[u8]) -> String {
    let mut params: Vec<(String, String)> = Vec::new();
    if let Some(q) = uri.query() {
        params.extend(form_urlencoded::parse(q.as_bytes()).into_owned());
    }
    params.extend(form_urlencoded::parse(body).into_owned());
    params.sort();
    let mut ser = form_urlencoded::Serializer::new(String::new());
    for (k, v) in &params {
        ser.append_pair(k, v);
    }
    format!("{} {}", uri.path(), ser.finish())
}

/// Finds the VictoriaLogs binary: `LOKIVL_VL_BIN`, else `victoria-logs` on PATH.
pub fn find_vl_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LOKIVL_VL_BIN") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("victoria-logs"))
            .find(|p| p.is_file())
    })
}

/// Whether [`VictoriaLogs::start`] starts a cluster (`LOKIVL_VL_CLUSTER=1`)
/// instead of a single node.
pub fn cluster_mode() -> bool {
    std::env::var("LOKIVL_VL_CLUSTER").is_ok_and(|v| v == "1")
}

/// One VictoriaLogs process, killed on drop with its data directory removed
/// (a cluster front stores nothing, so it has none).
struct Node {
    child: Child,
    url: String,
    data_dir: Option<PathBuf>,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.data_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Node {
    /// Starts `bin` on a free loopback port with `flags`, storing under a
    /// fresh data directory when `stores`.
    fn spawn(bin: &Path, stores: bool, flags: &[String]) -> Node {
        let port = free_port();
        let data_dir = stores.then(|| {
            let dir =
                std::env::temp_dir().join(format!("lokivl-e2e-{}-{port}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            dir
        });
        let mut cmd = Command::new(bin);
        cmd.arg(format!("-httpListenAddr=127.0.0.1:{port}"));
        if let Some(dir) = &data_dir {
            cmd.arg(format!("-storageDataPath={}", dir.display()));
        }
        let child = cmd
            .arg("-retentionPeriod=100y")
            .arg("-loggerLevel=ERROR")
            .args(flags)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start VictoriaLogs");
        Node {
            child,
            url: format!("http://127.0.0.1:{port}"),
            data_dir,
        }
    }

    /// Waits until the node answers `/health` with 200.
    async fn wait_healthy(&self) {
        let health = format!("{}/health", self.url);
        for _ in 0..200 {
            if let Ok(a) = client::get_within(&health, &[], Duration::from_secs(1)).await
                && a.status == 200
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("VictoriaLogs did not become healthy at {}", self.url);
    }
}

/// A real VictoriaLogs on loopback: one node, or with `LOKIVL_VL_CLUSTER=1`
/// a cluster started from the same binary (two storage nodes and one
/// `-storageNode` front serving select and insert). `url` is the address
/// lokivl is pointed at: the single node, or the front. Everything is killed
/// and the data directories removed on drop.
pub struct VictoriaLogs {
    pub url: String,
    /// The front first, so it stops before the storage nodes it writes to.
    nodes: Vec<Node>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl VictoriaLogs {
    /// Starts VictoriaLogs (a cluster with `LOKIVL_VL_CLUSTER=1`) with fresh
    /// data directories and waits until it is healthy.
    pub async fn start(bin: &Path) -> VictoriaLogs {
        Self::start_with(bin, &[]).await
    }

    /// [`VictoriaLogs::start`] with extra command-line `flags` (given to
    /// every node of a cluster: the binary accepts all of them in each role).
    pub async fn start_with(bin: &Path, flags: &[&str]) -> VictoriaLogs {
        if cluster_mode() {
            return Self::start_cluster(bin, flags, &[]).await;
        }
        let flags: Vec<String> = flags.iter().map(|f| (*f).to_owned()).collect();
        let node = Node::spawn(bin, true, &flags);
        node.wait_healthy().await;
        VictoriaLogs {
            url: node.url.clone(),
            nodes: vec![node],
        }
    }

    /// A cluster on loopback, whatever `LOKIVL_VL_CLUSTER` says: two storage
    /// nodes (each its own data directory) and a front started with
    /// `-storageNode=<both>` plus `front_flags` (`-insert.disable` makes it a
    /// pure vlselect), `flags` going to all three. Returns once all three are
    /// healthy and the front answers a query through both storage nodes.
    pub async fn start_cluster(bin: &Path, flags: &[&str], front_flags: &[&str]) -> VictoriaLogs {
        let flags: Vec<String> = flags.iter().map(|f| (*f).to_owned()).collect();
        let storage = [
            Node::spawn(bin, true, &flags),
            Node::spawn(bin, true, &flags),
        ];
        let addrs: Vec<&str> = storage
            .iter()
            .map(|n| n.url.trim_start_matches("http://"))
            .collect();
        let mut front_args = flags.clone();
        front_args.push(format!("-storageNode={}", addrs.join(",")));
        front_args.extend(front_flags.iter().map(|f| (*f).to_owned()));
        let front = Node::spawn(bin, false, &front_args);
        for node in storage.iter().chain([&front]) {
            node.wait_healthy().await;
        }
        // `/health` of a front does not ask its storage nodes; a query does
        // (it fails while one is unreachable).
        let probe = format!("{}/select/logsql/query?query=*&limit=1", front.url);
        let a = client::get_within(&probe, &[], Duration::from_secs(10))
            .await
            .expect("query the VictoriaLogs cluster front");
        assert_eq!(a.status, 200, "cluster front query: {}", a.body);
        let mut nodes = vec![front];
        nodes.extend(storage);
        VictoriaLogs {
            url: nodes[0].url.clone(),
            nodes,
        }
    }

    /// The storage nodes' addresses (`http://127.0.0.1:<port>`), empty for a
    /// single node; each answers `/select/*` for the data it holds.
    pub fn storage_urls(&self) -> Vec<&str> {
        self.nodes.iter().skip(1).map(|n| n.url.as_str()).collect()
    }

    /// Kills storage node `index` (of [`VictoriaLogs::storage_urls`]) and
    /// removes its data, as an outage of one `vlstorage`.
    pub fn stop_storage_node(&mut self, index: usize) {
        assert!(index + 1 < self.nodes.len(), "no storage node {index}");
        drop(self.nodes.remove(index + 1));
    }

    /// Makes everything pushed so far searchable. A cluster front's
    /// `/internal/force_flush` sends its pending rows to the storage nodes
    /// and has each of them flush (VictoriaLogs' `netinsert.DebugFlush`).
    pub async fn flush(&self) {
        let a = client::try_get(&format!("{}/internal/force_flush", self.url), &[])
            .await
            .expect("flush VictoriaLogs");
        assert_eq!(a.status, 200);
    }

    /// Pushes a Loki JSON body into VictoriaLogs tenant `account`:0 and makes
    /// it searchable.
    pub async fn ingest_as(&self, account: &str, loki_push_json: String) {
        let (before, entries) = self.before_push(account, &loki_push_json).await;
        let a = client::send(
            "POST",
            &format!(
                "{}/insert/loki/api/v1/push?disable_message_parsing=1",
                self.url
            ),
            &[
                ("content-type", "application/json"),
                ("AccountID", account),
                ("ProjectID", "0"),
            ],
            loki_push_json.into_bytes(),
        )
        .await
        .expect("push to VictoriaLogs");
        assert!(a.status.is_success(), "push failed: {}", a.status);
        self.flush_pushed(account, before, entries).await;
    }

    /// Pushes a Loki JSON body, keeping messages raw, and makes it searchable.
    pub async fn ingest(&self, loki_push_json: String) {
        let (before, entries) = self.before_push("0", &loki_push_json).await;
        let a = client::try_post(
            &format!(
                "{}/insert/loki/api/v1/push?disable_message_parsing=1",
                self.url
            ),
            "application/json",
            loki_push_json.into_bytes(),
        )
        .await
        .expect("push to VictoriaLogs");
        assert!(
            a.status == 204 || a.status == 200,
            "push failed: {} {}",
            a.status,
            a.body
        );
        self.flush_pushed("0", before, entries).await;
    }

    /// Before a push of `loki_push_json` into tenant `account`:0: the
    /// tenant's searchable entries, and the push's.
    async fn before_push(&self, account: &str, loki_push_json: &str) -> (u64, u64) {
        let entries = serde_json::from_str::<serde_json::Value>(loki_push_json)
            .ok()
            .and_then(|v| {
                v["streams"].as_array().map(|streams| {
                    streams
                        .iter()
                        .filter_map(|s| s["values"].as_array())
                        .map(|v| v.len() as u64)
                        .sum()
                })
            })
            .unwrap_or(0);
        (self.searchable(account).await, entries)
    }

    /// Flushes, and waits until `entries` more than `before` are searchable
    /// in tenant `account`:0 (at once on a single node). A cluster front's
    /// force flush sends
    /// its pending rows, but its own once-a-second flush may still be
    /// sending an earlier batch, which a storage node then receives after
    /// its force flush and makes searchable only about a second later. A
    /// query in between would see part of the push (and a cache would keep
    /// that part). Gives up after 5 s: a test may push rows VictoriaLogs
    /// drops.
    async fn flush_pushed(&self, account: &str, before: u64, entries: u64) {
        self.flush().await;
        if entries == 0 {
            return;
        }
        for _ in 0..50 {
            if self.searchable(account).await >= before + entries {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            self.flush().await;
        }
    }

    /// The entries of tenant `account`:0 a query returns, over all time.
    async fn searchable(&self, account: &str) -> u64 {
        let url = client::url(
            &self.url,
            "/select/logsql/query",
            &[("query", "* | stats count() n")],
        );
        let a = client::send(
            "GET",
            &url,
            &[("AccountID", account), ("ProjectID", "0")],
            Vec::new(),
        )
        .await
        .expect("count in VictoriaLogs");
        serde_json::from_str::<serde_json::Value>(&a.body)
            .ok()
            .and_then(|v| v["n"].as_str().and_then(|n| n.parse().ok()))
            .unwrap_or(0)
    }

    /// Pushes `lines` (time in ns, text) of stream `{app="<app>"}`, messages
    /// kept raw, and makes them searchable.
    pub async fn push_lines(&self, app: &str, lines: &[(i64, String)]) {
        let values: Vec<serde_json::Value> = lines
            .iter()
            .map(|(t, l)| serde_json::json!([t.to_string(), l]))
            .collect();
        let body = serde_json::json!({"streams": [{"stream": {"app": app}, "values": values}]})
            .to_string();
        self.ingest(body).await;
    }

    /// Pushes an OTLP protobuf logs request, as an OpenTelemetry
    /// collector's `otlphttp` exporter does, and makes it searchable.
    pub async fn ingest_otlp(&self, body: Vec<u8>) {
        let a = client::try_post(
            &format!("{}/insert/opentelemetry/v1/logs", self.url),
            "application/x-protobuf",
            body,
        )
        .await
        .expect("OTLP push to VictoriaLogs");
        assert!(
            a.status == 200 || a.status == 204,
            "OTLP push failed: {} {}",
            a.status,
            a.body
        );
        self.flush().await;
    }
}

/// What a top-up tap saw: the recorded keys it answered, and the
/// exchanges it fetched from VictoriaLogs for keys the golden lacks.
#[derive(Debug, Default)]
pub struct TopUpLog {
    pub used: BTreeSet<String>,
    pub fresh: Golden,
}

#[derive(Clone)]
struct Shared {
    upstream: Option<String>,
    exchanges: Arc<Mutex<Golden>>,
    requests: Arc<AtomicUsize>,
    /// Set in top-up mode: `exchanges` holds the recorded golden, answered
    /// first; a key it lacks is fetched from `upstream` and logged here.
    topup: Option<Arc<Mutex<TopUpLog>>>,
}

async fn record_or_replay(
    State(shared): State<Shared>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    shared.requests.fetch_add(1, Ordering::Relaxed);
    let key = request_key(&uri, &body);
    if let Some(log) = &shared.topup {
        let recorded = shared
            .exchanges
            .lock()
            .expect("top-up lock")
            .get(&key)
            .cloned();
        if let Some(ex) = recorded {
            log.lock().expect("top-up lock").used.insert(key);
            return respond(&ex);
        }
        // A key fetched once is answered the same way the next time, as
        // the replay of the written golden will.
        let fetched = log.lock().expect("top-up lock").fresh.get(&key).cloned();
        if let Some(ex) = fetched {
            return respond(&ex);
        }
    }
    match &shared.upstream {
        Some(upstream) => match forward(upstream, &method, &uri, &key).await {
            Ok(ex) => {
                match &shared.topup {
                    Some(log) => log
                        .lock()
                        .expect("top-up lock")
                        .fresh
                        .insert(key, ex.clone()),
                    None => shared
                        .exchanges
                        .lock()
                        .expect("recorder lock")
                        .insert(key, ex.clone()),
                };
                respond(&ex)
            }
            Err(e) => (StatusCode::BAD_GATEWAY, e).into_response(),
        },
        None => {
            let found = shared
                .exchanges
                .lock()
                .expect("replay lock")
                .get(&key)
                .cloned();
            match found {
                Some(ex) => respond(&ex),
                None => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!(
                        "no golden VictoriaLogs response for `{key}`; top up the goldens of each \
                         release with LOKIVL_VL_BIN=... LOKIVL_RECORD_GOLDEN=missing \
                         (docs/testing.md)"
                    ),
                )
                    .into_response(),
            }
        }
    }
}

/// Sends the request of `key` to VictoriaLogs at `upstream`: its form
/// parameters as a form body (a bare GET stays a GET).
async fn forward(
    upstream: &str,
    method: &Method,
    uri: &Uri,
    key: &str,
) -> Result<Exchange, String> {
    let url = format!("{upstream}{}", uri.path());
    let params = key
        .split_once(' ')
        .map(|(_, p)| p)
        .unwrap_or("")
        .to_string();
    let result = if method == Method::GET && params.is_empty() {
        client::try_get(&url, &[]).await
    } else {
        client::try_post(
            &url,
            "application/x-www-form-urlencoded",
            params.into_bytes(),
        )
        .await
    };
    result.map(|a| Exchange {
        status: a.status.as_u16(),
        content_type: a.content_type().to_owned(),
        body: a.body,
    })
}

fn respond(ex: &Exchange) -> Response {
    let status = StatusCode::from_u16(ex.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(axum::http::header::CONTENT_TYPE, ex.content_type.clone())],
        ex.body.clone(),
    )
        .into_response()
}

/// A loopback server in front of VictoriaLogs (recording), of the golden
/// file (replay), or of both (top-up: recorded keys from the golden, the
/// others from VictoriaLogs).
pub struct Tap {
    pub url: String,
    exchanges: Arc<Mutex<Golden>>,
    requests: Arc<AtomicUsize>,
    topup: Option<Arc<Mutex<TopUpLog>>>,
}

impl Tap {
    /// Records every exchange with `upstream`.
    pub async fn recording(upstream: &str) -> Tap {
        Tap::serve(Some(upstream.to_string()), Golden::new(), false).await
    }

    /// Answers from the golden file.
    pub async fn replaying(golden: Golden) -> Tap {
        Tap::serve(None, golden, false).await
    }

    /// Answers the keys `golden` holds from it and fetches the others from
    /// `upstream`; [`Tap::topped_up`] tells which were used and fetched.
    pub async fn topping_up(golden: Golden, upstream: &str) -> Tap {
        Tap::serve(Some(upstream.to_string()), golden, true).await
    }

    async fn serve(upstream: Option<String>, golden: Golden, topup: bool) -> Tap {
        let exchanges = Arc::new(Mutex::new(golden));
        let requests = Arc::new(AtomicUsize::new(0));
        let topup = topup.then(|| Arc::new(Mutex::new(TopUpLog::default())));
        let app = axum::Router::new()
            .fallback(record_or_replay)
            .with_state(Shared {
                upstream,
                exchanges: exchanges.clone(),
                requests: requests.clone(),
                topup: topup.clone(),
            });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind tap");
        let url = format!("http://{}", listener.local_addr().expect("tap addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Tap {
            url,
            exchanges,
            requests,
            topup,
        }
    }

    /// Requests that reached the tap so far (recorded or replayed).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// What was recorded so far (the golden, for a replay or top-up tap).
    pub fn recorded(&self) -> Golden {
        self.exchanges.lock().expect("tap lock").clone()
    }

    /// A top-up tap's log so far: recorded keys answered, exchanges
    /// fetched. `None` for the other taps.
    pub fn topped_up(&self) -> Option<TopUpLog> {
        let log = self.topup.as_ref()?.lock().expect("tap lock");
        Some(TopUpLog {
            used: log.used.clone(),
            fresh: log.fresh.clone(),
        })
    }
}

/// Reads the golden file of `release`; `None` when it does not exist.
pub fn read_golden(release: &str) -> Option<Golden> {
    let text = std::fs::read_to_string(golden_path(release)).ok()?;
    Some(serde_json::from_str(&text).expect("golden file is valid JSON"))
}

/// Writes the golden file of `release` (pretty, sorted keys).
pub fn write_golden(release: &str, golden: &Golden) {
    let path = golden_path(release);
    std::fs::create_dir_all(path.parent().expect("golden dir")).expect("create golden dir");
    let text = serde_json::to_string_pretty(golden).expect("serialize golden");
    std::fs::write(&path, text + "\n").expect("write golden file");
}

#[cfg(test)]
mod tests {
    use super::release_in;

    #[test]
    fn release_lines_come_from_version_strings() {
        assert_eq!(
            release_in("victoria-logs-lokivl-tags-v1.51.1-0.20260624061259-dc94972a8708")
                .as_deref(),
            Some("v1.51")
        );
        assert_eq!(
            release_in("victoria-logs-20250801-103434-tags-v1.26.0-0-g1234abcd").as_deref(),
            Some("v1.26")
        );
        assert_eq!(release_in("\n"), None);
        assert_eq!(release_in("victoria-logs-dev"), None);
    }
}
