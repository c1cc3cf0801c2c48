//! `labels`, `label/{name}/values` and `series`: answered from VictoriaLogs' stream index.
//!
//! No `limit` is sent to VictoriaLogs: with a limit it returns an arbitrary
//! subset, and Loki's answers are complete for the range.
//!
//! With label discovery on (the request context's [`logsql_ast::Discovery`])
//! these answers show `service_name` as Loki does, where it is a stream label
//! stored at ingest: listed by `labels` whenever a stream is in range, its
//! values derived per stream from the stored labels, added to every `series`
//! label set, and matched on its derived value in `query`/`match[]`.
//! `detected_level` is structured metadata in Loki, so it appears in none of
//! these (checked against Loki 3.7.8 with `discover_log_levels` on).

use std::collections::{BTreeMap, BTreeSet};

use axum::Extension;
use axum::extract::{Path, State};
use axum::response::Response;
use http::StatusCode;
use logql_parser::Expr;

use super::{AppState, json_response};
use crate::backend::{Endpoint, Hit, Request};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::params::{self, Bounds, Form, timestamp::now_ns};
use engine::discovery::SERVICE_NAME;
use engine::discovery::stream::with_service_name;
use engine::labels::{parse_stream, sanitize_label_name};

/// Loki's answer when `query`/`match[]` is a full query rather than a selector.
const ONLY_MATCHERS: &str = "only label matchers are supported";

/// `GET|POST /loki/api/v1/labels`.
///
/// # Errors
/// [`ApiError`] for bad parameters or selectors and backend failures.
pub async fn labels(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let discovery = ctx.discovery();
    let bounds = metadata_bounds(&form)?;
    let query = selector_query(form.logql("query")?, discovery)?;
    reject_reversed(&form)?;
    let names = stream_field_names(&state, &ctx, &query, bounds).await?;
    // VictoriaLogs keeps OTel's dotted names; Loki (and LogQL) only know `k8s_pod_name`.
    let mut names: BTreeSet<String> = names
        .iter()
        .map(|n| sanitize_label_name(n).into_owned())
        .collect();
    // Every stream has a derived `service_name` (`unknown_service` at worst);
    // a stream with a field is a stream.
    if discovery.service_name() && !names.is_empty() {
        names.insert(SERVICE_NAME.to_owned());
    }
    Ok(string_list(names))
}

