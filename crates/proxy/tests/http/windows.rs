//! Log `query_range` split into windows: the merged answer equals the unsplit
//! one (order, limit, streams), closed windows are served from the cache on
//! the next refresh, and the walk stops once `limit` entries are in hand.
//!
//! The fake VictoriaLogs here (the kit's rows mode) holds real rows and
//! honours `start`/`end` (`end` exclusive), the `limit` arg (newest N) and a
//! trailing `sort by (_time) limit N` (oldest N), answering in a scrambled
//! order as VictoriaLogs may.

use std::time::Duration;

use crate::support::client::get_with;
use crate::support::client::qs;
use crate::support::fake_vl::{Dataset, FakeVl};
use crate::support::lokivl::start_proxy;
use http::StatusCode;

const HOUR: i64 = 3_600_000_000_000;
const MIN: i64 = 60_000_000_000;

/// The fake VictoriaLogs in its rows mode, answering in a scrambled order;
/// returns it and its address.
async fn fake_vl(rows: Vec<(i64, String)>) -> (FakeVl, String) {
    let vl = FakeVl::builder()
        .rows_scrambled(Dataset::fixed(rows))
        .start()
        .await;
    let addr = vl.addr.clone();
    (vl, addr)
}

/// `(start, last nanosecond)` of every query call.
fn calls_of(vl: &FakeVl) -> Vec<(i64, i64)> {
    vl.requests()
        .iter()
        .filter(|r| r.path == "/select/logsql/query")
        .map(|r| {
            let num = |k: &str| r.get(k).parse::<i64>().unwrap();
            (num("start"), num("end") - 1)
        })
        .collect()
}

/// One NDJSON row as VictoriaLogs writes it.
fn row(ts: i64, stream: &str, msg: &str, trace: Option<String>) -> String {
    let secs = ts.div_euclid(1_000_000_000);
    let nanos = ts.rem_euclid(1_000_000_000);
    let t = time::OffsetDateTime::from_unix_timestamp(secs)
        .map(|d| {
            d.format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default()
        })
        .unwrap_or_default();
    let t = format!("{}.{nanos:09}Z", t.trim_end_matches('Z'));
    let app = if stream.contains("web") { "web" } else { "api" };
    let mut obj = serde_json::json!({
        "_time": t, "_stream_id": "1", "_stream": stream, "_msg": msg, "app": app,
    });
    if let Some(trace) = trace {
        obj["trace_id"] = trace.into();
    }
    obj.to_string()
}

/// Rows every 7 minutes from `from` for `hours`, in three streams, some with
/// structured metadata (which splits streams without `categorize-labels`).
fn rows(from: i64, hours: i64) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    let mut ts = from;
    let mut i = 0;
    while ts < from + hours * HOUR {
        let stream = [r#"{app="api"}"#, r#"{app="web"}"#, r#"{app="api",env="x"}"#][i % 3];
        let msg = format!("line {i} <{}>", "x".repeat(i % 4));
        let trace = (i % 4 == 0).then(|| format!("t{}", i % 3));
        out.push((ts, row(ts, stream, &msg, trace)));
        ts += 7 * MIN + 13;
        i += 1;
    }
    out
}

async fn proxy(addr: &str, interval: Duration) -> String {
    let mut settings = proxy::config::Settings::new(&format!("http://{addr}")).unwrap();
    settings.cache.max_bytes = 64 << 20;
    settings.cache.windows.interval = interval;
    start_proxy(settings).await
}

/// The answer up to `"stats"` (which holds timings and split counts).
fn result(body: &str) -> &str {
    body.split(",\"stats\":").next().unwrap_or_default()
}

