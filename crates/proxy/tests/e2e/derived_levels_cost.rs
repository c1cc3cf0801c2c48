//! What Drilldown's level and service counts cost VictoriaLogs on data that
//! stores no level and no `service_name` (the stream-labels dataset, as
//! Promtail ships it): lokivl in front of a recording tap in front of a
//! real VictoriaLogs, every `/select` call it makes counted by endpoint and
//! by bytes answered, and every count checked against the per-level and
//! per-service counts computed from the pushed lines (the row derivation
//! `engine::discovery`, itself checked against Loki 3.7 in `line_levels`).
//!
//! The bound (issue 18, item 3): one `stats_query_range` per level query,
//! plus at most one `/select/logsql/query` for the lines VictoriaLogs cannot
//! classify exactly (the residue), which must be far smaller than the rows
//! the query counts.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde_json::Value;

use crate::support;
use crate::support::backend::{self, Tap, VictoriaLogs};
use crate::support::client::{self, url};
use crate::support::dataset::{self, Entry};
use crate::support::realistic;
use engine::discovery::{SERVICE_NAME_LABELS, derive_service_name, detected_level};

const SEC: i64 = 1_000_000_000;
/// 2026-08-22T10:00:00Z.
const BASE_NS: i64 = 1_787_392_800 * SEC;
/// The range asked: the dataset's ten minutes and two more.
const END_NS: i64 = BASE_NS + 12 * 60 * SEC;
/// Drilldown's step and range on this span.
const STEP_S: i64 = 10;

