//! Metric queries over the labels Loki's ingest adds (`service_name`,
//! `detected_level`), end to end against a fake VictoriaLogs: what lokivl
//! asks for and the series it answers.

use std::sync::{Arc, Mutex};

use crate::support::client::*;
use crate::support::fake_vl::*;
use crate::support::lokivl::start_proxy;
use axum::http::StatusCode;
use engine::discovery::loki_defaults;
use serde_json::json;

const S: i64 = 1_000_000_000;

async fn proxy_with(discovery: logsql_ast::Discovery, answers: Vec<(&str, Canned)>) -> Harness {
    let vl = fake_vl(answers).await;
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.discovery = discovery;
    let base = start_proxy(settings).await;
    Harness { base, vl }
}

/// A range query over steps 960 s, 1020 s and 1080 s.
async fn range(base: &str, query: &str) -> Answer {
    let (start, end) = ((960 * S).to_string(), (1080 * S).to_string());
    get(&format!(
        "{base}/loki/api/v1/query_range?{}",
        qs(&[
            ("query", query),
            ("start", &start),
            ("end", &end),
            ("step", "60"),
        ])
    ))
    .await
}

fn queries(h: &Harness) -> Vec<String> {
    h.vl.requests()
        .iter()
        .filter(|r| r.path == "/select/logsql/query")
        .map(|r| r.get("query").to_owned())
        .collect()
}

#[tokio::test]
async fn sum_by_service_name_groups_by_stream_and_maps_each() {
    // Buckets (900 s, 960 s] and (960 s, 1020 s], one row per stream.
    let stats = concat!(
        r#"{"_time":"1970-01-01T00:15:00.000000001Z","_stream":"{app=\"api\"}","__lokivl_c":"3"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:15:00.000000001Z","_stream":"{app=\"x\",service=\"api\"}","__lokivl_c":"2"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:16:00.000000001Z","_stream":"{env=\"p\"}","__lokivl_c":"4"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:16:00.000000001Z","_stream":"{app=\"db\",service_name=\"web\"}","__lokivl_c":"1"}"#,
        "\n",
    );
    let h = proxy_with(
        loki_defaults(),
        vec![("/select/logsql/query", Canned::ok(stats))],
    )
    .await;
    let a = range(
        &h.base,
        r#"sum by (service_name) (count_over_time({service_name=~".+"}[1m]))"#,
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.json()["data"]["result"],
        json!([
            {"metric": {"service_name": "api"}, "values": [[960, "5"]]},
            {"metric": {"service_name": "unknown_service"}, "values": [[1020, "4"]]},
            {"metric": {"service_name": "web"}, "values": [[1020, "1"]]},
        ])
    );
    let q = queries(&h);
    assert_eq!(q.len(), 1, "{q:?}");
    // The selector reads the derived name; the grouping is the stream.
    assert!(
        q[0].starts_with(
            r#"{service_name=~".+" or service_name="", "service.name"=~".+" or service_name="", "service.name"="", service=~".+" or "#
        ),
        "{}",
        q[0]
    );
    assert!(
        q[0].ends_with(
            r#" | stats by (_time:60000000000ns offset 1ns, _stream) count() "__lokivl_c""#
        ),
        "{}",
        q[0]
    );
}

/// Rows of service `api`: levels from the line (none in `all good`), a level field and the line again.
const ROWS: &str = concat!(
    r#"{"_time":"1970-01-01T00:15:50Z","_stream":"{app=\"api\"}","_msg":"level=error boom","app":"api"}"#,
    "\n",
    r#"{"_time":"1970-01-01T00:15:55Z","_stream":"{app=\"api\"}","_msg":"all good","app":"api"}"#,
    "\n",
    r#"{"_time":"1970-01-01T00:16:40Z","_stream":"{app=\"api\"}","_msg":"fine","app":"api","level":"WRN"}"#,
    "\n",
    r#"{"_time":"1970-01-01T00:16:45Z","_stream":"{app=\"api\"}","_msg":"[ERROR] disk","app":"api"}"#,
    "\n",
);

/// Counts of entries grouped by stream and level fields, as VictoriaLogs
/// answers the stats request: three groups with a level field and one
/// without (the entries of [`ROWS`], counted by their lines instead).
const LEVEL_STATS: &str = concat!(
    r#"{"_time":"1970-01-01T00:15:00.000000001Z","_stream":"{app=\"api\"}","__lokivl_c":"4"}"#,
    "\n",
    r#"{"_time":"1970-01-01T00:15:00.000000001Z","_stream":"{app=\"api\"}","level":"ERR","__lokivl_c":"2"}"#,
    "\n",
    r#"{"_time":"1970-01-01T00:15:00.000000001Z","_stream":"{app=\"api\",level=\"warning\"}","level":"warning","detected_level":"info","__lokivl_c":"1"}"#,
    "\n",
    r#"{"_time":"1970-01-01T00:16:00.000000001Z","_stream":"{app=\"api\"}","severity_number":"17","__lokivl_c":"5"}"#,
    "\n",
);

