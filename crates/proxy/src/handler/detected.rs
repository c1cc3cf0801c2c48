//! `detected_labels`, `detected_fields` and `detected_field/{name}/values`,
//! bare objects as Loki answers them; empty answers are literally `{}`.
//!
//! * Labels are exact: every stream in the range comes from VictoriaLogs'
//!   stream index, `service_name` is added as Loki's ingest would, and the
//!   cardinality is the exact number of distinct values. Labels whose values
//!   all look like IDs (numbers, UUIDs) are dropped, except `cluster`,
//!   `namespace`, `instance` and `pod`, as Loki does.
//! * Fields and values are a sample, as in Loki: the newest `line_limit`
//!   (default 100, at most 5000) entries of the query, parsed as Loki's
//!   query frontend parses them; at most `limit` (default 1000) fields or values.

use std::collections::{BTreeMap, BTreeSet};

use axum::Extension;
use axum::extract::{Path, State};
use axum::response::Response;
use logql_parser::Expr;

use super::{AppState, json_response};
use crate::backend::{Endpoint, Request};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::params::{self, Form, timestamp::now_ns};
use crate::query::drilldown as logs;
use crate::work::{Work, cpu};
use engine::discovery::{DETECTED_LEVEL, detected_level};
use engine::drilldown::{fields, streams};

/// Loki's default `line_limit`.
pub const DEFAULT_LINE_LIMIT: u32 = 100;
/// Loki's default detected-fields `limit`.
pub const DEFAULT_FIELD_LIMIT: u32 = 1000;
/// Labels Loki keeps even when their values look like IDs.
const STATIC_LABELS: &[&str] = &["cluster", "namespace", "instance", "pod"];

fn empty_object() -> Response {
    json_response(b"{}".to_vec())
}

/// `GET /loki/api/v1/detected_labels`.
///
/// # Errors
/// Bad parameters or selectors (400), backend failures.
pub async fn detected_labels(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let b = params::bounds(&form, now_ns())?;
    if b.end < b.start {
        return Err(params::ParamError::EndBeforeStart.into());
    }
    let sel = streams::select(form.logql("query")?, false, ctx.discovery())?;
    let req = Request::new(Endpoint::Streams, sel.vl_query.as_str(), b.start, b.end);
    let hits = state.backend.send_values(&ctx, &req).await?;
    let mut values: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for h in hits {
        let labels = streams::derive_labels(&h.value, ctx.discovery())?;
        if !sel.keeps(&labels) {
            continue;
        }
        for (k, v) in labels {
            values.entry(k).or_default().insert(v);
        }
    }
    let detected: Vec<serde_json::Value> = values
        .into_iter()
        .filter(|(k, v)| STATIC_LABELS.contains(&k.as_str()) || !reject_label(v))
        .map(|(k, v)| serde_json::json!({"label": k, "cardinality": v.len()}))
        .collect();
    if detected.is_empty() {
        return Ok(empty_object());
    }
    let out = serde_json::to_vec(&serde_json::json!({ "detectedLabels": detected }))?;
    Ok(json_response(out))
}

/// Loki's `shouldRejectLabel`: no values, or every value an ID (number or
/// UUID), except a label whose one or two values are all `0`/`1`.
fn reject_label(values: &BTreeSet<String>) -> bool {
    if values.is_empty() {
        return true;
    }
    if values.len() <= 2 && values.iter().all(|v| v == "0" || v == "1") {
        return false;
    }
    values.iter().all(|v| is_id(v))
}

fn is_id(v: &str) -> bool {
    go::strconv::parse_float(v).is_ok() || is_uuid(v)
}

/// `uuid.Parse`'s accepted forms: 36 chars with dashes, optionally
/// `urn:uuid:`-prefixed or braced, or 32 hex digits.
fn is_uuid(v: &str) -> bool {
    let v = v.strip_prefix("urn:uuid:").unwrap_or(v);
    let v = v
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(v);
    let b = v.as_bytes();
    match b.len() {
        32 => b.iter().all(u8::is_ascii_hexdigit),
        36 => b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        }),
        _ => false,
    }
}

struct FieldParams {
    log: logql_parser::LogExpr,
    start: i64,
    end: i64,
    line_limit: u32,
    limit: u32,
}

fn positive(form: &Form, key: &str, default: u32) -> Result<u32, ApiError> {
    match form.get(key) {
        "" => Ok(default),
        raw => {
            let n = go::strconv::atoi(raw).map_err(|e| ApiError::BadRequest(e.to_string()))?;
            if n <= 0 {
                return Err(ApiError::BadRequest(
                    "limit must be a positive value".into(),
                ));
            }
            Ok(u32::try_from(n).unwrap_or(u32::MAX))
        }
    }
}

