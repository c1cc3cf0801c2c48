//! Label names, label values and series.

use serde_json::{Value, json};

use super::get_json;

/// Runs the label checks against lokivl at `base` over `range`.
pub(super) async fn check_labels(base: &str, range: &[(&str, &str)]) {
    // Label names: every stream label of the data, nothing else.
    let got = get_json(base, "/loki/api/v1/labels", range).await;
    assert_eq!(got["status"], "success");
    assert_eq!(sorted_strings(&got["data"]), ["app", "env", "team"]);

    // Label values, then narrowed by a selector.
    let got = get_json(base, "/loki/api/v1/label/app/values", range).await;
    assert_eq!(
        sorted_strings(&got["data"]),
        ["api", "api-gateway", "worker"]
    );
    let mut with_query = range.to_vec();
    with_query.push(("query", r#"{env="prod"}"#));
    let got = get_json(base, "/loki/api/v1/label/app/values", &with_query).await;
    assert_eq!(sorted_strings(&got["data"]), ["api", "api-gateway"]);

    // Series: exact label sets; `=~` is anchored.
    let mut series = range.to_vec();
    series.push(("match[]", r#"{app=~"api"}"#));
    series.push(("match[]", r#"{team="data"}"#));
    let got = get_json(base, "/loki/api/v1/series", &series).await;
    let mut sets: Vec<Value> = got["data"].as_array().expect("series list").clone();
    sets.sort_by_key(|v| v.to_string());
    assert_eq!(
        sets,
        vec![
            json!({"app": "api", "env": "prod"}),
            json!({"app": "worker", "env": "dev", "team": "data"}),
        ]
    );
}

fn sorted_strings(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect();
    out.sort();
    out
}
