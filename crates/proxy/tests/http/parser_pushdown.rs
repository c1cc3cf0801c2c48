//! `| json` in metric queries against a fake VictoriaLogs: lokivl sends the
//! parse to VictoriaLogs with the suspect-row count of its guard in the same
//! `stats`, uses the counts when no row is suspect, evaluates the range
//! itself from rows when one is, and always does with `--parser-pushdown
//! false`. The e2e suites check the guard's LogsQL on real servers.

use std::sync::{Arc, Mutex};

use crate::support::client::*;
use crate::support::fake_vl::*;
use crate::support::lokivl::start_proxy;
use axum::http::StatusCode;
use serde_json::json;

const S: i64 = 1_000_000_000;

const QUERY: &str = r#"sum by (level) (count_over_time({app="api"} | json | __error__="" [1m]))"#;

/// Two JSON lines and one that is not JSON, inside (60 s, 120 s].
const ROWS: &str = concat!(
    r#"{"_time":"1970-01-01T00:01:30Z","_stream_id":"s","_stream":"{app=\"api\"}","_msg":"{\"level\":\"error\"}","app":"api"}"#,
    "\n",
    r#"{"_time":"1970-01-01T00:01:40Z","_stream_id":"s","_stream":"{app=\"api\"}","_msg":"{\"level\":\"info\"}","app":"api"}"#,
    "\n",
    r#"{"_time":"1970-01-01T00:01:50Z","_stream_id":"s","_stream":"{app=\"api\"}","_msg":"plain text","app":"api"}"#,
    "\n",
);

/// A fake VictoriaLogs (v1.26's buckets) answering `stats` queries with
/// `stats` and row queries with [`ROWS`]; returns its URL and the queries.
async fn fake(stats: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let app = axum::Router::new().fallback(move |body: axum::body::Bytes| {
        let log = log.clone();
        async move {
            let q = form_urlencoded::parse(&body)
                .find(|(k, _)| k == "query")
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default();
            if q == proxy::backend::dialect::PROBE {
                return (StatusCode::OK, PROBE_V126.to_owned());
            }
            log.lock().unwrap().push(q.clone());
            let body = if q.contains("| stats ") { stats } else { ROWS };
            (StatusCode::OK, body.to_owned())
        }
    });
    let addr = FakeVl::serving(app).await.addr;
    (format!("http://{addr}"), seen)
}

async fn levels(vl: &str, pushdown: bool) -> serde_json::Value {
    let mut settings = proxy::config::Settings::new(vl).unwrap();
    settings.parser_pushdown = pushdown;
    let base = start_proxy(settings).await;
    let time = (120 * S).to_string();
    let a = get(&format!(
        "{base}/loki/api/v1/query?{}",
        qs(&[("query", QUERY), ("time", &time)])
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let mut got = a.json()["data"]["result"].as_array().unwrap().clone();
    got.sort_by_key(|s| s["metric"]["level"].as_str().unwrap_or("").to_owned());
    json!(got)
}

fn is_rows_query(q: &str) -> bool {
    !q.contains("| stats ") && q.contains("| limit ")
}

#[tokio::test]
async fn a_clean_parse_is_counted_in_victorialogs() {
    // The bucket (60 s, 120 s], labelled by its v1.26 start, per level.
    let (vl, seen) = fake(concat!(
        r#"{"_time":"1970-01-01T00:01:00.000000001Z","level":"error","__lokivl_c":"3","__lokivl_x":"0"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:01:00.000000001Z","level":"info","__lokivl_c":"2","__lokivl_x":"0"}"#,
        "\n",
    ))
    .await;
    assert_eq!(
        levels(&vl, true).await,
        json!([
            {"metric": {"level": "error"}, "value": [120, "3"]},
            {"metric": {"level": "info"}, "value": [120, "2"]},
        ])
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].contains(r#"unpack_json from _msg fields ("level")"#),
        "{}",
        seen[0]
    );
    assert!(
        seen[0].contains(r#"count() if ("__lokivl_g":="1") "__lokivl_x""#),
        "{}",
        seen[0]
    );
}

#[tokio::test]
async fn suspect_rows_send_the_range_back_to_the_proxy() {
    // VictoriaLogs' counts are wrong on purpose: they must not be used.
    let (vl, seen) = fake(concat!(
        r#"{"_time":"1970-01-01T00:01:00.000000001Z","level":"error","__lokivl_c":"9","__lokivl_x":"0"}"#,
        "\n",
        r#"{"_time":"1970-01-01T00:01:00.000000001Z","__lokivl_c":"1","__lokivl_x":"1"}"#,
        "\n",
    ))
    .await;
    let expected = json!([
        {"metric": {"level": "error"}, "value": [120, "1"]},
        {"metric": {"level": "info"}, "value": [120, "1"]},
    ]);
    assert_eq!(levels(&vl, true).await, expected);
    let queries = seen.lock().unwrap().clone();
    assert_eq!(queries.len(), 2, "{queries:?}");
    assert!(queries[0].contains("unpack_json"), "{}", queries[0]);
    assert!(is_rows_query(&queries[1]), "{}", queries[1]);
    assert!(!queries[1].contains("unpack_json"), "{}", queries[1]);

    // With the flag off, lokivl reads the rows at once.
    let (vl, seen) = fake("").await;
    assert_eq!(levels(&vl, false).await, expected);
    let queries = seen.lock().unwrap().clone();
    assert_eq!(queries.len(), 1, "{queries:?}");
    assert!(is_rows_query(&queries[0]), "{}", queries[0]);
}

#[tokio::test]
async fn a_rate_under_sum_is_one_series_as_lokis_extractor_makes_it() {
    // Seven entries, each with its own structured metadata `n`, in (0, 60 s]:
    // Loki groups the samples by the sum's labels before the rate
    // (`canInjectVectorGrouping`), so the value is 7/60, not seven 1/60 added.
    let rows: String = (1..=7)
        .map(|i| {
            format!(
                "{{\"_time\":\"1970-01-01T00:00:{:02}Z\",\"_stream_id\":\"s\",\"_stream\":\"{{app=\\\"api\\\"}}\",\"_msg\":\"x\",\"app\":\"api\",\"n\":\"{i}\"}}\n",
                i * 5
            )
        })
        .collect();
    let rows: &'static str = Box::leak(rows.into_boxed_str());
    let vl = fake_vl(vec![("/select/logsql/query", Canned::ok(rows))]).await;
    let base = start_proxy(proxy::config::Settings::new(&vl.url).unwrap()).await;
    let time = (60 * S).to_string();
    let a = get(&format!(
        "{base}/loki/api/v1/query?{}",
        qs(&[
            // The numeric filter runs in the proxy: the rows path.
            ("query", r#"sum(rate({app="api"} | n >= 0 [1m]))"#),
            ("time", &time),
        ])
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.json()["data"]["result"],
        json!([{"metric": {}, "value": [60, "0.11666666666666667"]}])
    );
}