fn pairs(m: &BTreeMap<String, String>) -> Vec<(String, String)> {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn service(e: &Entry) -> &str {
    derive_service_name(SERVICE_NAME_LABELS.iter().copied(), |n| {
        e.stream.get(n).map(String::as_str)
    })
}

fn level(e: &Entry) -> String {
    detected_level(&pairs(&e.stream), &pairs(&e.metadata), &e.line)
}

/// The step whose `[10s]` range holds `t`: Loki's `(step - 10 s, step]`.
fn step_of(t: i64) -> i64 {
    let step = STEP_S * SEC;
    let k = (t - BASE_NS + step - 1).div_euclid(step);
    (BASE_NS + k * step) / SEC
}

/// `series → (step seconds → count)` from the pushed entries that `keep`
/// selects, keyed by `key` (`name=value,…`).
fn expected(
    data: &[Entry],
    keep: impl Fn(&Entry) -> bool,
    key: impl Fn(&Entry) -> String,
) -> BTreeMap<String, BTreeMap<i64, u64>> {
    let mut out: BTreeMap<String, BTreeMap<i64, u64>> = BTreeMap::new();
    for e in data.iter().filter(|e| keep(e)) {
        *out.entry(key(e))
            .or_default()
            .entry(step_of(e.time_ns))
            .or_default() += 1;
    }
    out
}

/// A `query_range` answer as `series → (step seconds → count)`.
fn series(body: &str) -> BTreeMap<String, BTreeMap<i64, u64>> {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(v["data"]["resultType"], "matrix", "{body}");
    let mut out = BTreeMap::new();
    for s in v["data"]["result"].as_array().unwrap() {
        let key: Vec<String> = s["metric"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
            .collect();
        let points: BTreeMap<i64, u64> = s["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p[0].as_i64().unwrap(),
                    p[1].as_str().unwrap().parse().unwrap(),
                )
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        out.insert(key.join(","), points);
    }
    out
}

/// The `/select` calls one request made, by path, and the bytes answered.
#[derive(Debug, Default)]
struct Cost {
    calls: usize,
    by_path: BTreeMap<String, usize>,
    /// `/select/logsql/query` calls whose LogsQL ends in a `stats` pipe
    /// (`stats by (_time:…, …)`: VictoriaLogs counts, lokivl reads one row
    /// per step and group).
    stats_pipes: usize,
    /// `/select/logsql/query` calls that return log rows.
    row_reads: usize,
    /// Bytes VictoriaLogs answered.
    bytes: usize,
    /// NDJSON lines VictoriaLogs answered.
    lines: usize,
}

/// Asks `path` of lokivl and returns the answer with the calls it cost.
async fn ask(tap: &Tap, base: &str, path: &str, params: &[(&str, &str)]) -> (String, Cost) {
    let before_calls = tap.requests();
    let before: BTreeSet<String> = tap.recorded().into_keys().collect();
    let started = Instant::now();
    let (st, _, body) = client::try_get(&url(base, path, params), &[])
        .await
        .map(client::Answer::parts)
        .unwrap();
    let took = started.elapsed();
    assert_eq!(st, 200, "{params:?}: {body}");
    let mut cost = Cost {
        calls: tap.requests() - before_calls,
        ..Cost::default()
    };
    for (key, ex) in tap.recorded() {
        if before.contains(&key) {
            continue;
        }
        let p = key.split_once(' ').map_or(key.as_str(), |(p, _)| p);
        *cost.by_path.entry(p.to_owned()).or_default() += 1;
        cost.bytes += ex.body.len();
        cost.lines += ex.body.lines().filter(|l| !l.trim().is_empty()).count();
        if p == "/select/logsql/query" {
            let logsql =
                form_urlencoded::parse(key.split_once(' ').map_or("", |(_, q)| q).as_bytes())
                    .find(|(k, _)| k == "query")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
            let last_pipe = logsql.rsplit(" | ").next().unwrap_or("");
            if last_pipe.starts_with("stats ") {
                cost.stats_pipes += 1;
            } else {
                cost.row_reads += 1;
            }
        }
        if std::env::var_os("LOKIVL_SHOW_CALLS").is_some() {
            println!("  {key}\n  -> {}", &ex.body[..ex.body.len().min(600)]);
        }
    }
    println!(
        "cost of {:?}: {} calls {:?} ({} stats pipes, {} row reads), {} bytes in {} lines from VictoriaLogs, {took:?}",
        params.first().map_or("", |p| p.1),
        cost.calls,
        cost.by_path,
        cost.stats_pipes,
        cost.row_reads,
        cost.bytes,
        cost.lines
    );
    (body, cost)
}

fn range_params(q: &str) -> Vec<(&str, String)> {
    range_params_to(q, END_NS)
}

/// As [`range_params`] up to `end_ns`: another range, so that the tap sees
/// a call it has not recorded yet.
fn range_params_to(q: &str, end_ns: i64) -> Vec<(&str, String)> {
    vec![
        ("query", q.to_owned()),
        ("start", BASE_NS.to_string()),
        ("end", end_ns.to_string()),
        ("step", format!("{}ms", STEP_S * 1000)),
    ]
}

fn borrowed<'a>(p: &'a [(&'a str, String)]) -> Vec<(&'a str, &'a str)> {
    p.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// The body of a plain `/select/logsql/query` for `q` over the range, read
/// directly from VictoriaLogs: what a row-by-row derivation would transfer.
async fn rows_bytes(vl: &str, q: &str) -> usize {
    let a = client::try_post(
        &format!("{vl}/select/logsql/query"),
        "application/x-www-form-urlencoded",
        client::qs(&[
            ("query", q),
            ("start", &BASE_NS.to_string()),
            ("end", &END_NS.to_string()),
        ])
        .into_bytes(),
    )
    .await
    .unwrap();
    assert_eq!(a.status, 200, "{}", a.body);
    a.body.len()
}

/// One call that counts in VictoriaLogs, plus at most one read of the
/// residue: the lines the LogsQL level pipes cannot classify exactly (a
/// logfmt line that names a level key only inside a value, nested JSON),
/// which lokivl derives row by row.
fn assert_one_stats_call(q: &str, cost: &Cost) {
    assert_eq!(cost.stats_pipes, 1, "{q}: {cost:?}");
    assert!(cost.row_reads <= 1, "{q}: {cost:?}");
    assert_eq!(cost.calls, 1 + cost.row_reads, "{q}: {cost:?}");
}

/// A Promtail stream with many entries per step: levels in JSON, logfmt and
/// plain text, and lines without one.
fn dense_entries() -> Vec<Entry> {
    let stream: BTreeMap<String, String> = [
        ("namespace", "prod"),
        ("app", "dense"),
        ("pod", "dense-0"),
        ("container", "dense"),
        ("cluster", "eu-1"),
        ("env", "production"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    (0..DENSE)
        .map(|i| {
            let line = match i % 6 {
                0 => format!(
                    r#"{{"level":"info","msg":"request {i} served","ms":{}}}"#,
                    i % 97
                ),
                1 => format!("level=warn msg=\"slow request {i}\" took={}ms", i % 300),
                2 => format!("ERROR upstream {i} refused the connection"),
                3 => format!(r#"{{"lvl":"debug","msg":"cache probe {i}"}}"#),
                4 => format!("GET /items/{i} 200 {}", i % 1000),
                _ => format!("[fatal] worker {i} lost its lease"),
            };
            Entry {
                time_ns: BASE_NS + i * (600 * SEC / DENSE) + 1,
                stream: stream.clone(),
                line,
                metadata: BTreeMap::new(),
            }
        })
        .collect()
}

/// Entries of [`dense_entries`] over the dataset's ten minutes.
const DENSE: i64 = 12_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drilldown_level_counts_cost_one_stats_call_on_stream_labels() {
    let Some(bin) = backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no VictoriaLogs binary\n"),
        );
        return;
    };
    let mut data = realistic::stream_label_entries(BASE_NS);
    data.extend(dense_entries());
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(dataset::push_body(&data)).await;
    let tap = Tap::recording(&vl.url).await;
    let base = support::start_lokivl_with(&tap.url, |s| {
        s.discovery = engine::discovery::loki_defaults();
    })
    .await;
    // Learn the time-bucket rule once (its probe is not the queries' cost).
    let warm = range_params(r#"sum(count_over_time({service_name="warm-up"}[10s]))"#);
    ask(&tap, &base, "/loki/api/v1/query_range", &borrowed(&warm)).await;

    let services: BTreeSet<&str> = data.iter().map(service).collect();
    assert!(
        services.len() >= 7 && services.contains("cron") && services.contains("dense"),
        "{services:?}"
    );
    for svc in &services {
        let want = expected(
            &data,
            |e| service(e) == *svc,
            |e| format!("detected_level={}", level(e)),
        );
        // The volume histogram, then the service card (the same LogsQL:
        // asked over a range one step longer to be a new call).
        for (q, end_ns) in [
            (
                format!(
                    r#"sum by (detected_level) (count_over_time({{service_name="{svc}"}} | drop __error__ [10s]))"#
                ),
                END_NS,
            ),
            (
                format!(
                    r#"sum by (detected_level) (count_over_time({{ service_name="{svc}" }} [10s]))"#
                ),
                END_NS + STEP_S * SEC,
            ),
        ] {
            let p = range_params_to(&q, end_ns);
            let (body, cost) = ask(&tap, &base, "/loki/api/v1/query_range", &borrowed(&p)).await;
            assert_eq!(series(&body), want, "{q}");
            assert_one_stats_call(&q, &cost);
            if *svc == "dense" {
                assert_eq!(cost.row_reads, 0, "{q}: {cost:?}");
                // One answer row per step and level, not one per entry.
                let cells: usize = want.values().map(BTreeMap::len).sum();
                assert_eq!(cost.lines, cells, "{q}: {cost:?}");
                assert!(cost.lines * 20 < DENSE as usize, "{q}: {cost:?}");
            }
        }
    }

    // Every service by level at once, and the service grid's counts.
    let q = r#"sum by (service_name, detected_level) (count_over_time({service_name=~".+"} | drop __error__ [10s]))"#;
    let p = range_params(q);
    let (body, cost) = ask(&tap, &base, "/loki/api/v1/query_range", &borrowed(&p)).await;
    let want = expected(
        &data,
        |_| true,
        |e| format!("detected_level={},service_name={}", level(e), service(e)),
    );
    assert_eq!(series(&body), want, "{q}");
    assert_one_stats_call(q, &cost);
    let all_rows = rows_bytes(&vl.url, "*").await;
    assert!(
        cost.bytes * 10 < all_rows,
        "{} bytes read for levels, {all_rows} bytes of rows",
        cost.bytes
    );
    println!(
        "every row of the range: {} entries, {all_rows} bytes",
        data.len()
    );

    let q = r#"sum by (service_name) (count_over_time({service_name=~".+"}[10s]))"#;
    let p = range_params(q);
    let (body, cost) = ask(&tap, &base, "/loki/api/v1/query_range", &borrowed(&p)).await;
    let want = expected(&data, |_| true, |e| format!("service_name={}", service(e)));
    assert_eq!(series(&body), want, "{q}");
    assert_one_stats_call(q, &cost);

    // The service list: `index/volume` by service, one call, no rows.
    let (start, end) = (BASE_NS.to_string(), END_NS.to_string());
    let (body, cost) = ask(
        &tap,
        &base,
        "/loki/api/v1/index/volume",
        &[
            ("query", r#"{service_name=~".+"}"#),
            ("limit", "5000"),
            ("start", &start),
            ("end", &end),
        ],
    )
    .await;
    let v: Value = serde_json::from_str(&body).unwrap();
    let got: BTreeSet<String> = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["metric"]["service_name"].as_str().unwrap().to_owned())
        .collect();
    let want: BTreeSet<String> = services.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(got, want, "{body}");
    assert_eq!(
        (cost.calls, cost.stats_pipes, cost.row_reads),
        (1, 1, 0),
        "{cost:?}"
    );
}
