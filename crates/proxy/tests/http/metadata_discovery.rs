//! `labels`, `label/{name}/values` and `series` with Loki's label discovery
//! on: `service_name` is listed, its values are derived per stream, series
//! carry it and selectors match its derived value (fake VictoriaLogs).

use crate::support::client::*;
use crate::support::fake_vl::*;
use crate::support::lokivl::start_proxy;
use axum::http::StatusCode;
use engine::discovery::loki_defaults;
use serde_json::json;

/// Four streams as VictoriaLogs' `/select/logsql/streams` reports them:
/// `app` only, `service` before `app`, nothing Loki derives a name from,
/// and a stored `service_name`; plus a dotted OTel name.
const STREAMS: &str = r#"{"values":[
    {"value":"{app=\"api\",env=\"prod\"}","hits":4},
    {"value":"{app=\"other\",service=\"svc\"}","hits":1},
    {"value":"{env=\"orphan\"}","hits":1},
    {"value":"{app=\"ig\",service_name=\"stored\"}","hits":1},
    {"value":"{k8s.container.name=\"side\"}","hits":2}
]}"#;

const NAMES: &str = r#"{"values":[{"value":"env","hits":3},{"value":"app","hits":9},{"value":"service","hits":1}]}"#;

async fn proxy_with(discovery: logsql_ast::Discovery, answers: Vec<(&str, Canned)>) -> Harness {
    let vl = fake_vl(answers).await;
    let mut settings = proxy::config::Settings::new(&format!("http://{}", vl.addr)).unwrap();
    settings.discovery = discovery;
    let base = start_proxy(settings).await;
    Harness { base, vl }
}

fn url(base: &str, path: &str, extra: &[(&str, &str)]) -> String {
    let (start, end) = (START_NS.to_string(), END_NS.to_string());
    let mut pairs: Vec<(&str, &str)> = vec![("start", &start), ("end", &end)];
    pairs.extend_from_slice(extra);
    format!("{base}{path}?{}", qs(&pairs))
}

