//! Drilldown endpoints compared with a real Loki 3.7 on the same data.
//!
//! `live` starts Loki (`LOKIVL_LOKI_BIN`) and VictoriaLogs (`LOKIVL_VL_BIN`),
//! pushes one dataset (explicit `service_name` labels, so the comparison does
//! not depend on service-name discovery) into both and asks Loki and lokivl
//! `index/stats`, `index/volume`, `index/volume_range`, `detected_labels`,
//! `detected_fields`, `detected_field/{name}/values` and `patterns` with
//! Grafana's parameter shapes (ns and RFC3339 times, `step=5000ms`). With
//! `LOKIVL_RECORD_GOLDEN=1` it writes
//! `tests/golden/victorialogs-<release>/drilldown/{loki,victorialogs}.json`;
//! `replay` compares lokivl with the answers recorded from every release
//! without servers.
//!
//! `walkthrough_live_{stream_labels,otel}` walk Logs Drilldown through one
//! service on the realistic datasets of `support::realistic`, where
//! `service_name` and `detected_level` are discovered (see
//! `differential_drilldown/walkthrough.rs`), asking lokivl as configured by
//! default, through split and live windows and with the cache off; with
//! `LOKIVL_RECORD_GOLDEN=1` they write
//! `tests/golden/victorialogs-<release>/drilldown-walkthrough-<dataset>/`,
//! which `walkthrough_replay_*` check without servers (or top up: `support::topup`).
//!
//! Each request names how it is compared ([`Mode`]). Where Loki's numbers
//! are estimates or samples (index bytes, volume bytes, pattern tokens), only
//! what lokivl is meant to reproduce is compared; docs/compatibility.md
//! (Drilldown section) lists every such difference with its reason.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::backend::{self, Tap, VictoriaLogs};
use crate::support::loki::Loki;
use crate::support::{client, differential::VlGolden};

const SEC: i64 = 1_000_000_000;
/// Entries per stream, one every 10 s.
const PER_STREAM: i64 = 30;

mod requests;

mod walkthrough;

use crate::support::realistic::Dataset;
use requests::{Mode, REQS, Req};
use walkthrough::WALK;

/// End of the asked range after the base time: six minutes for the
/// Drilldown dataset, eleven for the walk-through's realistic datasets.
const END_S: i64 = 6 * 60;
const WALK_END_S: i64 = 11 * 60;

/// Which time form each endpoint gets, as Grafana sends it: the editor's
/// stats hint and value pickers use ns, Drilldown's own calls RFC3339, data
/// queries (through Grafana's datasource) ns, an instant query the end.
fn time_params(req: &Req, base_ns: i64, end_s: i64) -> Vec<(String, String)> {
    let (s, e) = (base_ns - 60 * SEC, base_ns + end_s * SEC);
    if req.path.ends_with("/query") {
        return vec![("time".into(), e.to_string())];
    }
    let ns = matches!(req.mode, Mode::Stats | Mode::Values) || req.path.ends_with("/query_range");
    let f = |t: i64| {
        if ns { t.to_string() } else { rfc3339(t) }
    };
    vec![("start".into(), f(s)), ("end".into(), f(e))]
}

