//! `/loki/api/v1/format_query` end to end: lokivl must send the exact status,
//! content type and body bytes that a real Loki v3.7.8 sent, as recorded in
//! logql-parser's golden file (see crates/logql-parser/tests/format_query.rs).

use crate::support::client::*;
use crate::support::fake_vl::*;
use axum::http::{Method, StatusCode};

#[derive(serde::Deserialize)]
struct Row {
    query: String,
    status: u16,
    body: String,
}

/// Rows where lokivl knowingly differs; the reasons are in the parser's golden test.
const KNOWN_MISMATCHES: &[&str] = &[
    r#"{app="foo"} | logfmt | status_code > 0x10"#,
    r#"{app="a"} | logfmt | x > 10 | unwrap y"#,
];

fn golden() -> Vec<Row> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../logql-parser/tests/data/format_query.golden.jsonl"
    );
    std::fs::read_to_string(path)
        .expect("golden file")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("golden row"))
        .collect()
}

#[tokio::test]
async fn answers_match_recorded_loki_bytes() {
    let h = harness(vec![]).await;
    let rows = golden();
    assert!(rows.len() > 400);
    let mut checked = 0;
    for (i, row) in rows.iter().enumerate() {
        if KNOWN_MISMATCHES.contains(&row.query.as_str()) {
            continue;
        }
        let form = qs(&[("query", &row.query)]);
        // Both ways Loki reads the parameter: URL query and form body (the
        // client cannot build URIs over 64 KiB, so the longest rows are POSTed).
        let a = if i % 2 == 0 && form.len() < 60_000 {
            get(&format!("{}/loki/api/v1/format_query?{form}", h.base)).await
        } else {
            request(
                Method::POST,
                &format!("{}/loki/api/v1/format_query", h.base),
                &form,
                "application/x-www-form-urlencoded",
            )
            .await
        };
        assert_eq!(a.status.as_u16(), row.status, "{:?}", row.query);
        assert_eq!(a.content_type(), "application/json; charset=utf-8");
        assert_eq!(a.body, row.body, "{:?}", row.query);
        checked += 1;
    }
    assert_eq!(checked, rows.len() - KNOWN_MISMATCHES.len());
    // format_query never touches VictoriaLogs.
    assert!(h.vl.requests().is_empty());
}

#[tokio::test]
async fn typical_answers() {
    let h = harness(vec![]).await;
    let url = |q: &str| {
        format!(
            "{}/loki/api/v1/format_query?{}",
            h.base,
            qs(&[("query", q)])
        )
    };
    let a = get(&url(
        r#"sum by (level) (count_over_time({app="x"} |= "err" | json [5m])) > 1"#,
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(
        a.body,
        "{\"status\":\"success\",\"data\":\"(sum by (level)(count_over_time({app=\\\"x\\\"} |= \\\"err\\\" | json[5m])) \\u003e 1)\"}\n"
    );
    let a = get(&url(r#"{app="x""#)).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        a.json(),
        serde_json::json!({"status": "invalid-query", "error": "parse error at line 1, col 9: syntax error: unexpected $end, expecting } or ,"})
    );
    // No query at all: Loki's empty-input error.
    let a = get(&format!("{}/loki/api/v1/format_query", h.base)).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        a.body,
        "{\"status\":\"invalid-query\",\"error\":\"parse error : syntax error: unexpected $end\"}\n"
    );
}

#[tokio::test]
async fn a_form_body_over_10_mib_leaves_the_urls_query() {
    // Loki reads `query` with `FormValue`: an unreadable body is dropped and
    // the URL's value answered (recorded from Loki 3.7.8: 200 `{a="b"}`).
    let h = harness(vec![]).await;
    let body = format!("query={}", "a".repeat(10 << 20));
    let a = request(
        Method::POST,
        &format!(
            "{}/loki/api/v1/format_query?query=%7Ba%3D%22b%22%7D",
            h.base
        ),
        &body,
        "application/x-www-form-urlencoded",
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.body,
        "{\"status\":\"success\",\"data\":\"{a=\\\"b\\\"}\"}\n"
    );
}