/// A fake VictoriaLogs answering `/select/logsql/query` by the kind of
/// request: `stats` gets `stats`, anything else [`ROWS`].
async fn fake_by_kind(stats: &str) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let stats: Arc<str> = stats.into();
    let app = axum::Router::new().fallback(move |body: axum::body::Bytes| {
        let log = log.clone();
        let stats = stats.clone();
        async move {
            let q = form_urlencoded::parse(&body)
                .find(|(k, _)| k == "query")
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default();
            if q == proxy::backend::dialect::PROBE {
                return PROBE_V126.to_owned();
            }
            let answer = if q.contains(" | stats ") {
                stats.to_string()
            } else {
                ROWS.to_owned()
            };
            log.lock().unwrap().push(q);
            answer
        }
    });
    let addr = crate::support::fake_vl::FakeVl::serving(app).await.addr;
    (addr, seen)
}

/// Drilldown's levels panel query, asked of lokivl (Loki's discovery
/// defaults) in front of a fake VictoriaLogs answering stats with `stats`.
async fn drilldown_levels(stats: &str) -> (Answer, Arc<Mutex<Vec<String>>>) {
    let (addr, seen) = fake_by_kind(stats).await;
    let mut settings = proxy::config::Settings::new(&format!("http://{addr}")).unwrap();
    settings.discovery = loki_defaults();
    let base = start_proxy(settings).await;
    let a = range(
        &base,
        r#"sum by (detected_level) (count_over_time({service_name="api"} | drop __error__ [1m]))"#,
    )
    .await;
    (a, seen)
}