/// `toISOString()` of a whole-millisecond time: `2026-08-22T10:00:00.000Z`.
fn rfc3339(ns: i64) -> String {
    let secs = ns.div_euclid(SEC);
    let ms = ns.rem_euclid(SEC) / 1_000_000;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn url(base: &str, req: &Req, base_ns: i64, end_s: i64) -> String {
    let mut params: Vec<(String, String)> = req
        .params
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    params.extend(time_params(req, base_ns, end_s));
    let pairs: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    client::url(base, req.path, &pairs)
}

/// The dataset: four streams with explicit `service_name`, logfmt, JSON and
/// plain lines, structured metadata on two of them.
fn push_body(base_ns: i64) -> String {
    let levels = ["info", "info", "error", "warn", "debug"];
    let mut streams = Vec::new();
    for (env, off) in [("prod", 0), ("dev", 500_000_000)] {
        let values: Vec<Value> = (0..PER_STREAM)
            .map(|i| {
                let line = format!(
                    "level={} msg=\"order {i} placed\" duration={}ms status={} size={i}KB",
                    levels[(i % 5) as usize],
                    i * 3,
                    [200, 500, 404][(i % 3) as usize]
                );
                json!([(base_ns + i * 10 * SEC + off).to_string(), line])
            })
            .collect();
        streams.push(json!({"stream": {"service_name": "checkout", "env": env, "namespace": "shop"}, "values": values}));
    }
    let values: Vec<Value> = (0..PER_STREAM)
        .map(|i| {
            let level = ["warn", "info"][(i % 2) as usize];
            let line = json!({"level": level, "msg": format!("payment {i} accepted"), "user": {"id": i % 7}, "amount": i as f64 * 1.5, "ok": i % 2 == 0}).to_string();
            json!([(base_ns + i * 10 * SEC + 200_000_000).to_string(), line, {"trace_id": format!("tr{}", i % 4)}])
        })
        .collect();
    streams.push(json!({"stream": {"service_name": "payments", "env": "prod", "cluster": "eu"}, "values": values}));
    let values: Vec<Value> = (0..PER_STREAM)
        .map(|i| {
            let line = format!("GET /api/items/{i} 200 {}ms from 10.0.0.{}", i + 1, i % 3);
            json!([(base_ns + i * 10 * SEC + 700_000_000).to_string(), line, {"trace_id": format!("f{i}"), "pod_ip": "10.1.1.1"}])
        })
        .collect();
    streams.push(json!({"stream": {"service_name": "frontend", "pod": "web-1"}, "values": values}));
    json!({ "streams": streams }).to_string()
}

/// One recorded answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct RecordedAnswer {
    /// The request URL without host, so a changed request is noticed.
    request: String,
    status: u16,
    body: Value,
}

#[derive(Debug, Serialize, Deserialize)]
struct LokiGolden {
    base_ns: i64,
    answers: BTreeMap<String, RecordedAnswer>,
}

fn golden_dir(release: &str) -> PathBuf {
    backend::golden_root(release).join("drilldown")
}

async fn ask(base: &str, req: &Req, base_ns: i64, end_s: i64) -> RecordedAnswer {
    let full = url(base, req, base_ns, end_s);
    let request = full[base.len()..].to_owned();
    let tags = ("X-Query-Tags", "Source=grafana-lokiexplore-app");
    // Data queries go through Grafana's datasource, which asks for
    // categorized labels.
    let data = req.path.ends_with("/query") || req.path.ends_with("/query_range");
    let headers: &[(&str, &str)] = if data {
        &[
            tags,
            ("X-Loki-Response-Encoding-Flags", "categorize-labels"),
        ]
    } else {
        &[tags]
    };
    match client::try_get(&full, headers)
        .await
        .map(client::Answer::parts)
    {
        Ok((status, _, body)) => {
            let mut body = serde_json::from_str(&body).unwrap_or(Value::String(body));
            if let Some(d) = body.get_mut("data").and_then(Value::as_object_mut) {
                d.remove("stats");
            }
            RecordedAnswer {
                request,
                status,
                body,
            }
        }
        Err(e) => RecordedAnswer {
            request,
            status: 0,
            body: Value::String(e),
        },
    }
}

fn sorted_by(v: Option<&Value>, key: &str) -> Vec<Value> {
    let mut items: Vec<Value> = v.and_then(Value::as_array).cloned().unwrap_or_default();
    items.sort_by(|a, b| a[key].to_string().cmp(&b[key].to_string()));
    items
}

fn metrics(v: &Value) -> Vec<Value> {
    v.pointer("/data/result")
        .and_then(Value::as_array)
        .map(|r| r.iter().map(|s| s["metric"].clone()).collect())
        .unwrap_or_default()
}

fn level_totals(v: &Value) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for p in v["data"].as_array().into_iter().flatten() {
        let n: i64 = p["samples"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s[1].as_i64())
            .sum();
        *out.entry(p["level"].as_str().unwrap_or("").to_owned())
            .or_default() += n;
    }
    out
}

