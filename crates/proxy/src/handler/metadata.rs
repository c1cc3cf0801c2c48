//! `labels`, `label/{name}/values` and `series`: answered from VictoriaLogs' stream index.
//!
//! No `limit` is sent to VictoriaLogs: with a limit it returns an arbitrary
//! subset, and Loki's answers are complete for the range.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use axum::extract::{Path, State};
use axum::response::Response;
use bytes::BytesMut;
use http::StatusCode;
use logql_parser::Expr;

use super::{AppState, json_response};
use crate::backend::Endpoint;
use crate::error::ApiError;
use crate::labels::{parse_stream, sanitize_label_name};
use crate::params::{self, Bounds, Form, timestamp::now_ns};

/// Loki's answer when `query`/`match[]` is a full query rather than a selector.
const ONLY_MATCHERS: &str = "only label matchers are supported";

/// VictoriaLogs' answer shape for field names, values and streams.
#[derive(Debug, serde::Deserialize)]
struct Values<'a> {
    #[serde(borrow)]
    values: Vec<Hit<'a>>,
}

#[derive(Debug, serde::Deserialize)]
struct Hit<'a> {
    #[serde(borrow)]
    value: Cow<'a, str>,
}

/// `GET|POST /loki/api/v1/labels`.
///
/// # Errors
/// [`ApiError`] for bad parameters or selectors and backend failures.
pub async fn labels(State(state): State<AppState>, form: Form) -> Result<Response, ApiError> {
    let bounds = metadata_bounds(&form)?;
    let query = selector_query(form.get("query"))?;
    let names = fetch_values(&state, Endpoint::StreamFieldNames, &query, bounds, None).await?;
    // VictoriaLogs keeps OTel's dotted names; Loki (and LogQL) only know `k8s_pod_name`.
    Ok(string_list(
        names
            .iter()
            .map(|n| sanitize_label_name(n).into_owned())
            .collect(),
    ))
}

/// `GET|POST /loki/api/v1/label/{name}/values`.
///
/// # Errors
/// [`ApiError`] for bad parameters or selectors and backend failures.
pub async fn label_values(
    State(state): State<AppState>,
    Path(name): Path<String>,
    form: Form,
) -> Result<Response, ApiError> {
    let bounds = metadata_bounds(&form)?;
    let query = selector_query(form.get("query"))?;
    // `name` is a Loki name; the stream fields it stands for may be dotted
    // (`k8s_pod_name` ← `k8s.pod.name`), so look the fields up first.
    let names = fetch_values(&state, Endpoint::StreamFieldNames, &query, bounds, None).await?;
    let mut fields: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| sanitize_label_name(n) == name.as_str())
        .collect();
    if fields.is_empty() {
        fields.push(&name);
    }
    let mut values = BTreeSet::new();
    for field in fields {
        let mut found = fetch_values(
            &state,
            Endpoint::StreamFieldValues,
            &query,
            bounds,
            Some(field),
        )
        .await?;
        values.append(&mut found);
    }
    Ok(string_list(values))
}

