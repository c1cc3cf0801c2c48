//! A deeply nested JSON log line through `| json` and Drilldown's detected
//! fields, end to end against a fake VictoriaLogs.
//! Anyone who can write a log line can write this one; the recursive walks
//! lokivl had overflowed a worker's stack on it and aborted the process.
//! Loki answers the same labels (it has no depth limit).

use crate::support::client::*;
use crate::support::fake_vl::*;
use axum::http::StatusCode;
use serde_json::json;

/// Levels of `{"a":` around `{"b":"x"}`: 800 kB of escaped line.
const DEPTH: usize = 100_000;

/// One VictoriaLogs row whose `_msg` is the deep line.
fn deep_row() -> String {
    let msg = format!(
        r#"{}{{\"b\":\"x\"}}{}"#,
        r#"{\"a\":"#.repeat(DEPTH),
        "}".repeat(DEPTH)
    );
    format!(
        r#"{{"_time":"2026-08-22T09:59:58Z","_stream_id":"s1","_stream":"{{app=\"api\"}}","_msg":"{msg}","app":"api"}}"#
    )
}

/// The flattened name of the innermost member.
fn deep_name() -> String {
    format!("{}_b", vec!["a"; DEPTH].join("_"))
}

fn range_url(base: &str, query: &str) -> String {
    let (start, end) = (START_NS.to_string(), END_NS.to_string());
    format!(
        "{base}/loki/api/v1/query_range?{}",
        qs(&[("query", query), ("start", &start), ("end", &end)])
    )
}

#[tokio::test]
async fn json_flattens_a_deep_line_to_its_innermost_member() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(&deep_row()))]).await;
    let a = get(&range_url(
        &h.base,
        r#"{app="api"} | json | keep app, __error__"#,
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.json()["data"]["result"][0]["stream"],
        json!({"app": "api"}),
        "no JSONParserErr"
    );
    let a = get(&range_url(&h.base, r#"{app="api"} | json"#)).await;
    assert_eq!(a.status, StatusCode::OK);
    let stream = &a.json()["data"]["result"][0]["stream"];
    assert_eq!(stream[deep_name()], "x");
}

#[tokio::test]
async fn detected_fields_of_a_deep_line() {
    let h = harness(vec![("/select/logsql/query", Canned::ok(&deep_row()))]).await;
    let a = get(&format!(
        "{}/loki/api/v1/detected_fields?{}",
        h.base,
        qs(&[
            ("query", r#"{app="api"}"#),
            ("start", "2026-08-22T09:00:00.000Z"),
            ("end", "2026-08-22T10:00:00.000Z")
        ])
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    let field = v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["label"] == deep_name().as_str())
        .cloned()
        .unwrap_or_else(|| panic!("no deep field in {}", &a.body[..a.body.len().min(300)]));
    assert_eq!(field["parsers"], json!(["json"]));
    assert_eq!(field["type"], "string");
    assert_eq!(field["jsonPath"].as_array().map(Vec::len), Some(DEPTH + 1));
}