fn patterns_shape(v: &Value) -> Result<(), String> {
    if v["status"] != "success" || !v["data"].is_array() {
        return Err(format!("envelope: {v}"));
    }
    for p in v["data"].as_array().into_iter().flatten() {
        let ok = p["pattern"].is_string()
            && p["level"].is_string()
            && p["samples"].as_array().is_some_and(|s| {
                s.iter().all(|x| {
                    x.as_array()
                        .is_some_and(|x| x.len() == 2 && x[0].is_i64() && x[1].is_i64())
                })
            });
        if !ok {
            return Err(format!("item shape: {p}"));
        }
    }
    Ok(())
}

/// `None` when lokivl answers as Loki does under `mode`, else the difference.
fn compare(mode: Mode, loki: &RecordedAnswer, lokivl: &RecordedAnswer) -> Option<String> {
    if loki.status != lokivl.status {
        return Some(format!(
            "status: loki {}, lokivl {} ({})",
            loki.status, lokivl.status, lokivl.body
        ));
    }
    let (l, v) = (&loki.body, &lokivl.body);
    let diff = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
        Some(format!("{what}: loki {a:?}, lokivl {b:?}"))
    };
    match mode {
        Mode::Stats => {
            for k in ["streams", "chunks", "entries"] {
                if l[k] != v[k] {
                    return diff(k, &l[k], &v[k]);
                }
            }
            let nonzero = |x: &Value| x["bytes"].as_u64().unwrap_or(0) > 0;
            (nonzero(l) != nonzero(v)).then(|| format!("bytes: loki {l}, lokivl {v}"))
        }
        Mode::Volume => {
            if l.pointer("/data/resultType") != v.pointer("/data/resultType") {
                return diff("resultType", l, v);
            }
            if metrics(l) != metrics(v) {
                return diff("series", &metrics(l), &metrics(v));
            }
            let ts = |x: &Value| -> Vec<Value> {
                x.pointer("/data/result")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().map(|s| s["value"][0].clone()).collect())
                    .unwrap_or_default()
            };
            (ts(l) != ts(v)).then(|| format!("timestamps: loki {:?}, lokivl {:?}", ts(l), ts(v)))
        }
        Mode::VolumeRange => {
            if l.pointer("/data/resultType") != v.pointer("/data/resultType") {
                return diff("resultType", l, v);
            }
            let set = |x: &Value| -> BTreeSet<String> {
                metrics(x).iter().map(Value::to_string).collect()
            };
            if set(l) != set(v) {
                return diff("series", &set(l), &set(v));
            }
            let stamps = |x: &Value| -> BTreeSet<String> {
                x.pointer("/data/result")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .flat_map(|s| s["values"].as_array().cloned().unwrap_or_default())
                    .map(|p| p[0].to_string())
                    .collect()
            };
            let extra: Vec<String> = stamps(v).difference(&stamps(l)).cloned().collect();
            (!extra.is_empty()).then(|| format!("lokivl bucket times Loki lacks: {extra:?}"))
        }
        Mode::Labels => {
            let (a, b) = (
                sorted_by(l.get("detectedLabels"), "label"),
                sorted_by(v.get("detectedLabels"), "label"),
            );
            (a != b || l.is_object() != v.is_object()).then(|| format!("loki {a:?}, lokivl {b:?}"))
        }
        Mode::Fields => {
            let (a, b) = (
                sorted_by(l.get("fields"), "label"),
                sorted_by(v.get("fields"), "label"),
            );
            if a != b {
                return Some(format!("loki {a:?}\n       lokivl {b:?}"));
            }
            (l.get("limit") != v.get("limit")).then(|| diff("limit", l, v))?
        }
        Mode::Values => {
            let set = |x: &Value| -> BTreeSet<String> {
                x["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(Value::to_string)
                    .collect()
            };
            if set(l) != set(v) {
                return diff("values", &set(l), &set(v));
            }
            (l.get("limit") != v.get("limit")).then(|| diff("limit", l, v))?
        }
        Mode::Patterns => {
            if let Err(e) = patterns_shape(v) {
                return Some(format!("lokivl {e}"));
            }
            if let Err(e) = patterns_shape(l) {
                return Some(format!("loki {e}"));
            }
            let (a, b) = (level_totals(l), level_totals(v));
            (a != b).then(|| format!("lines per level: loki {a:?}, lokivl {b:?}"))
        }
        Mode::Query => {
            let as_diff = |a: &RecordedAnswer| support::differential::Compared {
                request: a.request.clone(),
                status: a.status,
                json: a.body.is_object().then(|| a.body.clone()),
                text: a.body.as_str().map(str::to_owned),
            };
            support::compare::compare(&as_diff(loki), &as_diff(lokivl))
        }
        Mode::PatternsShape => patterns_shape(v)
            .map_err(|e| format!("lokivl {e}"))
            .and_then(|()| patterns_shape(l).map_err(|e| format!("loki {e}")))
            .err(),
    }
}