/// The LogsQL `{service_name="api"}` becomes with Loki's default list: each
/// link of the chain is read under its Loki name, then (for Loki's OTLP index
/// labels) under the OTel attribute VictoriaLogs stores.
fn api_filter() -> String {
    let mut chain: Vec<String> = Vec::new();
    for l in std::iter::once("service_name")
        .chain(engine::discovery::SERVICE_NAME_LABELS.iter().copied())
    {
        chain.push(l.to_owned());
        if let Some(attr) = logsql_ast::otel::index_attribute(l) {
            chain.push(format!(r#""{attr}""#));
        }
    }
    let groups = (0..chain.len())
        .map(|i| {
            let mut ms: Vec<String> = chain[..i].iter().map(|l| format!(r#"{l}="""#)).collect();
            ms.push(format!(r#"{}="api""#, chain[i]));
            ms.join(", ")
        })
        .collect::<Vec<_>>()
        .join(" or ");
    // One stream filter with a group per link of the chain.
    format!("{{{groups}}}")
}

#[tokio::test]
async fn labels_list_service_name_when_a_stream_is_in_range() {
    let h = proxy_with(
        loki_defaults(),
        vec![("/select/logsql/stream_field_names", Canned::ok(NAMES))],
    )
    .await;
    let a = get(&url(&h.base, "/loki/api/v1/labels", &[])).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.body,
        r#"{"status":"success","data":["app","env","service","service_name"]}"#
    );
    // `query=` on service_name selects on the derived value.
    let a = get(&url(
        &h.base,
        "/loki/api/v1/labels",
        &[("query", r#"{service_name="api"}"#)],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(h.vl.requests()[1].get("query"), api_filter());

    // No stream in range: nothing to derive a name for.
    let h = proxy_with(
        loki_defaults(),
        vec![(
            "/select/logsql/stream_field_names",
            Canned::ok(r#"{"values":[]}"#),
        )],
    )
    .await;
    let a = get(&url(&h.base, "/loki/api/v1/labels", &[])).await;
    assert_eq!(a.body, r#"{"status":"success","data":[]}"#);
}

#[tokio::test]
async fn service_name_values_are_derived_per_stream() {
    let h = proxy_with(
        loki_defaults(),
        vec![("/select/logsql/streams", Canned::ok(STREAMS))],
    )
    .await;
    let a = get(&url(&h.base, "/loki/api/v1/label/service_name/values", &[])).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // `side` comes from `k8s_container_name`, the Loki name of the dotted field.
    assert_eq!(
        a.body,
        r#"{"status":"success","data":["api","side","stored","svc","unknown_service"]}"#
    );
    let reqs = h.vl.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(reqs[0].path, "/select/logsql/streams");
    assert_eq!(reqs[0].get("query"), "*");
    assert!(!reqs[0].has("limit"));

    // With a selector, only the streams it selects count.
    let a = get(&url(
        &h.base,
        "/loki/api/v1/label/service_name/values",
        &[("query", r#"{env="prod"}"#)],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(h.vl.requests()[1].get("query"), r#"{env="prod"}"#);
}

#[tokio::test]
async fn other_label_values_select_on_the_derived_service_name() {
    let h = proxy_with(
        loki_defaults(),
        vec![
            ("/select/logsql/stream_field_names", Canned::ok(NAMES)),
            (
                "/select/logsql/stream_field_values",
                Canned::ok(r#"{"values":[{"value":"prod","hits":4}]}"#),
            ),
        ],
    )
    .await;
    let a = get(&url(
        &h.base,
        "/loki/api/v1/label/env/values",
        &[("query", r#"{service_name="api"}"#)],
    ))
    .await;
    assert_eq!(a.body, r#"{"status":"success","data":["prod"]}"#);
    let reqs = h.vl.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    for r in &reqs {
        assert_eq!(r.get("query"), api_filter(), "{}", r.path);
    }
    assert_eq!(reqs[0].get("field"), "env");
}

#[tokio::test]
async fn series_carry_service_name_and_match_it() {
    let h = proxy_with(
        loki_defaults(),
        vec![("/select/logsql/streams", Canned::ok(STREAMS))],
    )
    .await;
    let a = get(&url(
        &h.base,
        "/loki/api/v1/series",
        &[("match[]", r#"{service_name="api"}"#)],
    ))
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(h.vl.requests()[0].get("query"), api_filter());
    // The fake answers every stream; each set gets its own service_name.
    assert_eq!(
        a.json(),
        json!({"status": "success", "data": [
            {"app": "api", "env": "prod", "service_name": "api"},
            {"app": "ig", "service_name": "stored"},
            {"app": "other", "service": "svc", "service_name": "svc"},
            {"env": "orphan", "service_name": "unknown_service"},
            {"k8s_container_name": "side", "service_name": "side"},
        ]})
    );
}

#[tokio::test]
async fn discovery_off_keeps_stored_labels_only() {
    let h = proxy_with(
        logsql_ast::Discovery::default(),
        vec![
            ("/select/logsql/stream_field_names", Canned::ok(NAMES)),
            (
                "/select/logsql/stream_field_values",
                Canned::ok(r#"{"values":[]}"#),
            ),
            ("/select/logsql/streams", Canned::ok(STREAMS)),
        ],
    )
    .await;
    let a = get(&url(&h.base, "/loki/api/v1/labels", &[])).await;
    assert_eq!(
        a.body,
        r#"{"status":"success","data":["app","env","service"]}"#
    );
    let a = get(&url(&h.base, "/loki/api/v1/label/service_name/values", &[])).await;
    assert_eq!(a.body, r#"{"status":"success","data":[]}"#);
    let a = get(&url(
        &h.base,
        "/loki/api/v1/series",
        &[("match[]", r#"{service_name="api"}"#)],
    ))
    .await;
    assert_eq!(a.json()["data"][0], json!({"app": "api", "env": "prod"}));
    let paths: Vec<(String, String)> =
        h.vl.requests()
            .iter()
            .map(|r| (r.path.clone(), r.get("query").to_owned()))
            .collect();
    assert_eq!(
        paths,
        [
            ("/select/logsql/stream_field_names", "*"),
            ("/select/logsql/stream_field_names", "*"),
            ("/select/logsql/stream_field_values", "*"),
            // Discovery off: the stored label, or the OTel attribute behind
            // Loki's OTLP `service_name` label.
            (
                "/select/logsql/streams",
                r#"{service_name="api" or service_name="", "service.name"="api"}"#,
            ),
        ]
        .map(|(p, q)| (p.to_owned(), q.to_owned()))
    );
}