async fn query(
    base: &str,
    start: i64,
    end: i64,
    limit: u32,
    direction: &str,
    categorize: bool,
) -> String {
    let url = format!(
        "{base}/loki/api/v1/query_range?{}",
        qs(&[
            ("query", r#"{app=~"api|web"}"#),
            ("start", &start.to_string()),
            ("end", &end.to_string()),
            ("limit", &limit.to_string()),
            ("direction", direction),
        ])
    );
    let headers: &[(&str, &str)] = if categorize {
        &[("X-Loki-Response-Encoding-Flags", "categorize-labels")]
    } else {
        &[]
    };
    let a = get_with(&url, headers).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.body
}

/// 2025-01-15T00:00:00Z, an hour boundary.
const T0: i64 = 1_736_899_200_000_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windowed_answers_equal_the_unsplit_answer() {
    let (_vl, addr) = fake_vl(rows(T0 - HOUR, 8)).await;
    let split = proxy(&addr, Duration::from_secs(3600)).await;
    let whole = proxy(&addr, Duration::ZERO).await;
    // Unaligned edges, an edge on a boundary, and the exact first and last nanosecond of rows.
    let ranges = [
        (T0 + 17 * MIN + 5, T0 + 5 * HOUR + 3 * MIN),
        (T0, T0 + 4 * HOUR),
        (T0 - HOUR, T0 + 3 * HOUR + 1),
        (T0 + 7 * MIN + 13, T0 + 2 * HOUR + 14 * MIN + 26),
    ];
    let mut checked = 0;
    for (start, end) in ranges {
        // 5: ends inside the first window; 30: mid-window later on; 1000: everything.
        for limit in [5, 30, 1000] {
            for direction in ["backward", "forward"] {
                for categorize in [false, true] {
                    let a = query(&split, start, end, limit, direction, categorize).await;
                    let b = query(&whole, start, end, limit, direction, categorize).await;
                    assert_eq!(
                        result(&a),
                        result(&b),
                        "{start}..{end} limit {limit} {direction} categorize {categorize}"
                    );
                    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
                    let n: usize = v["data"]["result"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s["values"].as_array().map_or(0, Vec::len))
                        .sum();
                    assert!(n > 0 && n <= limit as usize);
                    assert_eq!(v["data"]["stats"]["summary"]["totalEntriesReturned"], n);
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 48);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_ending_near_now_equals_the_unsplit_answer() {
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    )
    .unwrap();
    let (_vl, addr) = fake_vl(rows(now - 4 * HOUR, 4)).await;
    let split = proxy(&addr, Duration::from_secs(3600)).await;
    let whole = proxy(&addr, Duration::ZERO).await;
    for direction in ["backward", "forward"] {
        for limit in [10, 1000] {
            let a = query(&split, now - 3 * HOUR, now, limit, direction, false).await;
            let b = query(&whole, now - 3 * HOUR, now, limit, direction, false).await;
            assert_eq!(result(&a), result(&b), "{direction} {limit}");
        }
    }
}

#[tokio::test]
async fn backward_walk_stops_once_the_limit_is_met() {
    let (vl, addr) = fake_vl(rows(T0, 6)).await;
    let mut settings = proxy::config::Settings::new(&format!("http://{addr}")).unwrap();
    settings.cache.windows.parallelism = 1;
    let base = start_proxy(settings).await;
    // ~8 rows per hour: 5 entries are all in the newest window.
    query(&base, T0, T0 + 6 * HOUR, 5, "backward", false).await;
    assert_eq!(calls_of(&vl), vec![(T0 + 5 * HOUR, T0 + 6 * HOUR - 1)]);
    // Forward: the oldest window, with inclusive VictoriaLogs bounds.
    query(&base, T0 + 1, T0 + 6 * HOUR, 5, "forward", false).await;
    assert_eq!(calls_of(&vl)[1], (T0 + 1, T0 + HOUR - 1));
    assert_eq!(calls_of(&vl).len(), 2);
}

#[tokio::test]
async fn a_dashboard_refresh_reuses_closed_windows() {
    let (vl, addr) = fake_vl(rows(T0, 6)).await;
    let base = proxy(&addr, Duration::from_secs(3600)).await;
    let first = query(
        &base,
        T0 + MIN,
        T0 + 5 * HOUR + MIN,
        1000,
        "backward",
        false,
    )
    .await;
    assert_eq!(calls_of(&vl).len(), 6);
    // The refresh moved by 30 s: only the two clipped edge windows are asked again.
    let second = query(
        &base,
        T0 + MIN + 30_000_000_000,
        T0 + 5 * HOUR + MIN + 30_000_000_000,
        1000,
        "backward",
        false,
    )
    .await;
    let calls = calls_of(&vl);
    assert_eq!(calls.len(), 8, "{calls:?}");
    assert_eq!(calls[6].0, T0 + 5 * HOUR);
    assert_eq!(calls[7].0, T0 + MIN + 30_000_000_000);
    assert_ne!(result(&first), result(&second));
}

#[tokio::test]
async fn windows_are_not_shared_between_tenants() {
    let (vl, addr) = fake_vl(rows(T0, 3)).await;
    let base = proxy(&addr, Duration::from_secs(3600)).await;
    let url = |start: i64| {
        format!(
            "{base}/loki/api/v1/query_range?{}",
            qs(&[
                ("query", r#"{app="api"}"#),
                ("start", &start.to_string()),
                ("end", &(T0 + 3 * HOUR).to_string()),
                ("limit", "1000"),
            ])
        )
    };
    let a = get_with(&url(T0), &[("X-Scope-OrgID", "1:0")]).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(calls_of(&vl).len(), 3);
    // Another start (so the whole-answer cache cannot hit), same middle window.
    let b = get_with(&url(T0 + MIN), &[("X-Scope-OrgID", "2:0")]).await;
    assert_eq!(b.status, StatusCode::OK, "{}", b.body);
    assert_eq!(calls_of(&vl).len(), 6);
    let a2 = get_with(&url(T0 + MIN), &[("X-Scope-OrgID", "1:0")]).await;
    assert_eq!(a2.status, StatusCode::OK);
    // Tenant a reuses its own two full windows; only the clipped first one is new.
    assert_eq!(calls_of(&vl).len(), 7);
}

#[tokio::test]
async fn metadata_refreshes_within_a_bucket_share_one_backend_call() {
    let vl = crate::support::fake_vl::fake_vl(vec![(
        "/select/logsql/stream_field_names",
        crate::support::fake_vl::Canned::ok(r#"{"values":[{"value":"app","hits":1}]}"#),
    )])
    .await;
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.cache.max_bytes = 64 << 20;
    let base = start_proxy(settings).await;
    let labels = |start: i64, end: i64| {
        format!(
            "{base}/loki/api/v1/labels?{}",
            qs(&[("start", &start.to_string()), ("end", &end.to_string())])
        )
    };
    // A closed 5 h range refreshed 1 and 2 minutes later: one 5-minute bucket.
    for shift in [0, MIN, 2 * MIN] {
        let a = get_with(&labels(T0 + MIN + shift, T0 + 5 * HOUR + MIN + shift), &[]).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        assert_eq!(a.body, r#"{"status":"success","data":["app"]}"#);
    }
    let reqs = vl.requests();
    assert_eq!(reqs.len(), 1);
    // The widened bucket is what VictoriaLogs is asked for.
    assert_eq!(reqs[0].get("start"), T0.to_string());
    assert_eq!(reqs[0].last_ns(), T0 + 5 * HOUR + 5 * MIN);
    // The next bucket is a new entry.
    get_with(&labels(T0 + 6 * MIN, T0 + 5 * HOUR + 6 * MIN), &[]).await;
    assert_eq!(vl.requests().len(), 2);
}

/// A proxy whose requests may read `max_rows` rows where lokivl runs the
/// pipeline, windows of one hour fetched one at a time (a deterministic order).
async fn budgeted_proxy(addr: &str, max_rows: usize) -> String {
    let mut settings = proxy::config::Settings::new(&format!("http://{addr}")).unwrap();
    settings.cache.max_bytes = 64 << 20;
    settings.cache.windows.interval = Duration::from_secs(3600);
    settings.cache.windows.parallelism = 1;
    settings.work.max_rows = max_rows;
    start_proxy(settings).await
}

#[tokio::test]
async fn the_row_budget_is_the_requests_not_each_windows() {
    // 9 rows per hour; six windows; a budget of 20 rows for the whole request
    // (each window alone is far below it).
    let (vl, addr) = fake_vl(rows(T0, 6)).await;
    let base = budgeted_proxy(&addr, 20).await;
    let url = |end: i64| {
        format!(
            "{base}/loki/api/v1/query_range?{}",
            qs(&[
                // `line_format` runs in lokivl: rows are read and counted.
                ("query", r#"{app=~"api|web"} | line_format "{{.app}}""#),
                ("start", &T0.to_string()),
                ("end", &end.to_string()),
                ("limit", "1000"),
                ("direction", "forward"),
            ])
        )
    };
    let a = get_with(&url(T0 + 6 * HOUR), &[]).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(v["data"]["stats"]["summary"]["totalLinesProcessed"], 20);
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("stopped after reading 20 entries"),
        "{}",
        a.body
    );
    // Two whole windows (9 rows each), then 2 rows of the third; the rest
    // are not asked for at all.
    let calls = calls_of(&vl);
    assert_eq!(
        calls.iter().map(|c| c.0).collect::<Vec<_>>(),
        vec![T0, T0 + HOUR, T0 + 2 * HOUR],
        "{calls:?}"
    );
    // The windows the budget cut are not stored as their answers: a request
    // sharing them (another end, so neither whole answer nor last window
    // match) reads them again, with a budget of its own; the two whole ones
    // come from the cache.
    let b = get_with(&url(T0 + 6 * HOUR - MIN), &[]).await;
    assert_eq!(b.status, StatusCode::OK, "{}", b.body);
    let calls = calls_of(&vl);
    assert_eq!(
        calls[3..].iter().map(|c| c.0).collect::<Vec<_>>(),
        vec![T0 + 2 * HOUR, T0 + 3 * HOUR, T0 + 4 * HOUR],
        "{calls:?}"
    );
}

#[tokio::test]
async fn the_metric_row_budget_spans_all_windows() {
    let (_vl, addr) = fake_vl(rows(T0, 6)).await;
    let base = budgeted_proxy(&addr, 25).await;
    let url = |end: i64| {
        format!(
            "{base}/loki/api/v1/query_range?{}",
            qs(&[
                (
                    "query",
                    // `regexp` runs in lokivl (a `| json` or `| logfmt`
                    // here would be skipped, as Loki skips a parser whose
                    // labels no one reads).
                    r#"sum(count_over_time({app=~"api|web"} | regexp "(?P<x>a)" [5m]))"#,
                ),
                ("start", &T0.to_string()),
                ("end", &end.to_string()),
                ("step", "300"),
            ])
        )
    };
    // Three windows reading 18 rows in all: within the budget.
    let a = get_with(&url(T0 + 2 * HOUR), &[]).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // Six windows of at most 10 rows each, 52 in all: past it, as one
    // unsplit query over the range would be.
    let b = get_with(&url(T0 + 6 * HOUR), &[]).await;
    assert_eq!(
        b.assert_error(StatusCode::BAD_REQUEST),
        "the metric query's pipeline runs in lokivl and more than 25 entries fall in the query range; narrow the selector or the time range"
    );
}