/// Compares every request of `reqs`; the differences.
fn differences(
    reqs: &[Req],
    loki: &BTreeMap<String, RecordedAnswer>,
    lokivl: &BTreeMap<String, RecordedAnswer>,
) -> Vec<String> {
    let mut failures = Vec::new();
    for req in reqs {
        let (Some(l), Some(v)) = (loki.get(req.id), lokivl.get(req.id)) else {
            failures.push(format!("{}: no recorded Loki answer; re-record", req.id));
            continue;
        };
        if l.request != v.request {
            failures.push(format!(
                "{}: Loki's answer is for another request ({}); re-record",
                req.id, l.request
            ));
            continue;
        }
        match compare(req.mode, l, v) {
            None => println!("PASS {}", req.id),
            Some(d) => {
                println!("FAIL {}\n     {d}", req.id);
                failures.push(format!("{}: {d}", req.id));
            }
        }
    }
    println!(
        "drilldown parity: {}/{} equal",
        reqs.len() - failures.len(),
        reqs.len()
    );
    failures
}

/// Compares every request; panics with the list of differences.
fn judge(loki: &BTreeMap<String, RecordedAnswer>, lokivl: &BTreeMap<String, RecordedAnswer>) {
    let failures = differences(REQS, loki, lokivl);
    assert!(
        failures.is_empty(),
        "{} Drilldown difference(s) from Loki:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// lokivl with the discovery of [`start_loki`]'s Loki: levels on,
/// `service_name` off (the dataset stores it).
async fn start_lokivl(backend: &str) -> String {
    support::start_lokivl_with(backend, |s| {
        s.discovery = logsql_ast::Discovery {
            service_name_labels: Vec::new(),
            log_levels: true,
        };
    })
    .await
}

/// A Loki with the pattern ingester on (rate threshold 0, so a small
/// dataset yields patterns) and level discovery on, as Drilldown expects.
async fn start_loki(bin: &Path) -> Loki {
    Loki::start_with(bin, |config| {
        let config = config
            .replace(
                "pattern_ingester:\n  enabled: false",
                "pattern_ingester:\n  enabled: true",
            )
            .replace(
                "discover_log_levels: false",
                "discover_log_levels: true\n  pattern_rate_threshold: 0",
            );
        assert!(
            config.contains("enabled: true") && config.contains("pattern_rate_threshold"),
            "tests/data/loki.yaml changed shape; update differential_drilldown's overrides"
        );
        config
    })
    .await
}

/// Writes one golden file as pretty JSON.
fn write_golden<T: Serialize>(release: &str, name: &str, value: &T) {
    let text = serde_json::to_string_pretty(value).expect("serialize golden");
    std::fs::write(golden_dir(release).join(name), text + "\n").expect("write golden");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live() {
    let Some((loki_bin, vl_bin)) = support::topup::servers() else {
        return;
    };
    // Loki's pattern ingester only mines recent lines: the data spans the
    // five minutes before now.
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64;
    // On a 10 s grid, so no entry falls in the last second of a 5 s volume
    // step: Loki asks its ingesters for a step `[s, e)` as whole seconds
    // `[s, e − 1 s]`, so a stream whose first entry lies in that last second
    // has no volume in that step (docs/compatibility.md), which made
    // `volume_range.step5s` fail on one run in five.
    let base_ns = (now_s - 6 * 60).div_euclid(10) * 10 * SEC;
    let (loki, vl) = tokio::join!(start_loki(&loki_bin), VictoriaLogs::start(&vl_bin));
    let body = push_body(base_ns);
    let st = loki.post("/loki/api/v1/push", body.clone()).await;
    assert!(st == 204 || st == 200, "Loki push: {st}");
    vl.ingest(body).await;
    tokio::time::sleep(Duration::from_secs(3)).await;

    // Everything but index/stats is answered from the ingesters; index/stats
    // reads only the store, so it is asked after a flush.
    let mut loki_answers = BTreeMap::new();
    for req in REQS.iter().filter(|r| r.mode != Mode::Stats) {
        loki_answers.insert(req.id.to_owned(), ask(&loki.url, req, base_ns, END_S).await);
    }
    assert_eq!(loki.post("/flush", String::new()).await, 204, "Loki flush");
    let probe = Req {
        id: "probe",
        path: "/loki/api/v1/index/stats",
        mode: Mode::Stats,
        params: &[("query", r#"{pod=~".+"}"#)],
    };
    let mut flushed = false;
    for _ in 0..60 {
        let a = ask(&loki.url, &probe, base_ns, END_S).await;
        if a.body["entries"].as_u64().unwrap_or(0) > 0 {
            flushed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(flushed, "Loki's index/stats stayed empty after /flush");
    for req in REQS.iter().filter(|r| r.mode == Mode::Stats) {
        loki_answers.insert(req.id.to_owned(), ask(&loki.url, req, base_ns, END_S).await);
    }

    let tap = Tap::recording(&vl.url).await;
    let lokivl = start_lokivl(&tap.url).await;
    let mut lokivl_answers = BTreeMap::new();
    for req in REQS {
        lokivl_answers.insert(req.id.to_owned(), ask(&lokivl, req, base_ns, END_S).await);
    }
    if support::topup::records_whole() {
        let release = backend::release_of(&vl_bin);
        std::fs::create_dir_all(golden_dir(&release)).expect("create golden dir");
        write_golden(
            &release,
            "loki.json",
            &LokiGolden {
                base_ns,
                answers: loki_answers.clone(),
            },
        );
        write_golden(
            &release,
            "victorialogs.json",
            &VlGolden {
                base_ns,
                exchanges: tap.recorded(),
            },
        );
        println!("recorded {}", golden_dir(&release).display());
    }
    judge(&loki_answers, &lokivl_answers);
}

/// The Loki answers and VictoriaLogs exchanges recorded together in `dir`
/// for `release` (`live_test` is the test that records them).
fn read_goldens(dir: &Path, release: &str, live_test: &str) -> (LokiGolden, VlGolden) {
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| {
            panic!(
                "{}/{name}: {e}; record it with LOKIVL_LOKI_BIN=... \
                 LOKIVL_VL_BIN=<VictoriaLogs {release}> LOKIVL_RECORD_GOLDEN=1 \
                 cargo test -p proxy --test differential drilldown::{live_test}",
                dir.display()
            )
        })
    };
    let loki: LokiGolden = serde_json::from_str(&read("loki.json")).expect("loki.json");
    let vl: VlGolden = serde_json::from_str(&read("victorialogs.json")).expect("victorialogs.json");
    assert_eq!(
        loki.base_ns, vl.base_ns,
        "golden files of {release} from different recordings"
    );
    (loki, vl)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay() {
    for release in support::topup::releases() {
        let (loki, vl) = read_goldens(&golden_dir(release), release, "live");
        let push = async |s: &VictoriaLogs| s.ingest(push_body(vl.base_ns)).await;
        let source = support::topup::Source::open(release, vl.exchanges, push).await;
        let lokivl = start_lokivl(&source.tap.url).await;
        let mut answers = BTreeMap::new();
        for req in REQS {
            answers.insert(
                req.id.to_owned(),
                ask(&lokivl, req, loki.base_ns, END_S).await,
            );
        }
        let file = golden_dir(release).join("victorialogs.json");
        source.finish(&file, Some(vl.base_ns), true);
        println!("VictoriaLogs {release}:");
        judge(&loki.answers, &answers);
    }
}

/// Golden directory of the walk-through on `dataset`.
fn walk_dir(release: &str, dataset: Dataset) -> PathBuf {
    backend::golden_root(release).join(format!("drilldown-walkthrough-{}", dataset.name()))
}

/// lokivl with Loki's discovery defaults, as the walk-through needs
/// `service_name` and `detected_level`.
fn discovery(s: &mut proxy::config::Settings) {
    s.discovery = engine::discovery::loki_defaults();
}

/// Asks lokivl in front of `backend` every walk-through request: with the
/// defaults, then with each of the differential variants (split and live
/// windows, cache off). Returns `(variant, answers)`, the defaults first.
///
/// The walk-through's data is minutes old (the pattern ingester only mines
/// recent lines), so which of `windows-5m`'s windows are closed depends on
/// the clock: a replay, later, asks VictoriaLogs other ranges than the
/// recording did. `replay` leaves that variant out (`live-windows-7m`
/// splits the same ranges with every window live, whenever it runs).
async fn ask_walk(
    backend: &str,
    base_ns: i64,
    replay: bool,
) -> Vec<(&'static str, BTreeMap<String, RecordedAnswer>)> {
    let mut setups: Vec<(&'static str, support::variants::Variant)> = vec![(
        "default",
        support::variants::Variant {
            name: "default",
            tune: |_| {},
        },
    )];
    setups.extend(
        support::variants::all()
            .into_iter()
            .filter(|v| !(replay && v.name == "windows-5m"))
            .map(|v| (v.name, v)),
    );
    let mut out = Vec::new();
    for (name, v) in setups {
        let lokivl = support::start_lokivl_with(backend, |s| {
            discovery(s);
            (v.tune)(s);
        })
        .await;
        let mut answers = BTreeMap::new();
        for req in WALK {
            answers.insert(
                req.id.to_owned(),
                ask(&lokivl, req, base_ns, WALK_END_S).await,
            );
        }
        out.push((name, answers));
    }
    out
}

/// Every variant's differences from Loki, prefixed with the variant.
fn walk_failures(
    loki: &BTreeMap<String, RecordedAnswer>,
    answers: &[(&'static str, BTreeMap<String, RecordedAnswer>)],
    gaps: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut gap_seen: BTreeMap<&str, bool> = gaps.keys().map(|k| (k.as_str(), false)).collect();
    for (name, lokivl) in answers {
        println!("lokivl {name}:");
        for f in differences(WALK, loki, lokivl) {
            let id = f.split_once(':').map_or(f.as_str(), |(id, _)| id);
            match gap_seen.get_mut(id) {
                Some(seen) => *seen = true,
                None => out.push(format!("[{name}] {f}")),
            }
        }
    }
    // A listed gap that no longer differs must leave the list.
    for (id, seen) in gap_seen {
        if !seen {
            out.push(format!(
                "{id}: listed as a known gap but equals Loki; remove it"
            ));
        }
    }
    out
}

/// The walk-through's known gaps for `dataset` on VictoriaLogs `release`.
fn walk_gaps(dataset: Dataset, release: &str) -> BTreeMap<String, String> {
    support::differential::read_known_gaps(
        &format!("drilldown_walkthrough_{}_known_gaps.txt", dataset.name()),
        release,
    )
}

/// The walk-through live on `dataset` (see `walkthrough.rs`).
async fn walkthrough_live(dataset: Dataset) {
    let Some((loki_bin, vl_bin)) = support::topup::servers() else {
        return;
    };
    // Recent data for the pattern ingester; the last entry (base + 10 min)
    // lies a minute before now.
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64;
    let base_ns = (now_s - 11 * 60).div_euclid(10) * 10 * SEC;
    let (loki, vl) = tokio::join!(
        Loki::start_with(&loki_bin, |config| {
            let config = config
                .replace("  discover_service_name: []\n", "")
                .replace(
                    "pattern_ingester:\n  enabled: false",
                    "pattern_ingester:\n  enabled: true",
                )
                .replace(
                    "discover_log_levels: false",
                    "discover_log_levels: true\n  pattern_rate_threshold: 0",
                );
            assert!(
                !config.contains("discover_service_name")
                    && config.contains("pattern_rate_threshold"),
                "tests/data/loki.yaml changed shape; update the walk-through's overrides"
            );
            config
        }),
        VictoriaLogs::start(&vl_bin)
    );
    dataset.push(base_ns, &loki, &vl).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut loki_answers = BTreeMap::new();
    for req in WALK {
        loki_answers.insert(
            req.id.to_owned(),
            ask(&loki.url, req, base_ns, WALK_END_S).await,
        );
    }
    let tap = Tap::recording(&vl.url).await;
    let answers = ask_walk(&tap.url, base_ns, false).await;
    if support::topup::records_whole() {
        let release = backend::release_of(&vl_bin);
        let dir = walk_dir(&release, dataset);
        std::fs::create_dir_all(&dir).expect("create golden dir");
        let write = |name: &str, text: String| {
            std::fs::write(dir.join(name), text + "\n").expect("write golden");
        };
        write(
            "loki.json",
            serde_json::to_string_pretty(&LokiGolden {
                base_ns,
                answers: loki_answers.clone(),
            })
            .expect("serialize"),
        );
        write(
            "victorialogs.json",
            serde_json::to_string_pretty(&VlGolden {
                base_ns,
                exchanges: tap.recorded(),
            })
            .expect("serialize"),
        );
        println!("recorded {}", dir.display());
    }
    println!("walk-through on dataset {}:", dataset.name());
    let gaps = walk_gaps(dataset, &backend::release_of(&vl_bin));
    let failures = walk_failures(&loki_answers, &answers, &gaps);
    assert!(
        failures.is_empty(),
        "{} walk-through difference(s) from Loki on {}:\n{}",
        failures.len(),
        dataset.name(),
        failures.join("\n")
    );
}

/// The walk-through replayed from every release's goldens.
async fn walkthrough_replay(dataset: Dataset) {
    let mut all = Vec::new();
    for release in support::topup::releases() {
        let dir = walk_dir(release, dataset);
        let (loki, vl) = read_goldens(&dir, release, "walkthrough_live");
        let push = async |s: &VictoriaLogs| dataset.push_victorialogs(vl.base_ns, s).await;
        let source = support::topup::Source::open(release, vl.exchanges, push).await;
        let answers = ask_walk(&source.tap.url, loki.base_ns, true).await;
        // A top-up keeps the recorded `windows-5m` exchanges (see `ask_walk`).
        source.finish(&dir.join("victorialogs.json"), Some(vl.base_ns), false);
        println!(
            "VictoriaLogs {release}, walk-through on dataset {}:",
            dataset.name()
        );
        let failures = walk_failures(&loki.answers, &answers, &walk_gaps(dataset, release));
        all.extend(failures.into_iter().map(|f| format!("{release}: {f}")));
    }
    assert!(
        all.is_empty(),
        "{} walk-through difference(s) from the recorded Loki on {}:\n{}",
        all.len(),
        dataset.name(),
        all.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walkthrough_live_stream_labels() {
    walkthrough_live(Dataset::StreamLabels).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walkthrough_live_otel() {
    walkthrough_live(Dataset::Otel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walkthrough_replay_stream_labels() {
    walkthrough_replay(Dataset::StreamLabels).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walkthrough_replay_otel() {
    walkthrough_replay(Dataset::Otel).await;
}