/// `GET|POST /loki/api/v1/label/{name}/values`.
///
/// # Errors
/// [`ApiError`] for bad parameters or selectors and backend failures.
pub async fn label_values(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Extension(ctx): Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let discovery = ctx.discovery();
    let bounds = metadata_bounds(&form)?;
    let query = selector_query(form.logql("query")?, discovery)?;
    reject_reversed(&form)?;
    if name == SERVICE_NAME && discovery.service_name() {
        return Ok(string_list(
            derived_service_names(&state, &ctx, &query, bounds).await?,
        ));
    }
    // `name` is a Loki name; the stream fields it stands for may be dotted
    // (`k8s_pod_name` ← `k8s.pod.name`), so look the fields up first,
    // unless `name` can only stand for itself.
    let names = if only_itself(&name) {
        BTreeSet::new()
    } else {
        stream_field_names(&state, &ctx, &query, bounds).await?
    };
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
            &ctx,
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

/// Whether the only stream field whose Loki name is `name` is `name`
/// itself: sanitizing writes `_` for every character it replaces and before
/// a leading digit, so a name without `_` is no other field's sanitized
/// name. Such a name needs no field-name lookup (one VictoriaLogs call
/// less for `label/app/values`); a field that is absent lists no values
/// either way.
fn only_itself(name: &str) -> bool {
    !name.contains('_')
}

/// `GET|POST /loki/api/v1/series`.
///
/// # Errors
/// [`ApiError`] for bad parameters or selectors and backend failures.
pub async fn series(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let discovery = ctx.discovery();
    let bounds = metadata_bounds(&form)?;
    let query = series_query(&form, discovery, ctx.limits().max_series_matchers)?;
    reject_reversed(&form)?;
    let mut all: BTreeSet<Vec<(String, String)>> = BTreeSet::new();
    for stream in call(&state, &ctx, Endpoint::Streams, &query, bounds, None).await? {
        all.insert(stream_labels(&stream.value, discovery)?);
    }
    let data: Vec<BTreeMap<String, String>> = all
        .into_iter()
        .map(|set| set.into_iter().collect())
        .collect();
    let mut out = Vec::with_capacity(64 + data.len() * 64);
    out.extend_from_slice(br#"{"status":"success","data":"#);
    serde_json::to_writer(&mut out, &data)?;
    out.push(b'}');
    Ok(json_response(out))
}

/// Loki's querier refuses a metadata range that ends before it starts,
/// with the text of its `max_query_lookback` check (lokivl has no lookback:
/// `0s`, as Loki's default).
fn reject_reversed(form: &Form) -> Result<(), ApiError> {
    let b = params::bounds(form, now_ns())?;
    if b.end < b.start {
        return Err(ApiError::BadRequest(
            "this data is no longer available, it is past now - max_query_lookback (0s)".into(),
        ));
    }
    Ok(())
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
///
/// Several groups become one query, `(g1) or (g2) …`: a stream is listed when
/// one of its entries in the range matches, and an entry matches the `or`
/// exactly when it matches one group, so the one call lists the union of the
/// streams the groups list one by one. At most `max` (`--max-series-matchers`;
/// 0 = unlimited) distinct groups.
///
/// # Errors
/// [`ApiError::BadRequest`] past the limit or for a group that is not a selector.
fn series_query(
    form: &Form,
    discovery: &logsql_ast::Discovery,
    max: usize,
) -> Result<String, ApiError> {
    form.check_logql("match[]")?;
    form.check_logql("match")?;
    let groups: BTreeSet<&str> = form.all("match[]").chain(form.all("match")).collect();
    if groups.is_empty() || (groups.len() == 1 && groups.iter().all(|g| is_empty_selector(g))) {
        return Ok("*".to_owned());
    }
    if max > 0 && groups.len() > max {
        return Err(ApiError::BadRequest(format!(
            "max series matchers per query exceeded, matchers > max_series_matchers ({} > {max})",
            groups.len()
        )));
    }
    let lowered = groups
        .into_iter()
        .map(|g| selector_query(g, discovery))
        .collect::<Result<Vec<_>, _>>()?;
    if let [one] = lowered.as_slice() {
        return Ok(one.clone());
    }
    let mut query = String::with_capacity(lowered.iter().map(|q| q.len() + 6).sum());
    for (i, q) in lowered.iter().enumerate() {
        if i > 0 {
            query.push_str(" or ");
        }
        query.push('(');
        query.push_str(q);
        query.push(')');
    }
    Ok(query)
}

/// A VictoriaLogs `_stream` as Loki's sorted label set: Loki names, plus the
/// `service_name` that `discovery` derives when the stream lacks one.
fn stream_labels(
    stream: &str,
    discovery: &logsql_ast::Discovery,
) -> Result<Vec<(String, String)>, ApiError> {
    let labels = parse_stream(stream).map_err(|e| ApiError::BackendFailed {
        status: StatusCode::BAD_GATEWAY,
        message: e.to_string(),
    })?;
    let mut set: Vec<(String, String)> = labels
        .into_iter()
        .map(|(k, v)| (sanitize_label_name(&k).into_owned(), v.into_owned()))
        .collect();
    set.sort();
    with_service_name(&mut set, discovery);
    Ok(set)
}

/// The `service_name` values of the streams `query` selects in `b`: each
/// stream's stored one, else the one `discovery` derives from its labels.
///
/// Derived from the streams themselves (one `/select/logsql/streams` call,
/// as `series` does) rather than from per-label value lists, which cannot
/// tell which candidate label comes first in a given stream.
async fn derived_service_names(
    state: &AppState,
    ctx: &RequestContext,
    query: &str,
    b: Bounds,
) -> Result<BTreeSet<String>, ApiError> {
    let mut values = BTreeSet::new();
    for stream in fetch_values(state, ctx, Endpoint::Streams, query, b, None).await? {
        let set = stream_labels(&stream, ctx.discovery())?;
        if let Some((_, v)) = set.into_iter().find(|(k, _)| k == SERVICE_NAME) {
            values.insert(v);
        }
    }
    Ok(values)
}

/// Loki removes spaces (only spaces) before comparing with `{}`.
fn is_empty_selector(raw: &str) -> bool {
    raw.replace(' ', "") == "{}"
}

/// Lowers an optional stream selector to LogsQL; empty means every stream.
/// `service_name` matchers select on the value `discovery` derives.
fn selector_query(raw: &str, discovery: &logsql_ast::Discovery) -> Result<String, ApiError> {
    if raw.trim().is_empty() {
        return Ok("*".to_owned());
    }
    match logql_parser::parse(raw)? {
        Expr::Log(log) if log.pipeline.is_empty() => {
            logsql_ast::lower_selector(&log.selector, discovery)
                .map(|q| q.to_string())
                .map_err(ApiError::from)
        }
        _ => Err(ApiError::BadRequest(ONLY_MATCHERS.to_owned())),
    }
}

async fn call(
    state: &AppState,
    ctx: &RequestContext,
    endpoint: Endpoint,
    query: &str,
    b: Bounds,
    field: Option<&str>,
) -> Result<Vec<Hit>, ApiError> {
    let mut req = Request::new(endpoint, query, b.start, b.end);
    if let Some(field) = field {
        req = req.field(field);
    }
    Ok(state.backend.send_values(ctx, &req).await?)
}

/// The stream field names (VictoriaLogs spelling) of the streams `query` selects in `b`.
async fn stream_field_names(
    state: &AppState,
    ctx: &RequestContext,
    query: &str,
    b: Bounds,
) -> Result<BTreeSet<String>, ApiError> {
    fetch_values(state, ctx, Endpoint::StreamFieldNames, query, b, None).await
}

async fn fetch_values(
    state: &AppState,
    ctx: &RequestContext,
    endpoint: Endpoint,
    query: &str,
    b: Bounds,
    field: Option<&str>,
) -> Result<BTreeSet<String>, ApiError> {
    if b.end < b.start {
        // Loki answers an inverted range with no data rather than an error.
        return Ok(BTreeSet::new());
    }
    let hits = call(state, ctx, endpoint, query, b, field).await?;
    Ok(hits.into_iter().map(|h| h.value).collect())
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
    fn a_name_without_underscore_is_no_other_fields_sanitized_name() {
        for field in ["k8s.pod.name", "1abc", "a-b", "a b", "ü", "app"] {
            let loki = sanitize_label_name(field);
            if only_itself(&loki) {
                assert_eq!(loki, field, "{field} sanitizes to a name without `_`");
            }
        }
        assert!(only_itself("app"));
        assert!(!only_itself("k8s_pod_name"));
        assert!(!only_itself("_1abc"));
    }

    #[test]
    fn empty_selector_forms() {
        assert!(is_empty_selector("{}"));
        assert!(is_empty_selector(" { } "));
        assert!(!is_empty_selector("{\n}"));
        assert!(!is_empty_selector(r#"{a="b"}"#));
    }

    #[test]
    fn series_match_all() {
        let off = logsql_ast::Discovery::default();
        let f = Form::from_pairs([("match[]", "{}")]);
        assert_eq!(series_query(&f, &off, 100).unwrap(), "*");
        assert_eq!(series_query(&Form::default(), &off, 100).unwrap(), "*");
        let f = Form::from_pairs([("match", "{ }"), ("match[]", "{ }")]);
        assert_eq!(series_query(&f, &off, 100).unwrap(), "*");
    }

    #[test]
    fn several_groups_are_one_or_query() {
        let off = logsql_ast::Discovery::default();
        let f = Form::from_pairs([
            ("match[]", r#"{b="2"}"#),
            ("match[]", r#"{a="1", c=~"x|y"}"#),
            ("match", r#"{b="2"}"#),
        ]);
        assert_eq!(
            series_query(&f, &off, 100).unwrap(),
            r#"({a="1", c=~"x|y"}) or ({b="2"})"#
        );
    }

    fn app_then_job() -> logsql_ast::Discovery {
        logsql_ast::Discovery {
            service_name_labels: vec!["app".into(), "job".into()],
            log_levels: true,
        }
    }

    #[test]
    fn service_name_selectors_match_the_derived_value() {
        let sel = r#"{service_name="api", env="p"}"#;
        assert_eq!(
            selector_query(sel, &logsql_ast::Discovery::default()).unwrap(),
            r#"{env="p", service_name="api" or env="p", service_name="", "service.name"="api"}"#
        );
        let f = Form::from_pairs([("match[]", sel)]);
        assert_eq!(
            series_query(&f, &app_then_job(), 100).unwrap(),
            concat!(
                r#"{env="p", service_name="api" or env="p", service_name="", "service.name"="api" "#,
                r#"or env="p", service_name="", "service.name"="", app="api" "#,
                r#"or env="p", service_name="", "service.name"="", app="", job="api"}"#
            )
        );
    }

    #[test]
    fn stream_labels_get_the_derived_service_name() {
        let d = app_then_job();
        let l = stream_labels(r#"{job="j",k8s.ns="n"}"#, &d).unwrap();
        let want = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert_eq!(
            l,
            want(&[("job", "j"), ("k8s_ns", "n"), ("service_name", "j")])
        );
        let l = stream_labels(r#"{app="a",service_name="s"}"#, &d).unwrap();
        assert_eq!(l, want(&[("app", "a"), ("service_name", "s")]));
        let l = stream_labels(r#"{env="x"}"#, &d).unwrap();
        assert_eq!(
            l,
            want(&[("env", "x"), ("service_name", "unknown_service")])
        );
        let off = stream_labels(r#"{env="x"}"#, &logsql_ast::Discovery::default()).unwrap();
        assert_eq!(off, want(&[("env", "x")]));
    }
}