/// `GET|POST /loki/api/v1/series`.
///
/// # Errors
/// [`ApiError`] for bad parameters or selectors and backend failures.
pub async fn series(State(state): State<AppState>, form: Form) -> Result<Response, ApiError> {
    let bounds = metadata_bounds(&form)?;
    let queries = series_queries(&form)?;
    let mut all: BTreeSet<Vec<(String, String)>> = BTreeSet::new();
    for query in &queries {
        let body = call(&state, Endpoint::Streams, query, bounds, None).await?;
        for stream in parse_values(&body)? {
            let labels = parse_stream(&stream).map_err(|e| ApiError::BackendFailed {
                status: StatusCode::BAD_GATEWAY,
                message: e.to_string(),
            })?;
            let mut set: Vec<(String, String)> = labels
                .into_iter()
                .map(|(k, v)| (sanitize_label_name(&k).into_owned(), v.into_owned()))
                .collect();
            set.sort();
            all.insert(set);
        }
    }
    let data: Vec<BTreeMap<String, String>> = all
        .into_iter()
        .map(|set| set.into_iter().collect())
        .collect();
    let mut out = Vec::with_capacity(64 + data.len() * 64);
    out.extend_from_slice(br#"{"status":"success","data":"#);
    serde_json::to_writer(&mut out, &data).map_err(|e| ApiError::Internal(e.to_string()))?;
    out.push(b'}');
    Ok(json_response(out))
}

/// The requested range widened to its time bucket ([`crate::window::bucket`]),
/// so that refreshes share one cache entry; the response cache keys these
/// requests by the same widened range.
fn metadata_bounds(form: &Form) -> Result<Bounds, ApiError> {
    Ok(crate::window::bucket::widen(params::bounds(
        form,
        now_ns(),
    )?))
}

/// The LogsQL for `match[]`/`match`, as Loki reads them: de-duplicated and sorted;
/// no group, or a single `{}`, means every stream.
fn series_queries(form: &Form) -> Result<Vec<String>, ApiError> {
    let groups: BTreeSet<&str> = form.all("match[]").chain(form.all("match")).collect();
    if groups.is_empty() || (groups.len() == 1 && groups.iter().all(|g| is_empty_selector(g))) {
        return Ok(vec!["*".to_owned()]);
    }
    groups.into_iter().map(selector_query).collect()
}

/// Loki removes spaces (only spaces) before comparing with `{}`.
fn is_empty_selector(raw: &str) -> bool {
    raw.replace(' ', "") == "{}"
}

/// Lowers an optional stream selector to LogsQL; empty means every stream.
fn selector_query(raw: &str) -> Result<String, ApiError> {
    if raw.trim().is_empty() {
        return Ok("*".to_owned());
    }
    match logql_parser::parse(raw)? {
        Expr::Log(log) if log.pipeline.is_empty() => {
            Ok(logsql_ast::lower_selector(&log.selector).to_string())
        }
        _ => Err(ApiError::BadRequest(ONLY_MATCHERS.to_owned())),
    }
}

async fn call(
    state: &AppState,
    endpoint: Endpoint,
    query: &str,
    b: Bounds,
    field: Option<&str>,
) -> Result<BytesMut, ApiError> {
    let start = b.start.to_string();
    let end = b.end.to_string();
    let mut form = vec![
        ("query", query),
        ("start", start.as_str()),
        ("end", end.as_str()),
    ];
    if let Some(field) = field {
        form.push(("field", field));
    }
    Ok(state.backend.post_form(endpoint, &form).await?)
}

async fn fetch_values(
    state: &AppState,
    endpoint: Endpoint,
    query: &str,
    b: Bounds,
    field: Option<&str>,
) -> Result<BTreeSet<String>, ApiError> {
    if b.end < b.start {
        // Loki answers an inverted range with no data rather than an error.
        return Ok(BTreeSet::new());
    }
    let body = call(state, endpoint, query, b, field).await?;
    parse_values(&body)
}

fn parse_values(body: &[u8]) -> Result<BTreeSet<String>, ApiError> {
    let parsed: Values<'_> = serde_json::from_slice(body).map_err(|e| ApiError::BackendFailed {
        status: StatusCode::BAD_GATEWAY,
        message: format!("invalid response from VictoriaLogs: {e}"),
    })?;
    Ok(parsed
        .values
        .into_iter()
        .map(|h| h.value.into_owned())
        .collect())
}

/// `{"status":"success","data":[…]}`, sorted; an empty list is `"data":[]`.
fn string_list(values: BTreeSet<String>) -> Response {
    let mut out = Vec::with_capacity(64 + values.len() * 16);
    out.extend_from_slice(br#"{"status":"success","data":"#);
    // Serializing strings into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, &values);
    out.push(b'}');
    json_response(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_selector_forms() {
        assert!(is_empty_selector("{}"));
        assert!(is_empty_selector(" { } "));
        assert!(!is_empty_selector("{\n}"));
        assert!(!is_empty_selector(r#"{a="b"}"#));
    }

    #[test]
    fn series_match_all() {
        let f = Form::from_pairs([("match[]", "{}")]);
        assert_eq!(series_queries(&f).unwrap(), ["*"]);
        assert_eq!(series_queries(&Form::default()).unwrap(), ["*"]);
        let f = Form::from_pairs([("match", "{ }"), ("match[]", "{ }")]);
        assert_eq!(series_queries(&f).unwrap(), ["*"]);
    }

    #[test]
    fn values_are_sorted_and_deduplicated() {
        let body = br#"{"values":[{"value":"b","hits":1},{"value":"a\"x","hits":2},{"value":"b","hits":3}]}"#;
        let v = parse_values(body).unwrap();
        assert_eq!(v.into_iter().collect::<Vec<_>>(), ["a\"x", "b"]);
        assert!(parse_values(b"not json").is_err());
    }
}
