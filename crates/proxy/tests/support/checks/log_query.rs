//! One log query against lokivl, compared with the model's answer.

use serde_json::{Value, json};

use super::model::{Model, expected_result};
use crate::support::client::{self, url};
use crate::support::dataset::Entry;

/// One log query check: lokivl's `data.result` must equal the model's.
#[allow(clippy::too_many_arguments)]
pub(super) async fn check_log_query(
    base: &str,
    entries: &[Entry],
    query: &str,
    model: &Model<'_>,
    (start, end): (i64, i64),
    limit: usize,
    backward: bool,
    categorize: bool,
) {
    let (s, e, l) = (start.to_string(), end.to_string(), limit.to_string());
    let direction = if backward { "backward" } else { "forward" };
    let u = url(
        base,
        "/loki/api/v1/query_range",
        &[
            ("query", query),
            ("start", &s),
            ("end", &e),
            ("limit", &l),
            ("direction", direction),
            ("step", "15000ms"),
        ],
    );
    let headers: &[(&str, &str)] = if categorize {
        &[("X-Loki-Response-Encoding-Flags", "categorize-labels")]
    } else {
        &[]
    };
    let (status, ctype, body) = client::try_get(&u, headers)
        .await
        .map(client::Answer::parts)
        .expect("lokivl answers");
    assert_eq!(status, 200, "{query}: {body}");
    assert!(ctype.starts_with("application/json"), "{query}: {ctype}");
    let got: Value = serde_json::from_str(&body).expect("valid JSON");
    assert_eq!(got["status"], "success", "{query}");
    assert_eq!(got["data"]["resultType"], "streams", "{query}");
    if categorize {
        assert_eq!(
            got["data"]["encodingFlags"],
            json!(["categorize-labels"]),
            "{query}"
        );
    } else {
        assert!(got["data"].get("encodingFlags").is_none(), "{query}");
    }
    let want = expected_result(entries, model, start, end, limit, backward, categorize);
    assert!(
        want.as_array().is_some_and(|a| !a.is_empty()) || query.contains("nomatch"),
        "{query}: the model selects nothing, so the check would prove little"
    );
    assert_eq!(
        got["data"]["result"], want,
        "{query} (categorize={categorize}, {direction})"
    );
}
