//! A limit that cuts through entries of one timestamp keeps Loki's choice
//! (the streams with the smallest hashes, `engine::tie`), whatever subset
//! VictoriaLogs' own `limit` returned, split into windows or not.
//!
//! Five streams hold one entry each at one instant; Loki 3.7.8 kept `cron`,
//! then `db`, then `api` of them (`limit=1,2,3`), in both directions.

use std::time::Duration;

use crate::support::client::{get, qs};
use crate::support::fake_vl::{Dataset, FakeVl};
use crate::support::lokivl::start_proxy;
use http::StatusCode;

/// 2025-01-15T00:00:00Z.
const T0: i64 = 1_736_899_200_000_000_000;
const MIN: i64 = 60_000_000_000;
const TIED: i64 = T0 + 30 * MIN + 500;

fn row(ts: i64, app: &str, shard: u32) -> (i64, String) {
    let secs = ts.div_euclid(1_000_000_000);
    let t = time::OffsetDateTime::from_unix_timestamp(secs)
        .expect("time")
        .format(&time::format_description::well_known::Rfc3339)
        .expect("format");
    let t = format!(
        "{}.{:09}Z",
        t.trim_end_matches('Z'),
        ts.rem_euclid(1_000_000_000)
    );
    let stream = format!(r#"{{app="{app}",namespace="dev",shard="{shard}"}}"#);
    let line = serde_json::json!({
        "_time": t, "_stream_id": "1", "_stream": stream, "_msg": format!("line {app}"),
        "app": app, "namespace": "dev", "shard": shard.to_string(),
    });
    (ts, line.to_string())
}

/// The five tied rows, listed so that a newest-N or oldest-N slice of the
/// fake returns other streams than Loki keeps, plus one older and one newer row.
fn rows() -> Vec<(i64, String)> {
    let mut v: Vec<(i64, String)> = [
        ("edge", 8),
        ("api", 4),
        ("batch", 5),
        ("db", 7),
        ("cron", 6),
    ]
    .into_iter()
    .map(|(a, s)| row(TIED, a, s))
    .collect();
    v.push(row(TIED - MIN, "old", 1));
    v.push(row(TIED + MIN, "new", 2));
    v
}

async fn lokivl(addr: &str, windows: Option<Duration>) -> String {
    let mut settings = proxy::config::Settings::new(&format!("http://{addr}")).expect("settings");
    match windows {
        Some(w) => {
            settings.cache.max_bytes = 64 << 20;
            settings.cache.windows.interval = w;
        }
        None => settings.cache.max_bytes = 0,
    }
    start_proxy(settings).await
}

/// The apps of the answer's streams (in Loki's label order).
async fn apps(base: &str, limit: u32, direction: &str) -> Vec<String> {
    let url = format!(
        "{base}/loki/api/v1/query_range?{}",
        qs(&[
            ("query", r#"{namespace="dev"}"#),
            ("start", &T0.to_string()),
            ("end", &(T0 + 60 * MIN).to_string()),
            ("limit", &limit.to_string()),
            ("direction", direction),
        ])
    );
    let a = get(&url).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    v["data"]["result"]
        .as_array()
        .expect("streams")
        .iter()
        .map(|s| s["stream"]["app"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_through_one_timestamp_keeps_what_loki_keeps() {
    let vl = FakeVl::builder().rows(Dataset::fixed(rows())).start().await;
    for windows in [
        None,
        Some(Duration::from_secs(300)),
        Some(Duration::from_secs(60)),
    ] {
        let base = lokivl(&vl.addr, windows).await;
        // Backward: the newer row, then the tied ones in hash order.
        assert_eq!(
            apps(&base, 2, "backward").await,
            ["cron", "new"],
            "{windows:?}"
        );
        assert_eq!(
            apps(&base, 4, "backward").await,
            ["api", "cron", "db", "new"]
        );
        // Forward: the older row first.
        assert_eq!(
            apps(&base, 2, "forward").await,
            ["cron", "old"],
            "{windows:?}"
        );
        assert_eq!(apps(&base, 3, "forward").await, ["cron", "db", "old"]);
        // Past the tied rows, all of them.
        assert_eq!(apps(&base, 7, "backward").await.len(), 7);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_cut_costs_one_call_and_a_tied_cut_one_more() {
    let vl = FakeVl::builder().rows(Dataset::fixed(rows())).start().await;
    let base = lokivl(&vl.addr, None).await;
    let queries = |vl: &FakeVl| {
        vl.requests()
            .iter()
            .filter(|r| r.path == "/select/logsql/query")
            .map(|r| (r.get("start").to_owned(), r.get("limit").to_owned()))
            .collect::<Vec<_>>()
    };
    let last_end = |vl: &FakeVl| {
        let reqs = vl.requests();
        reqs.iter()
            .rfind(|r| r.path == "/select/logsql/query")
            .map(|r| r.get("end").to_owned())
    };
    // limit=1 backward: the newest row, and the next one is older: clean.
    assert_eq!(apps(&base, 1, "backward").await, ["new"]);
    assert_eq!(queries(&vl), [(T0.to_string(), "2".to_owned())]);
    // limit=2: the extra row shares the kept one's timestamp, so that one
    // timestamp is read again, whole (VictoriaLogs' end is inclusive: lokivl
    // sends the nanosecond after it).
    assert_eq!(apps(&base, 2, "backward").await, ["cron", "new"]);
    let q = queries(&vl);
    assert_eq!(q.len(), 3, "{q:?}");
    assert_eq!(q[1], (T0.to_string(), "3".to_owned()));
    assert_eq!(q[2].0, TIED.to_string());
    assert!(q[2].1.parse::<usize>().expect("limit") >= 7, "{q:?}");
    assert_eq!(last_end(&vl), Some((TIED + 1).to_string()));
}

/// With a larger limit lokivl asks a few rows more than it keeps; when one
/// of them is beyond the tied timestamp, every row of that timestamp came
/// back, and Loki's choice is kept without a second call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_beyond_the_tie_spares_the_second_call() {
    let mut data = rows();
    // 45 more rows newer than the tie: with `new`, 46 kept before it.
    data.extend((1..=45).map(|k| row(TIED + MIN + k * 1_000, &format!("n{k:02}"), 3)));
    let vl = FakeVl::builder().rows(Dataset::fixed(data)).start().await;
    let base = lokivl(&vl.addr, None).await;
    let got = apps(&base, 48, "backward").await;
    assert_eq!(got.len(), 48);
    assert!(got.contains(&"cron".to_owned()) && got.contains(&"db".to_owned()));
    assert!(
        !got.iter()
            .any(|a| ["api", "batch", "edge", "old"].contains(&a.as_str()))
    );
    let limits: Vec<String> = vl
        .requests()
        .iter()
        .filter(|r| r.path == "/select/logsql/query")
        .map(|r| r.get("limit").to_owned())
        .collect();
    // 48 kept + 4 more: the 5 tied rows and `old` all came back.
    assert_eq!(limits, ["52"]);
}
