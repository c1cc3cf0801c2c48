//! `--max-query-length`, `--max-entries-limit-per-query` and `--max-query-series`
//! with non-default values, through the router: Loki's texts carry the
//! configured values, 0 disables, and drilldown-limits reports them.

use crate::support::client::*;
use crate::support::fake_vl::*;
use crate::support::lokivl::start_proxy;
use axum::http::StatusCode;
use proxy::config::{Config, Settings};

const HOUR_NS: i64 = 3_600_000_000_000;

/// Settings from flags (as an operator writes them) pointing at `vl`.
fn settings(vl: &str, args: &[&str]) -> Settings {
    let backend = format!("http://{vl}");
    let mut argv = vec!["lokivl", "--backend", backend.as_str()];
    argv.extend_from_slice(args);
    Config::load(argv).unwrap().validate().unwrap()
}

async fn proxy_with(args: &[&str], answers: Vec<(&str, Canned)>) -> (String, FakeVl) {
    let vl = fake_vl(answers).await;
    let base = start_proxy(settings(&vl.addr, args)).await;
    (base, vl)
}

fn range_url(base: &str, start: i64, end: i64, limit: &str) -> String {
    format!(
        "{base}/loki/api/v1/query_range?{}",
        qs(&[
            ("query", r#"{app="api"}"#),
            ("start", &start.to_string()),
            ("end", &end.to_string()),
            ("limit", limit),
        ])
    )
}

#[tokio::test]
async fn configured_entries_limit_is_enforced_with_its_value_in_the_text() {
    let (base, vl) = proxy_with(
        &["--max-entries-limit-per-query", "50"],
        vec![("/select/logsql/query", Canned::ok(""))],
    )
    .await;
    let a = get(&range_url(&base, END_NS - HOUR_NS, END_NS, "51")).await;
    assert_eq!(
        a.assert_error(StatusCode::BAD_REQUEST),
        "max entries limit per query exceeded, limit > max_entries_limit_per_query (51 > 50)"
    );
    assert!(vl.requests().is_empty(), "refused before VictoriaLogs");
    let a = get(&range_url(&base, END_NS - HOUR_NS, END_NS, "50")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // The default (5000) would refuse this; the configured limit is what counts.
    let (base, _vl) = proxy_with(
        &["--max-entries-limit-per-query", "10000"],
        vec![("/select/logsql/query", Canned::ok(""))],
    )
    .await;
    let a = get(&range_url(&base, END_NS - HOUR_NS, END_NS, "6000")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

#[tokio::test]
async fn zero_disables_the_entries_limit() {
    let (base, _vl) = proxy_with(
        &["--max-entries-limit-per-query", "0"],
        vec![("/select/logsql/query", Canned::ok(""))],
    )
    .await;
    let a = get(&range_url(&base, END_NS - HOUR_NS, END_NS, "1000000")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

#[tokio::test]
async fn configured_query_length_is_enforced_with_its_value_in_the_text() {
    let (base, vl) = proxy_with(
        &["--max-query-length", "2h"],
        vec![("/select/logsql/query", Canned::ok(""))],
    )
    .await;
    let a = get(&range_url(&base, END_NS - 3 * HOUR_NS, END_NS, "10")).await;
    assert_eq!(
        a.assert_error(StatusCode::BAD_REQUEST),
        "the query time range exceeds the limit (query length: 3h0m0s, limit: 2h)"
    );
    assert!(vl.requests().is_empty(), "refused before VictoriaLogs");
    let a = get(&range_url(&base, END_NS - 2 * HOUR_NS, END_NS, "10")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

#[tokio::test]
async fn zero_disables_the_query_length_limit() {
    let (base, _vl) = proxy_with(
        &["--max-query-length", "0s"],
        vec![("/select/logsql/query", Canned::ok(""))],
    )
    .await;
    // 800 h is past Loki's default 721 h.
    let a = get(&range_url(&base, END_NS - 800 * HOUR_NS, END_NS, "10")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

#[tokio::test]
async fn defaults_are_lokis() {
    let (base, _vl) = proxy_with(&[], vec![("/select/logsql/query", Canned::ok(""))]).await;
    let a = get(&range_url(&base, END_NS - 745 * HOUR_NS, END_NS, "10")).await;
    assert_eq!(
        a.assert_error(StatusCode::BAD_REQUEST),
        "the query time range exceeds the limit (query length: 745h0m0s, limit: 30d1h)"
    );
    let a = get(&range_url(&base, END_NS - HOUR_NS, END_NS, "5001")).await;
    assert_eq!(
        a.assert_error(StatusCode::BAD_REQUEST),
        "max entries limit per query exceeded, limit > max_entries_limit_per_query (5001 > 5000)"
    );
}

#[tokio::test]
async fn drilldown_limits_reports_the_configured_values() {
    let (base, _vl) = proxy_with(
        &[
            "--max-query-length",
            "48h",
            "--max-entries-limit-per-query",
            "1234",
            "--max-query-series",
            "77",
        ],
        vec![],
    )
    .await;
    let a = get(&format!("{base}/loki/api/v1/drilldown-limits")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    assert_eq!(v["limits"]["max_query_length"], "2d");
    assert_eq!(v["limits"]["max_entries_limit_per_query"], 1234);
    assert_eq!(v["limits"]["max_query_series"], 77);
}

/// `--max-query-series` reaches the metric engine through the request context.
#[tokio::test]
async fn configured_series_limit_reaches_the_metric_engine() {
    let rows: String = (0..4)
        .map(|i| format!("{{\"_time\":\"1970-01-01T00:01:00.000000001Z\",\"app\":\"a{i}\",\"__lokivl_c\":\"1\"}}\n"))
        .collect();
    let vl = fake_vl(vec![("/select/logsql/query", Canned::ok(&rows))]).await;
    let s = settings(&vl.addr, &["--max-query-series", "3"]);
    assert_eq!(s.query_limits.max_query_series, 3);
    let base = start_proxy(s).await;
    let u = format!(
        "{base}/loki/api/v1/query?{}",
        qs(&[
            (
                "query",
                r#"sum by (app) (count_over_time({app=~"a.+"}[1m]))"#
            ),
            ("time", "120000000000")
        ])
    );
    let a = get(&u).await;
    let text = a.assert_error(StatusCode::BAD_REQUEST);
    assert!(
        text.starts_with("maximum number of series (3) reached for a single query"),
        "{text}"
    );
}