#[tokio::test]
async fn sum_by_detected_level_counts_level_fields_in_vl_and_lines_in_rows() {
    let (a, seen) = drilldown_levels(LEVEL_STATS).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // Stats: ERR → error (2), a stored detected_level wins (1 info),
    // severity_number 17 → error (5). Rows: their lines' levels.
    assert_eq!(
        a.json()["data"]["result"],
        json!([
            {"metric": {"detected_level": "error"}, "values": [[960, "3"], [1020, "6"]]},
            {"metric": {"detected_level": "info"}, "values": [[960, "1"]]},
            {"metric": {"detected_level": "unknown"}, "values": [[960, "1"]]},
            {"metric": {"detected_level": "warn"}, "values": [[1020, "1"]]},
        ])
    );
    let q = seen.lock().unwrap().clone();
    assert_eq!(q.len(), 2, "{q:?}");
    let stats = q.iter().find(|q| q.contains(" | stats ")).unwrap();
    let rows = q.iter().find(|q| !q.contains(" | stats ")).unwrap();
    assert!(stats.starts_with(r#"{service_name="api" or "#), "{stats}");
    // Every entry is counted, with the level VictoriaLogs computes from the
    // line where no level field is set; a group without either (or marked
    // residue) calls for the rows.
    assert!(
        stats.contains(r#" | extract_regexp if ("__lokivl_lc":="json") "#),
        "{stats}"
    );
    assert!(
        stats.ends_with(r#""severity_number", "__lokivl_ll", _stream) count() "__lokivl_c""#),
        "{stats}"
    );
    // Only the residue lines without a level field are read, with only the
    // fields needed, bounded.
    assert!(
        rows.contains(r#" and !("detected_level":* or "level":* or "#),
        "{rows}"
    );
    assert!(
        rows.contains(r#" | filter "__lokivl_ll":="residue" | fields _time, _msg, _stream, "#),
        "{rows}"
    );
    assert!(rows.ends_with(" | limit 500001"), "{rows}");
}

#[tokio::test]
async fn sum_by_detected_level_reads_no_rows_when_every_entry_has_a_level_field() {
    // LEVEL_STATS without its group that has no level field.
    let stats = LEVEL_STATS.split_once('\n').map(|(_, rest)| rest).unwrap();
    let (a, seen) = drilldown_levels(stats).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.json()["data"]["result"],
        json!([
            {"metric": {"detected_level": "error"}, "values": [[960, "2"], [1020, "5"]]},
            {"metric": {"detected_level": "info"}, "values": [[960, "1"]]},
        ])
    );
    let q = seen.lock().unwrap().clone();
    assert_eq!(q.len(), 1, "only the stats request: {q:?}");
    assert!(q[0].contains(" | stats "), "{q:?}");
}

#[tokio::test]
async fn sum_by_detected_level_takes_line_levels_from_victorialogs() {
    // The group without a level field comes with the level VictoriaLogs
    // computed from its lines: no row is read.
    let stats = LEVEL_STATS.replacen(
        r#""_stream":"{app=\"api\"}","__lokivl_c":"4""#,
        r#""_stream":"{app=\"api\"}","__lokivl_ll":"warn","__lokivl_c":"4""#,
        1,
    );
    assert_ne!(stats, LEVEL_STATS);
    let (a, seen) = drilldown_levels(&stats).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.json()["data"]["result"],
        json!([
            {"metric": {"detected_level": "error"}, "values": [[960, "2"], [1020, "5"]]},
            {"metric": {"detected_level": "info"}, "values": [[960, "1"]]},
            {"metric": {"detected_level": "warn"}, "values": [[960, "4"]]},
        ])
    );
    let q = seen.lock().unwrap().clone();
    assert_eq!(q.len(), 1, "only the stats request: {q:?}");
}

#[tokio::test]
async fn without_discovery_detected_level_is_a_stored_field() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(""))]).await;
    let a = range(
        &h.base,
        r#"sum by (detected_level) (count_over_time({service_name="api"}[1m]))"#,
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let q = queries(&h);
    assert_eq!(
        q,
        vec![
            r#"{service_name="api" or service_name="", "service.name"="api"} | stats by (_time:60000000000ns offset 1ns, "detected_level") count() "__lokivl_c""#
                .to_owned()
        ]
    );
}

#[tokio::test]
async fn series_without_by_carry_the_synthesized_labels() {
    // Levels on: every entry has `detected_level`, so the series split by
    // it, counted in VictoriaLogs by every field (the level of lines
    // without a level field computed there).
    let stats = concat!(
        r#"{"_time":"1970-01-01T00:15:00.000000001Z","_stream":"{app=\"api\"}","app":"api","__lokivl_ll":"error","__lokivl_c":"1"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:15:00.000000001Z","_stream":"{app=\"api\"}","app":"api","__lokivl_ll":"unknown","__lokivl_c":"1"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:16:00.000000001Z","_stream":"{app=\"api\"}","app":"api","level":"WRN","__lokivl_c":"1"}"#,
        "\n",
    );
    let fields = r#"{"values":[{"value":"_msg","hits":3},{"value":"app","hits":3},{"value":"level","hits":1},{"value":"_stream","hits":3}]}"#;
    let h = proxy_with(
        loki_defaults(),
        vec![
            ("/select/logsql/query", Canned::ok(stats)),
            ("/select/logsql/field_names", Canned::ok(fields)),
        ],
    )
    .await;
    let a = range(&h.base, r#"count_over_time({app="api"}[1m])"#).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let metrics: Vec<serde_json::Value> = a.json()["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["metric"].clone())
        .collect();
    assert_eq!(
        metrics,
        vec![
            json!({"app": "api", "detected_level": "error", "service_name": "api"}),
            json!({"app": "api", "detected_level": "unknown", "service_name": "api"}),
            json!({"app": "api", "detected_level": "warn", "level": "WRN", "service_name": "api"}),
        ]
    );
    let q = queries(&h);
    assert_eq!(q.len(), 1, "no rows read: {q:?}");
    assert!(
        q[0].ends_with(r#""severity_number", "__lokivl_ll", _stream) count() "__lokivl_c""#),
        "{}",
        q[0]
    );

    // Levels off: counted in VictoriaLogs per stream, `service_name` added.
    let stats = concat!(
        r#"{"_time":"1970-01-01T00:15:00.000000001Z","_stream":"{app=\"api\"}","app":"api","__lokivl_c":"3"}"#,
        "\n",
    );
    let fields = r#"{"values":[{"value":"_msg","hits":3},{"value":"app","hits":3},{"value":"_stream","hits":3}]}"#;
    let mut only_names = loki_defaults();
    only_names.log_levels = false;
    let h = proxy_with(
        only_names,
        vec![
            ("/select/logsql/query", Canned::ok(stats)),
            ("/select/logsql/field_names", Canned::ok(fields)),
        ],
    )
    .await;
    let a = range(&h.base, r#"count_over_time({app="api"}[1m])"#).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.json()["data"]["result"],
        json!([{"metric": {"app": "api", "service_name": "api"}, "values": [[960, "3"]]}])
    );
    let q = queries(&h);
    assert!(
        q[0].ends_with(
            r#" | stats by (_time:60000000000ns offset 1ns, "app", _stream) count() "__lokivl_c""#
        ),
        "{}",
        q[0]
    );
}
