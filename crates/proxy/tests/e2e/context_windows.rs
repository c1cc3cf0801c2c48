//! A request's discovery settings and limits reach every part of it: a
//! metric `query_range` split into many cached windows, and a multi-tenant
//! fan-out, answer exactly as the same query unsplit, on data as Promtail
//! pushes it (stream labels only: no `service_name`, no `detected_level`
//! stored). Before the request context was explicit, a spawned window fell
//! back to the default settings and Drilldown's panels came back empty.
//!
//! Needs a real VictoriaLogs (`LOKIVL_VL_BIN`); skipped with one line otherwise.

use crate::support;

use std::collections::BTreeMap;

use crate::support::client::{self, url};
use serde_json::{Value, json};

/// 2026-08-22T10:00:00Z: long closed, so split windows are cached.
const BASE_S: i64 = 1_787_392_800;
/// Two hours of data, one entry per stream every 20 s.
const SPAN_S: i64 = 7200;
const EVERY_S: i64 = 20;

/// Services (the `app` label) and the level word pattern of their lines.
const APPS: &[&str] = &["checkout", "cart", "auth"];
const LEVELS: &[&str] = &["info", "warn", "error", "debug"];

/// The line of entry `i` of `app`, with its level and HTTP status: JSON,
/// logfmt and plain text in turn, level words spelled as shippers write them.
fn line(app: &str, i: i64) -> (String, &'static str, u16) {
    let level = LEVELS[(i % 4) as usize];
    let status = [200, 500, 404][(i % 3) as usize];
    let text = match i % 3 {
        0 => format!(r#"{{"level":"{level}","status":{status},"msg":"{app} request {i}"}}"#),
        1 => format!(
            "level={} status={status} msg=\"{app} {i}\"",
            level.to_uppercase()
        ),
        _ => format!(
            "{} {app} handled request {i} status={status}",
            level.to_uppercase()
        ),
    };
    (text, level, status)
}

/// A Loki push body with every entry of the dataset, labels as Promtail sends them.
fn push_body() -> String {
    let streams: Vec<Value> = APPS
        .iter()
        .map(|app| {
            let values: Vec<Value> = (0..SPAN_S / EVERY_S)
                .map(|i| {
                    let ns = (BASE_S + i * EVERY_S) * 1_000_000_000 + 7;
                    json!([ns.to_string(), line(app, i).0])
                })
                .collect();
            json!({
                "stream": {
                    "namespace": "prod", "app": app, "pod": format!("{app}-7d9f-x1"),
                    "container": app, "cluster": "eu-1", "env": "production"
                },
                "values": values
            })
        })
        .collect();
    json!({ "streams": streams }).to_string()
}

/// lokivl with Loki's discovery defaults, the tenant map `team-a` → 1,
/// `team-b` → 2, and either 20-minute cached windows or no cache at all.
async fn lokivl(vl: &str, split: bool, max_series: usize) -> String {
    let dir = std::env::temp_dir().join(format!(
        "lokivl-e2e-context-{}-{split}-{max_series}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let map = dir.join("tenants.yaml");
    std::fs::write(&map, "team-a: {account_id: 1}\nteam-b: {account_id: 2}\n").unwrap();
    support::start_lokivl_with(vl, |s| {
        s.discovery = engine::discovery::loki_defaults();
        s.tenant.map = Some(map);
        s.query_limits.max_query_series = max_series;
        if split {
            s.cache.windows.interval = std::time::Duration::from_secs(20 * 60);
            s.cache.windows.parallelism = 3;
        } else {
            s.cache.max_bytes = 0;
        }
    })
    .await
}

/// `query_range` over the whole dataset at `step` seconds: status and body.
async fn ask(base: &str, tenant: &str, q: &str, step: &str) -> (u16, Value) {
    let (start, end) = (
        (BASE_S * 1_000_000_000).to_string(),
        ((BASE_S + SPAN_S) * 1_000_000_000).to_string(),
    );
    let (st, _, b) = client::try_get(
        &url(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", q),
                ("start", &start),
                ("end", &end),
                ("step", step),
                ("limit", "5000"),
            ],
        ),
        &[("X-Scope-OrgID", tenant)],
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    let v = serde_json::from_str(&b).unwrap_or_else(|_| Value::String(b.trim().to_owned()));
    (st, v)
}

/// The result of an answer without its timing statistics.
fn result(v: &Value) -> &Value {
    &v["data"]["result"]
}

/// `label value → sum of all points` over the series of a matrix.
fn totals(v: &Value, label: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for s in result(v).as_array().expect("a matrix") {
        let key = s["metric"][label].as_str().unwrap_or("").to_owned();
        let sum: f64 = s["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[1].as_str().unwrap().parse::<f64>().unwrap())
            .sum();
        *out.entry(key).or_default() += sum;
    }
    out
}

/// What the dataset holds: entries of `app` per level (and per status when asked).
fn expected(app: &str, key: impl Fn(&'static str, u16) -> String) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for i in 0..SPAN_S / EVERY_S {
        let (_, level, status) = line(app, i);
        *out.entry(key(level, status)).or_default() += 1.0;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_and_fanout_keep_discovery_and_limits() {
    let Some(bin) = support::backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN)\n"),
        );
        return;
    };
    let vl = support::backend::VictoriaLogs::start(&bin).await;
    vl.ingest_as("1", push_body()).await;
    vl.ingest_as("2", push_body()).await;
    let split = lokivl(&vl.url, true, 500).await;
    let whole = lokivl(&vl.url, false, 500).await;

    // Drilldown's panels for one service, on one tenant and on two.
    let panels = [
        // The level histogram of a service page.
        (
            r#"sum by (detected_level) (count_over_time({service_name="cart"} | drop __error__ [1m]))"#,
            "60",
        ),
        // The labels tab.
        (
            r#"sum(count_over_time({service_name="auth", namespace!=""} [1m])) by (namespace)"#,
            "60",
        ),
        // The fields tab.
        (
            r#"sum by (status) (count_over_time({service_name="checkout"} | json | logfmt | drop __error__, __error_details__ | status!="" [2m]))"#,
            "120",
        ),
        // Grouped by derived labels over a stored-label selector.
        (
            r#"sum by (detected_level) (count_over_time({namespace="prod"}[5m]))"#,
            "300",
        ),
        (
            r#"sum by (service_name) (count_over_time({namespace="prod"}[5m]))"#,
            "300",
        ),
        // Raw series carry the derived labels too.
        (r#"count_over_time({app="cart"}[10m])"#, "600"),
        (r#"sum without (pod) (rate({namespace="prod"}[5m]))"#, "300"),
    ];
    for tenant in ["team-a", "team-a|team-b"] {
        for (q, step) in panels {
            let (s1, a) = ask(&split, tenant, q, step).await;
            let (s2, b) = ask(&whole, tenant, q, step).await;
            assert_eq!((s1, s2), (200, 200), "{tenant} {q}: {a} / {b}");
            assert_eq!(result(&a), result(&b), "{tenant} {q}: split differs");
            assert!(
                !result(&a).as_array().unwrap().is_empty(),
                "{tenant} {q}: empty"
            );
        }
    }

    // The values are the dataset's (each entry in exactly one step).
    let (_, levels) = ask(&split, "team-a", panels[0].0, "60").await;
    assert_eq!(
        totals(&levels, "detected_level"),
        expected("cart", |l, _| l.to_owned())
    );
    let (_, statuses) = ask(&split, "team-a", panels[2].0, "120").await;
    assert_eq!(
        totals(&statuses, "status"),
        expected("checkout", |_, s| s.to_string())
    );
    let (_, services) = ask(&split, "team-a", panels[4].0, "300").await;
    let services: Vec<String> = totals(&services, "service_name").into_keys().collect();
    assert_eq!(services, ["auth", "cart", "checkout"]);
    let (_, raw) = ask(&split, "team-a", panels[5].0, "600").await;
    for s in result(&raw).as_array().unwrap() {
        assert_eq!(s["metric"]["service_name"], "cart", "{s}");
        assert!(
            LEVELS.contains(&s["metric"]["detected_level"].as_str().unwrap()),
            "{s}"
        );
    }
    // Two tenants: raw series name their tenant; a sum adds both tenants' entries.
    let (_, both) = ask(&split, "team-a|team-b", panels[5].0, "600").await;
    let tenants: std::collections::BTreeSet<&str> = result(&both)
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["metric"]["__tenant_id__"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        tenants.into_iter().collect::<Vec<_>>(),
        ["team-a", "team-b"]
    );
    let (_, both) = ask(&split, "team-a|team-b", panels[0].0, "60").await;
    let twice: BTreeMap<String, f64> = expected("cart", |l, _| l.to_owned())
        .into_iter()
        .map(|(k, n)| (k, 2.0 * n))
        .collect();
    assert_eq!(totals(&both, "detected_level"), twice);

    // The series limit applies to the split query as to the whole one.
    let split2 = lokivl(&vl.url, true, 2).await;
    let whole2 = lokivl(&vl.url, false, 2).await;
    let q = r#"sum by (service_name) (count_over_time({namespace="prod"}[1m]))"#;
    let (s1, a) = ask(&split2, "team-a", q, "60").await;
    let (s2, b) = ask(&whole2, "team-a", q, "60").await;
    assert_eq!((s1, s2), (400, 400), "{a} / {b}");
    assert_eq!(a, b);
    assert!(
        a.as_str().unwrap().contains("maximum number of series (2)"),
        "{a}"
    );
}