fn field_params(form: &Form, ctx: &RequestContext) -> Result<FieldParams, ApiError> {
    let b = params::bounds(form, now_ns())?;
    if b.end < b.start {
        return Err(params::ParamError::EndBeforeStart.into());
    }
    let line_limit = positive(form, "line_limit", DEFAULT_LINE_LIMIT)?;
    let limit = match form.get("limit") {
        "" => positive(form, "field_limit", DEFAULT_FIELD_LIMIT)?,
        _ => positive(form, "limit", DEFAULT_FIELD_LIMIT)?,
    };
    params::check_max_entries(ctx.limits(), line_limit)?;
    let log = match logql_parser::parse(form.logql("query")?)? {
        Expr::Log(log) => log,
        Expr::Metric(_) => {
            return Err(ApiError::BadRequest(
                "parse error : only log queries are supported".into(),
            ));
        }
    };
    Ok(FieldParams {
        log,
        start: b.start,
        end: b.end,
        line_limit,
        limit,
    })
}

/// `GET /loki/api/v1/detected_fields`.
///
/// # Errors
/// Bad parameters or queries (400), backend failures.
pub async fn detected_fields(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let p = field_params(&form, &ctx)?;
    let work = Work::new(&state.work, ctx.deadline());
    let bounds = (p.start, p.end);
    let fetched = logs::fetch(
        &state.backend,
        &ctx,
        &p.log,
        bounds,
        p.line_limit as usize,
        &work,
    )
    .await?;
    let limit = p.limit as usize;
    let levels = ctx.discovery().log_levels;
    // Every line is parsed again: off the async workers.
    let found = cpu::run(work.deadline, fetched_bytes(&fetched), move |_| {
        let mut fetched = fetched;
        if levels {
            add_detected_level(&mut fetched.streams);
        }
        Ok::<_, ApiError>(fields::detect(&fetched.streams, limit))
    })
    .await?;
    if found.is_empty() {
        return Ok(empty_object());
    }
    Ok(json_response(write_fields(&found, p.limit)))
}

/// The `detected_fields` answer, written straight to bytes:
/// `{"fields":[{"cardinality":…,"jsonPath":[…],"label":…,"parsers":…,"type":…}],"limit":…}`,
/// keys in sorted order and strings escaped as `serde_json` does (the bytes
/// lokivl answered when it built this through `serde_json` values).
fn write_fields(found: &BTreeMap<String, fields::Field>, limit: u32) -> Vec<u8> {
    use engine::encode::json::{Escape, write_str_as};
    let strings = |out: &mut Vec<u8>, list: &[String]| {
        out.push(b'[');
        for (i, v) in list.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str_as(out, v, Escape::Plain);
        }
        out.push(b']');
    };
    let mut num = itoa::Buffer::new();
    let mut out = Vec::with_capacity(64 + found.len() * 96);
    out.extend_from_slice(b"{\"fields\":[");
    for (i, (label, f)) in found.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"cardinality\":");
        out.extend_from_slice(num.format(f.values.len()).as_bytes());
        if let Some(path) = &f.json_path {
            out.extend_from_slice(b",\"jsonPath\":");
            strings(&mut out, path);
        }
        out.extend_from_slice(b",\"label\":");
        write_str_as(&mut out, label, Escape::Plain);
        out.extend_from_slice(b",\"parsers\":");
        match f.parsers.as_deref().filter(|p| !p.is_empty()) {
            Some(parsers) => strings(&mut out, parsers),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"type\":");
        write_str_as(&mut out, f.kind, Escape::Plain);
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"limit\":");
    out.extend_from_slice(num.format(limit).as_bytes());
    out.push(b'}');
    out
}

/// `GET /loki/api/v1/detected_field/{name}/values`.
///
/// # Errors
/// Bad parameters or queries (400), backend failures.
pub async fn detected_field_values(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Extension(ctx): Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let p = field_params(&form, &ctx)?;
    let work = Work::new(&state.work, ctx.deadline());
    let bounds = (p.start, p.end);
    let fetched = logs::fetch(
        &state.backend,
        &ctx,
        &p.log,
        bounds,
        p.line_limit as usize,
        &work,
    )
    .await?;
    let limit = p.limit as usize;
    let levels = ctx.discovery().log_levels;
    let values = cpu::run(work.deadline, fetched_bytes(&fetched), move |_| {
        let mut fetched = fetched;
        if levels {
            add_detected_level(&mut fetched.streams);
        }
        Ok::<_, ApiError>(fields::values(&fetched.streams, &name, limit))
    })
    .await?;
    if values.is_empty() {
        return Ok(empty_object());
    }
    let out = serde_json::to_vec(&serde_json::json!({"limit": p.limit, "values": values}))?;
    Ok(json_response(out))
}

/// The bytes of the fetched lines, to size the work on them.
fn fetched_bytes(f: &logs::Fetched) -> usize {
    f.streams
        .iter()
        .flat_map(|s| &s.entries)
        .map(|e| e.line.len())
        .sum()
}

