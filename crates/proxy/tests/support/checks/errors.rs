//! The instant query Grafana's health check sends, and Loki's 400s for bad
//! queries.

use serde_json::{Value, json};

use crate::support::client::{self, url};

/// Grafana's health check, Loki's 400s for bad queries.
pub(super) async fn check_instant_and_errors(base: &str) {
    let u = url(
        base,
        "/loki/api/v1/query",
        &[
            ("query", "vector(1)+vector(1)"),
            ("time", "4000000000"),
            ("direction", "backward"),
        ],
    );
    let (status, _, body) = client::try_get(&u, &[])
        .await
        .map(client::Answer::parts)
        .expect("lokivl answers");
    assert_eq!(status, 200, "{body}");
    let got: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(got["data"]["resultType"], "vector");
    assert_eq!(
        got["data"]["result"],
        json!([{"metric": {}, "value": [4000000000u64, "2"]}])
    );

    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case<'_>; 4] = [
        (
            "/loki/api/v1/query",
            &[("query", r#"{app="api"}"#)],
            "log queries are not supported as an instant query type, please change your query to a range query type",
        ),
        (
            "/loki/api/v1/query_range",
            &[("query", r#"{app="api""#)],
            "parse error at line 1, col 11: syntax error: unexpected $end, expecting } or ,",
        ),
        (
            "/loki/api/v1/query_range",
            &[("query", r#"{app=~".*"}"#)],
            r#"parse error : queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~".*" does not meet this requirement, but app=~".+" will"#,
        ),
        (
            "/loki/api/v1/query_range",
            &[("query", r#"{app="api"}"#), ("limit", "10000")],
            "max entries limit per query exceeded, limit > max_entries_limit_per_query (10000 > 5000)",
        ),
    ];
    for (path, params, text) in cases {
        let (status, ctype, body) = client::try_get(&url(base, path, params), &[])
            .await
            .map(client::Answer::parts)
            .expect("lokivl answers");
        assert_eq!(status, 400, "{params:?}");
        assert!(ctype.starts_with("text/plain"), "{params:?}: {ctype}");
        assert_eq!(body.trim_end(), text, "{params:?}");
    }
}
