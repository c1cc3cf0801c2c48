//! Live tail compared with a real Loki: the same pushes go to Loki 3.7.x and
//! to VictoriaLogs, the same `/loki/api/v1/tail` sockets are opened on Loki
//! and on lokivl, and the frames are compared: the history frame whole, and
//! the entries pushed after the sockets opened (every stream element and
//! value, in time order; how they are cut into frames depends on timing).
//! Every socket is read all the time, as real clients read, so both servers'
//! pings are answered (lokivl drops a client that leaves one unanswered for
//! `--tail-write-timeout`).
//!
//! One test per dataset of `support::realistic` (the current lines with and
//! without discovery; stream labels only and OTLP with discovery).
//!
//! Live only: it needs `LOKIVL_LOKI_BIN` and `LOKIVL_VL_BIN` (or `loki` and
//! `victoria-logs` on PATH) and skips with one line otherwise. A tail has no
//! golden replay; CI checks lokivl's frames against a fake VictoriaLogs
//! (`http_tail.rs`).

use crate::support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::backend::VictoriaLogs;
use crate::support::loki::Loki;
use crate::support::realistic::Dataset;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos() as i64
}

/// One pushed entry: timestamp, line, structured metadata.
type Pushed = (i64, String, Value);

/// A push body: `(stream labels, entries)` per stream.
fn push_body(streams: &[(Value, Vec<Pushed>)]) -> String {
    let streams: Vec<Value> = streams
        .iter()
        .map(|(labels, values)| {
            let values: Vec<Value> = values
                .iter()
                .map(|(ts, line, md)| {
                    if md.as_object().is_some_and(|m| !m.is_empty()) {
                        json!([ts.to_string(), line, md])
                    } else {
                        json!([ts.to_string(), line])
                    }
                })
                .collect();
            json!({"stream": labels, "values": values})
        })
        .collect();
    json!({ "streams": streams }).to_string()
}

fn lines(t0: i64, tag: &str) -> String {
    push_body(&[
        (
            json!({"app": "tailed", "env": "prod"}),
            (0..4)
                .map(|i| {
                    let level = ["info", "error", "warn", "error"][i];
                    let md = if i % 2 == 0 {
                        json!({"trace_id": format!("{tag}-{i}")})
                    } else {
                        json!({})
                    };
                    (
                        t0 + i as i64 * 1_000_000,
                        format!("level={level} msg=\"{tag} line {i}\" took={}ms", i * 7),
                        md,
                    )
                })
                .collect(),
        ),
        (
            json!({"app": "tailed", "env": "dev"}),
            vec![(t0 + 500_000, format!("plain {tag} error text"), json!({}))],
        ),
    ])
}