/// Gives every entry the `detected_level` structured metadata Loki's
/// distributor stores (`discover_log_levels`, on by default) when it was not
/// pushed: Loki lists it among the detected fields (`parsers: null`) and
/// answers its values, so lokivl does too.
fn add_detected_level(streams: &mut [logs::Stream]) {
    for s in streams {
        for e in &mut s.entries {
            if e.metadata.iter().any(|(k, _)| k == DETECTED_LEVEL) {
                continue;
            }
            let level = detected_level(&s.labels, &e.metadata, &e.line);
            e.metadata.push((DETECTED_LEVEL.to_owned(), level));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `serde_json` path `detected_fields` used before [`write_fields`]:
    /// the reference its bytes must equal.
    fn fields_through_serde(found: &BTreeMap<String, fields::Field>, limit: u32) -> Vec<u8> {
        let list: Vec<serde_json::Value> = found
            .iter()
            .map(|(label, f)| {
                let mut o = serde_json::json!({
                    "label": label,
                    "type": f.kind,
                    "cardinality": f.values.len(),
                    "parsers": f.parsers.clone().filter(|p| !p.is_empty()),
                });
                if let Some(path) = &f.json_path {
                    o["jsonPath"] = serde_json::json!(path);
                }
                o
            })
            .collect();
        serde_json::to_vec(&serde_json::json!({"fields": list, "limit": limit})).unwrap()
    }

    #[test]
    fn fields_answer_bytes_equal_the_serde_path() {
        let field = |kind, values: &[&str], parsers: Option<&[&str]>, path: Option<&[&str]>| {
            let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
            fields::Field {
                kind,
                values: set(values),
                parsers: parsers.map(own),
                json_path: path.map(own),
            }
        };
        let inputs: Vec<(BTreeMap<String, fields::Field>, u32)> = vec![
            (BTreeMap::new(), 1000),
            (
                BTreeMap::from([(
                    "detected_level".to_owned(),
                    field("string", &["info", "warn"], None, None),
                )]),
                1000,
            ),
            (
                BTreeMap::from([
                    (
                        "duration".to_owned(),
                        field("duration", &["1s"], Some(&["logfmt"]), None),
                    ),
                    (
                        "req_user_id".to_owned(),
                        field(
                            "int",
                            &["1", "2", "3"],
                            Some(&["json"]),
                            Some(&["req", "user", "id"]),
                        ),
                    ),
                    (
                        "empty_parsers".to_owned(),
                        field("bytes", &[], Some(&[]), Some(&[])),
                    ),
                    (
                        "tricky \"q\" \\ <a&b> \u{2028}\n\t\u{1}\u{7f}\u{8}\u{c}é".to_owned(),
                        field(
                            "float",
                            &["1.5"],
                            Some(&["json", "logfmt"]),
                            Some(&["a\"b", "<c>", "\u{0}", "ü\r"]),
                        ),
                    ),
                ]),
                7,
            ),
        ];
        for (found, limit) in &inputs {
            let new = write_fields(found, *limit);
            let old = fields_through_serde(found, *limit);
            assert_eq!(
                String::from_utf8_lossy(&new),
                String::from_utf8_lossy(&old),
                "{found:?}"
            );
            assert_eq!(new, old);
        }
        // What a client reads.
        let text = String::from_utf8(write_fields(&inputs[1].0, 1000)).unwrap();
        assert_eq!(
            text,
            r#"{"fields":[{"cardinality":2,"label":"detected_level","parsers":null,"type":"string"}],"limit":1000}"#
        );
    }

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn id_labels_are_rejected() {
        assert!(reject_label(&set(&[])));
        assert!(reject_label(&set(&["12", "13", "14"])));
        assert!(reject_label(&set(&[
            "0f8fad5b-d9cb-469f-a165-70867728950e"
        ])));
        assert!(!reject_label(&set(&["0", "1"])));
        assert!(!reject_label(&set(&["12", "api"])));
        assert!(is_uuid("0f8fad5bd9cb469fa16570867728950e"));
        assert!(!is_uuid("not-a-uuid"));
    }

    #[test]
    fn entries_get_loki_detected_level() {
        let entry = |line: &str, md: &[(&str, &str)]| logs::Entry {
            ts: 1,
            line: line.to_owned(),
            metadata: md
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            parsed: Vec::new(),
        };
        let mut streams = vec![logs::Stream {
            labels: vec![("app".to_owned(), "a".to_owned())],
            entries: vec![
                entry("level=WARN msg=x", &[]),
                entry("plain words", &[("trace_id", "t")]),
                entry("level=info", &[("detected_level", "debug")]),
            ],
        }];
        add_detected_level(&mut streams);
        let levels: Vec<&str> = streams[0]
            .entries
            .iter()
            .map(|e| {
                e.metadata
                    .iter()
                    .find(|(k, _)| k == DETECTED_LEVEL)
                    .map(|(_, v)| v.as_str())
                    .unwrap_or("")
            })
            .collect();
        assert_eq!(levels, ["warn", "unknown", "debug"]);
        let f = fields::detect(&streams, 10);
        assert_eq!(f["detected_level"].parsers, None);
        assert_eq!(f["detected_level"].values.len(), 3);
    }
}