/// Stream-labels-only lines (as Promtail pushes them): the six Kubernetes
/// labels, level words in JSON, logfmt and plain text, no metadata.
fn stream_label_lines(t0: i64, tag: &str) -> String {
    let k8s = |pod: &str| json!({"namespace": "shop", "app": "tailed", "pod": pod, "container": "app", "cluster": "eu-1", "env": "prod"});
    let line = |i: usize| match i {
        0 => format!(r#"{{"level":"INFO","msg":"{tag} line {i}"}}"#),
        1 => format!("lvl=error msg=\"{tag} line {i}\" took={}ms", i * 7),
        2 => format!("WARNING {tag} line {i} slow"),
        _ => format!("{tag} line {i} without a level"),
    };
    push_body(&[
        (
            k8s("tailed-0"),
            (0..4)
                .map(|i| (t0 + i as i64 * 1_000_000, line(i), json!({})))
                .collect(),
        ),
        (
            k8s("tailed-1"),
            vec![(t0 + 500_000, format!("err: plain {tag} text"), json!({}))],
        ),
    ])
}

/// The same entries as an OpenTelemetry collector sends them (OTLP).
fn otel_lines(t0: i64, tag: &str) -> Vec<u8> {
    use crate::support::otlp::{Record, ResourceLogs, Value as Attr};
    let sev = [("INFO", 9), ("ERROR", 17), ("", 13), ("", 0)];
    support::otlp::encode(&[ResourceLogs {
        resource: vec![
            ("service.name".into(), "tailed".into()),
            ("k8s.namespace.name".into(), "shop".into()),
        ],
        records: (0..4)
            .map(|i| Record {
                time_ns: t0 + i as i64 * 1_000_000,
                severity_number: sev[i].1,
                severity_text: sev[i].0.into(),
                body: format!("{tag} line {i} error={}", i % 2),
                attributes: vec![("attempt".into(), Attr::Int(i as i64))],
            })
            .collect(),
    }])
}

/// Pushes `tag`'s lines of `dataset` at `t0` to both servers.
async fn push_both(dataset: Dataset, loki: &Loki, vl: &VictoriaLogs, t0: i64, tag: &str) {
    match dataset {
        Dataset::Current | Dataset::StreamLabels => {
            let body = if dataset == Dataset::Current {
                lines(t0, tag)
            } else {
                stream_label_lines(t0, tag)
            };
            loki.push(body.clone()).await;
            vl.ingest(body).await;
        }
        Dataset::Otel => {
            let body = otel_lines(t0, tag);
            let st = loki
                .post_bytes("/otlp/v1/logs", "application/x-protobuf", body.clone())
                .await;
            assert!(st == 204 || st == 200, "Loki OTLP push: {st}");
            vl.ingest_otlp(body).await;
        }
    }
}

/// The tail queries asked on `dataset`, each with or without the
/// categorize-labels flag.
fn cases(dataset: Dataset) -> Vec<(&'static str, bool)> {
    match dataset {
        Dataset::Current => vec![
            (r#"{app="tailed"}"#, false),
            (r#"{app="tailed"} |= "error""#, true),
            (r#"{app="tailed"} | logfmt | level="error""#, false),
            (r#"{app="tailed"} | logfmt | drop took"#, false),
            (r#"{app="tailed"} | logfmt"#, true),
            (r#"{app="tailed"} |= "line""#, false),
            (r#"{app="tailed"} | env="prod""#, false),
            (
                r#"{env="prod", app="tailed"} | line_format "{{.env}}: {{__line__}}""#,
                true,
            ),
        ],
        Dataset::StreamLabels => vec![
            (r#"{app="tailed"}"#, false),
            (r#"{app="tailed"}"#, true),
            (r#"{namespace="shop"} |= "error""#, false),
            (r#"{service_name="tailed"}"#, true),
            (r#"{service_name="tailed"} | detected_level="error""#, false),
            (
                r#"{app="tailed"} | json | logfmt | drop __error__, __error_details__"#,
                true,
            ),
        ],
        Dataset::Otel => vec![
            (r#"{service_name="tailed"}"#, false),
            (r#"{service_name="tailed"}"#, true),
            (r#"{k8s_namespace_name="shop"} |= "error=1""#, false),
            (r#"{service_name="tailed"} | detected_level="error""#, true),
            (r#"{service_name="tailed"} | logfmt"#, false),
        ],
    }
}

/// A tail socket read the way Grafana, logcli and browsers read one: all
/// the time, from the moment it opens, so every ping is answered as it
/// arrives (tungstenite answers while it is polled). lokivl disconnects a
/// client that leaves a ping unanswered for `--tail-write-timeout` (10 s),
/// so a socket only polled now and then would be dropped by lokivl for the
/// harness's sake; Loki sets no such bound.
struct Reading {
    frames: mpsc::UnboundedReceiver<Value>,
    _reader: AbortOnDrop,
}

impl Reading {
    fn spawn(mut ws: Ws) -> Self {
        let (tx, frames) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            loop {
                match ws.next().await {
                    Some(Ok(Message::Text(t))) => {
                        let _ = tx.send(serde_json::from_str(&t).expect("a JSON frame"));
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                    // A socket that ends or breaks becomes a `closed` frame, so the
                    // comparison names the side that dropped it.
                    other => {
                        let _ = tx.send(json!({ "closed": format!("{other:?}") }));
                        return;
                    }
                }
            }
        });
        Self {
            frames,
            _reader: AbortOnDrop(reader),
        }
    }

    /// Every frame received so far and not yet taken.
    fn take(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(f) = self.frames.try_recv() {
            out.push(f);
        }
        out
    }
}

/// Stops a socket's reader when the test ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn open(base: &str, query: &str, start_ns: i64, categorize: bool) -> Ws {
    let url = format!(
        "{}/loki/api/v1/tail?{}",
        base.replacen("http://", "ws://", 1),
        form_urlencoded::Serializer::new(String::new())
            .append_pair("query", query)
            .append_pair("start", &start_ns.to_string())
            .append_pair("limit", "20")
            .finish()
    );
    let mut req = url.into_client_request().expect("a tail URL");
    if categorize {
        req.headers_mut().insert(
            "X-Loki-Response-Encoding-Flags",
            "categorize-labels".parse().expect("header value"),
        );
    }
    let (ws, _) = tokio_tungstenite::connect_async(req)
        .await
        .unwrap_or_else(|e| panic!("tail {base} {query}: {e}"));
    ws
}

/// The `streams` elements of `frames`, sorted by time then line.
fn entries(frames: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = frames
        .iter()
        .flat_map(|f| f["streams"].as_array().cloned().unwrap_or_default())
        .collect();
    out.sort_by_key(|s| (s["values"][0][0].as_str().map(str::to_owned), s.to_string()));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tail_frames_like_a_real_loki() {
    compare_tails(false, Dataset::Current).await;
}

/// The same with Loki's default label discovery on both sides: frames
/// carry `service_name`, and `detected_level` where Loki sends metadata.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tail_frames_like_a_real_loki_with_discovery() {
    compare_tails(true, Dataset::Current).await;
}

/// Stream labels only, as Promtail pushes them, with discovery on: every
/// `service_name` and `detected_level` is discovered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tail_frames_like_a_real_loki_stream_labels() {
    compare_tails(true, Dataset::StreamLabels).await;
}

/// OTLP to both servers, with discovery on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tail_frames_like_a_real_loki_otel() {
    compare_tails(true, Dataset::Otel).await;
}

/// How long the history frames (and the first VictoriaLogs tail poll) get.
const HISTORY_WAIT: Duration = Duration::from_secs(3);
/// How long the live entries get to reach every socket.
const LIVE_WAIT: Duration = Duration::from_secs(4);

async fn compare_tails(discovery: bool, dataset: Dataset) {
    let Some((loki_bin, vl_bin)) = support::differential::servers() else {
        return;
    };
    let edit = move |config: String| {
        if discovery {
            config
                .replace("  discover_service_name: []\n", "")
                .replace("  discover_log_levels: false\n", "")
        } else {
            config
        }
    };
    let (loki, vl) = tokio::join!(
        Loki::start_with(&loki_bin, edit),
        VictoriaLogs::start(&vl_bin)
    );
    let lokivl = support::start_lokivl_with(&vl.url, |s| {
        if discovery {
            s.discovery = engine::discovery::loki_defaults();
        }
    })
    .await;
    let history_t = now_ns() - 20_000_000_000;
    push_both(dataset, &loki, &vl, history_t, "history").await;

    let cases = cases(dataset);
    let start = history_t - 5_000_000_000;
    let mut sockets = Vec::new();
    for (query, categorize) in cases {
        sockets.push((
            query,
            categorize,
            Reading::spawn(open(&loki.url, query, start, categorize).await),
            Reading::spawn(open(&lokivl, query, start, categorize).await),
        ));
    }
    // History frames, then (after VictoriaLogs' tail has polled once) the
    // live pushes to both; every socket is read throughout.
    tokio::time::sleep(HISTORY_WAIT).await;
    let histories: Vec<_> = sockets
        .iter_mut()
        .map(|(_, _, l, v)| (l.take(), v.take()))
        .collect();
    push_both(dataset, &loki, &vl, now_ns(), "live").await;
    tokio::time::sleep(LIVE_WAIT).await;

    let mut failures = Vec::new();
    for ((query, categorize, l, v), (l_hist, v_hist)) in sockets.iter_mut().zip(histories) {
        let (l_live, v_live) = (l.take(), v.take());
        let failed_before = failures.len();
        let case = format!(
            "{query} (dataset: {}, categorize-labels: {categorize}, discovery: {discovery})",
            dataset.name()
        );
        if l_hist.is_empty() || l_hist != v_hist {
            failures.push(format!(
                "{case}: history frames differ\n  loki   {}\n  lokivl {}",
                Value::from(l_hist.clone()),
                Value::from(v_hist.clone())
            ));
        }
        let (le, ve) = (entries(&l_live), entries(&v_live));
        let live_count = le.len();
        if le.is_empty() || le != ve {
            failures.push(format!(
                "{case}: live entries differ\n  loki   {}\n  lokivl {}",
                Value::from(le),
                Value::from(ve)
            ));
        }
        let sides = l_live.iter().map(|f| ("loki", f));
        for (side, f) in sides.chain(v_live.iter().map(|f| ("lokivl", f))) {
            let keys: Vec<&String> = f
                .as_object()
                .map(|o| o.keys().collect())
                .unwrap_or_default();
            let known = ["streams", "dropped_entries", "encodingFlags"];
            if !keys.iter().all(|k| known.contains(&k.as_str())) {
                failures.push(format!("{case}: {side} sent unexpected frame {f}"));
            }
        }
        let verdict = if failures.len() == failed_before {
            "equal"
        } else {
            "DIFFER"
        };
        println!(
            "tail {case}: {} history and {live_count} live entries (Loki's): {verdict}",
            entries(&l_hist).len(),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
