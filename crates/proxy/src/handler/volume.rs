//! `index/volume` and `index/volume_range`: bytes of log lines per series or
//! per label, in the Prometheus vector/matrix shape Loki's query frontend gives.
//!
//! VictoriaLogs computes exact line bytes per stream (and per step bucket)
//! with `stats by (_stream) sum_len(_msg)`; the proxy derives Loki's labels
//! (names sanitized, `service_name` and, when asked for, `detected_level`
//! added), applies matchers on those synthesized labels, groups as Loki's
//! TSDB index does, sorts by value then name and keeps `limit`.
//! Loki reports chunk sizes rounded to KiB; lokivl reports exact bytes.

use std::collections::{BTreeMap, HashMap};

use axum::response::Response;
use http::StatusCode;

use super::drilldown_limits::VOLUME_MAX_SERIES;
use super::{AppState, json_response};
use crate::backend::Request;
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::params::{self, Form, timestamp::now_ns};
use engine::answer::encode::metric::write_metric;
use engine::answer::{MetricAnswer, MetricResult, Steps};
use engine::discovery::{DETECTED_LEVEL, LEVEL_FIELDS, UNKNOWN_LEVEL, normalize_level};
use engine::drilldown::streams::{Selection, derive_labels, select};
use engine::encode::json::Escape;
use engine::encode::stats::Summary;
use engine::labels::write_label_string;
use engine::metric::series::sorted;
use engine::metric::{Matrix, Point, Series};
use engine::ndjson::stats_rows::for_each_row;

/// Loki's default volume `limit`.
pub const DEFAULT_LIMIT: usize = 100;

/// Entries and bytes of one derived label set (in one bucket).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamStats {
    /// Loki labels with `service_name` (and `detected_level` when asked for).
    pub labels: Vec<(String, String)>,
    /// Bucket start in ns (`None` for the whole range).
    pub bucket: Option<i64>,
    /// Entries.
    pub entries: u64,
    /// Bytes of log lines.
    pub bytes: u64,
}

fn bad_gateway(message: String) -> ApiError {
    ApiError::BackendFailed {
        status: StatusCode::BAD_GATEWAY,
        message,
    }
}

/// Entries and line bytes per stream (and bucket) for `sel` over `[start, end]`.
///
/// # Errors
/// Backend failures and malformed answers.
pub async fn stream_stats(
    state: &AppState,
    ctx: &RequestContext,
    sel: &Selection,
    start: i64,
    end: i64,
    step: Option<i64>,
    with_level: bool,
) -> Result<Vec<StreamStats>, ApiError> {
    if end < start {
        return Ok(Vec::new());
    }
    let mut by: Vec<String> = Vec::new();
    if let Some(step) = step {
        by.push(format!("_time:{step}ns"));
    }
    by.push("_stream".to_owned());
    if with_level {
        by.push(logsql_ast::quote(DETECTED_LEVEL));
        by.extend(LEVEL_FIELDS.iter().map(|f| logsql_ast::quote(f)));
    }
    let q = format!(
        "{} | stats by ({}) count() as e, sum_len(_msg) as b",
        sel.vl_query,
        by.join(", ")
    );
    let mut body = state
        .backend
        .send_rows(ctx, &Request::query(q, start, end))
        .await?;
    let mut out = Vec::new();
    // With a step, a stream has one row per bucket: derive its labels once
    // (without one, every row is another stream and a cache only costs).
    let mut derived: HashMap<&str, Vec<(String, String)>> = HashMap::new();
    for_each_row(
        &mut body,
        |row| {
            let get = |k: &str| row.iter().find(|(n, _)| *n == k).map_or("", |(_, v)| *v);
            let stream = match get("_stream") {
                "" => "{}",
                s => s,
            };
            let mut labels = match (step, derived.get(stream)) {
                (None, _) => derive_labels(stream, ctx.discovery())?,
                (Some(_), Some(l)) => l.clone(),
                (Some(_), None) => {
                    let l = derive_labels(stream, ctx.discovery())?;
                    derived.insert(stream, l.clone());
                    l
                }
            };
            if with_level {
                let level = std::iter::once(DETECTED_LEVEL)
                    .chain(LEVEL_FIELDS.iter().copied())
                    .map(get)
                    .find(|v| !v.is_empty())
                    .map_or_else(
                        || UNKNOWN_LEVEL.to_owned(),
                        |v| normalize_level(v).into_owned(),
                    );
                labels.retain(|(k, _)| k != DETECTED_LEVEL);
                let at = labels.partition_point(|(k, _)| k.as_str() < DETECTED_LEVEL);
                labels.insert(at, (DETECTED_LEVEL.to_owned(), level));
            }
            if !sel.keeps(&labels) {
                return Ok(());
            }
            let bucket = match step {
                Some(_) => {
                    Some(go::time::parse_rfc3339_nanos(get("_time")).ok_or_else(|| {
                        bad_gateway(format!("bad bucket time {:?}", get("_time")))
                    })?)
                }
                None => None,
            };
            let num = |k: &str| {
                get(k)
                    .parse::<u64>()
                    .map_err(|e| bad_gateway(format!("bad {k}: {e}")))
            };
            out.push(StreamStats {
                labels,
                bucket,
                entries: num("e")?,
                bytes: num("b")?,
            });
            Ok(())
        },
        bad_gateway,
    )?;
    Ok(out)
}

/// Volume request parameters (Loki's `ParseVolume*Query`).
#[derive(Debug)]
struct VolumeParams {
    sel: Selection,
    start: i64,
    end: i64,
    limit: usize,
    targets: Vec<String>,
    by_series: bool,
}

fn volume_params(form: &Form, ctx: &RequestContext) -> Result<VolumeParams, ApiError> {
    let limit = match form.get("limit") {
        "" | "0" => DEFAULT_LIMIT,
        raw => {
            let n = go::strconv::atoi(raw).map_err(|e| ApiError::BadRequest(e.to_string()))?;
            if n <= 0 {
                return Err(ApiError::BadRequest(
                    "limit must be a positive value".into(),
                ));
            }
            usize::try_from(n).unwrap_or(usize::MAX)
        }
    };
    let b = params::bounds(form, now_ns())?;
    if b.end < b.start {
        return Err(params::ParamError::EndBeforeStart.into());
    }
    let by_series = match form.get("aggregateBy") {
        "" | "series" => true,
        "labels" => false,
        _ => return Err(ApiError::BadRequest("invalid aggregation option".into())),
    };
    let targets: Vec<String> = form
        .get("targetLabels")
        .split(',')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect();
    let sel = select(form.logql("query")?, false, ctx.discovery())?;
    Ok(VolumeParams {
        sel,
        start: b.start,
        end: b.end,
        limit,
        targets,
        by_series,
    })
}

/// Groups stream stats as Loki's index does: by series restricted to the
/// matcher (or target) labels, or per label name.
fn group(p: &VolumeParams, rows: &[StreamStats]) -> BTreeMap<Option<i64>, BTreeMap<String, u64>> {
    let keep: Vec<&str> = if p.targets.is_empty() {
        p.sel.names.iter().map(String::as_str).collect()
    } else {
        p.targets.iter().map(String::as_str).collect()
    };
    let include_all = p.sel.all && p.targets.is_empty();
    // Loki adds `target=~".+"` for every target label no matcher names, so a
    // series without one of them is not counted at all.
    let required: Vec<&str> = p
        .targets
        .iter()
        .map(String::as_str)
        .filter(|t| !p.sel.names.iter().any(|n| n == t))
        .collect();
    let mut out: BTreeMap<Option<i64>, BTreeMap<String, u64>> = BTreeMap::new();
    for r in rows {
        let has = |t: &&str| r.labels.iter().any(|(k, v)| k == t && !v.is_empty());
        if !required.iter().all(has) {
            continue;
        }
        let buckets = out.entry(r.bucket).or_default();
        if p.by_series {
            let mut name = Vec::new();
            write_label_string(
                &mut name,
                r.labels
                    .iter()
                    .filter(|(k, _)| include_all || keep.contains(&k.as_str()))
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            );
            *buckets
                .entry(String::from_utf8_lossy(&name).into_owned())
                .or_default() += r.bytes;
        } else {
            for (k, _) in &r.labels {
                if p.targets.is_empty() || keep.contains(&k.as_str()) {
                    *buckets.entry(k.clone()).or_default() += r.bytes;
                }
            }
        }
    }
    out
}

/// Sorts by value desc then name and keeps `limit` (Loki's `MapToVolumeResponse`).
fn top(volumes: BTreeMap<String, u64>, limit: usize) -> Result<Vec<(String, u64)>, ApiError> {
    if volumes.len() > VOLUME_MAX_SERIES {
        return Err(ApiError::BadRequest(format!(
            "the query hit the max number of series limit (limit: {VOLUME_MAX_SERIES} series)"
        )));
    }
    let mut v: Vec<(String, u64)> = volumes.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(limit);
    Ok(v)
}

fn needs_level(p: &VolumeParams) -> bool {
    p.sel.needs_level() || p.targets.iter().any(|t| t == DETECTED_LEVEL)
}

/// `GET /loki/api/v1/index/volume`.
///
/// # Errors
/// Bad parameters (400), too many series (400), backend failures.
pub async fn volume(
    axum::extract::State(state): axum::extract::State<AppState>,
    axum::Extension(ctx): axum::Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let p = volume_params(&form, &ctx)?;
    let rows = stream_stats(&state, &ctx, &p.sel, p.start, p.end, None, needs_level(&p)).await?;
    let grouped = group(&p, &rows).remove(&None).unwrap_or_default();
    let series: Vec<(String, Vec<(i64, u64)>)> = top(grouped, p.limit)?
        .into_iter()
        .map(|(n, v)| (n, vec![(p.end, v)]))
        .collect();
    Ok(json_response(write(&series, p.by_series)))
}

/// `GET /loki/api/v1/index/volume_range`.
///
/// # Errors
/// Bad parameters (400), too many series (400), backend failures.
pub async fn volume_range(
    axum::extract::State(state): axum::extract::State<AppState>,
    axum::Extension(ctx): axum::Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let p = volume_params(&form, &ctx)?;
    let rp = params::range_params(&form, now_ns())?;
    let step = rp.step;
    let rows = stream_stats(
        &state,
        &ctx,
        &p.sel,
        p.start,
        p.end,
        Some(step),
        needs_level(&p),
    )
    .await?;
    let mut by_name: BTreeMap<String, Vec<(i64, u64)>> = BTreeMap::new();
    for (bucket, volumes) in group(&p, &rows) {
        let b = bucket.unwrap_or(p.start);
        // Loki stamps a bucket with its end (one millisecond before the next
        // bucket), the last one with the request's end.
        let ts = (b + step - 1_000_000).min(p.end);
        for (name, v) in top(volumes, p.limit)? {
            by_name.entry(name).or_default().push((ts, v));
        }
    }
    let mut series: Vec<(String, Vec<(i64, u64)>)> = by_name.into_iter().collect();
    series.sort_by(|a, b| b.1[0].1.cmp(&a.1[0].1).then_with(|| a.0.cmp(&b.0)));
    Ok(json_response(write(&series, p.by_series)))
}

/// Writes the frontend's Prometheus answer: `vector` unless a series has several points.
fn write(series: &[(String, Vec<(i64, u64)>)], by_series: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + series.len() * 96);
    write_metric(&answer(series, by_series), &mut out);
    out
}

/// The answer of `series` (names with their `(time, bytes)` points):
/// labels as the frontend gives them, parsed from a series name or the
/// label name itself with an empty value, sorted by name.
fn answer(series: &[(String, Vec<(i64, u64)>)], by_series: bool) -> MetricAnswer {
    let matrix = series.iter().any(|(_, pts)| pts.len() > 1);
    let mut times: Vec<i64> = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|(ts, _)| *ts))
        .collect();
    times.sort_unstable();
    times.dedup();
    let m: Matrix = series
        .iter()
        .map(|(name, pts)| Series {
            labels: if by_series {
                engine::labels::parse_stream(name)
                    .map(|l| {
                        sorted(
                            l.into_iter()
                                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                                .collect(),
                        )
                    })
                    .unwrap_or_default()
            } else {
                vec![(name.clone(), String::new())]
            },
            points: pts
                .iter()
                .map(|(ts, v)| Point {
                    step: u32::try_from(times.binary_search(ts).unwrap_or(0)).unwrap_or(0),
                    // Exact up to 2^53 bytes, where it prints as the integer.
                    v: *v as f64,
                })
                .collect(),
        })
        .collect();
    MetricAnswer {
        result: if matrix {
            MetricResult::Matrix(m)
        } else {
            MetricResult::Vector(m)
        },
        steps: Steps::Times(times),
        // As when the labels were written through `serde_json`.
        escape: Escape::Plain,
        stats: Summary::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> RequestContext {
        RequestContext::for_tenant(
            crate::tenant::VlTenant::default(),
            engine::discovery::loki_defaults(),
        )
    }

    fn row(labels: &[(&str, &str)], bytes: u64) -> StreamStats {
        StreamStats {
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            bucket: None,
            entries: 1,
            bytes,
        }
    }

    fn params(q: &str) -> VolumeParams {
        let mut f = Form::default();
        f.extend_urlencoded(q.as_bytes());
        volume_params(&f, &ctx()).unwrap()
    }

    #[test]
    fn groups_by_matcher_labels_or_label_names() {
        let rows = [
            row(&[("app", "a"), ("env", "p"), ("service_name", "a")], 10),
            row(&[("app", "a"), ("env", "d"), ("service_name", "a")], 5),
            row(&[("app", "b"), ("service_name", "b")], 20),
        ];
        let p = params("query=%7Bservice_name%3D~%22.%2B%22%7D");
        let g = group(&p, &rows).remove(&None).unwrap();
        let t = top(g, 100).unwrap();
        assert_eq!(
            t,
            vec![
                (r#"{service_name="b"}"#.to_owned(), 20),
                (r#"{service_name="a"}"#.to_owned(), 15)
            ]
        );
        let p = params("query=%7Bapp%3D~%22.%2B%22%7D&aggregateBy=labels");
        let t = top(group(&p, &rows).remove(&None).unwrap(), 2).unwrap();
        assert_eq!(
            t,
            vec![("app".to_owned(), 35), ("service_name".to_owned(), 35)]
        );
        // A series without a target label is left out, as Loki's added
        // `env=~".+"` matcher leaves it out.
        let p = params("query=%7Bapp%3D~%22.%2B%22%7D&targetLabels=env");
        let t = top(group(&p, &rows).remove(&None).unwrap(), 100).unwrap();
        assert_eq!(
            t,
            vec![
                (r#"{env="p"}"#.to_owned(), 10),
                (r#"{env="d"}"#.to_owned(), 5)
            ]
        );
        let p = params("query=%7Bapp%3D~%22.%2B%22%7D&targetLabels=env&aggregateBy=labels");
        let t = top(group(&p, &rows).remove(&None).unwrap(), 100).unwrap();
        assert_eq!(t, vec![("env".to_owned(), 15)]);
    }

    #[test]
    fn parameter_errors() {
        let mut f = Form::default();
        f.extend_urlencoded(b"aggregateBy=x");
        assert_eq!(
            volume_params(&f, &ctx()).unwrap_err().to_string(),
            "invalid aggregation option"
        );
        let mut f = Form::default();
        f.extend_urlencoded(b"limit=-1");
        assert_eq!(
            volume_params(&f, &ctx()).unwrap_err().to_string(),
            "limit must be a positive value"
        );
    }

    #[test]
    fn writes_vector_sorted() {
        let out = write(
            &[(
                r#"{app="a"}"#.to_owned(),
                vec![(1_700_000_000_000_000_000, 42)],
            )],
            true,
        );
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["data"]["resultType"], "vector");
        assert_eq!(v["data"]["result"][0]["metric"]["app"], "a");
        assert_eq!(v["data"]["result"][0]["value"][1], "42");
        assert_eq!(v["data"]["result"][0]["value"][0], 1_700_000_000.0);
    }

    #[test]
    fn writes_the_frontends_bytes() {
        let text = |series: &[(String, Vec<(i64, u64)>)], by_series: bool| {
            String::from_utf8(write(series, by_series)).unwrap_or_default()
        };
        let stats = r#""stats":{"summary":{"#;
        let got = text(
            &[
                (
                    r#"{b="x\ty", app="<a>"}"#.to_owned(),
                    vec![(1_500_000_000, 10), (2_000_000_000, 3)],
                ),
                (r#"{app="z"}"#.to_owned(), vec![(2_000_000_000, 1)]),
            ],
            true,
        );
        assert!(
            got.starts_with(&format!(
                r#"{{"status":"success","data":{{"resultType":"matrix","result":[{{"metric":{{"app":"<a>","b":"x\ty"}},"values":[[1.5,"10"],[2,"3"]]}},{{"metric":{{"app":"z"}},"values":[[2,"1"]]}}],{stats}"#
            )),
            "{got}"
        );
        let got = text(&[("l<&>".to_owned(), vec![(1_000_000_001, 5)])], false);
        assert!(
            got.starts_with(&format!(
                r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{"l<&>":""}},"value":[1,"5"]}}],{stats}"#
            )),
            "{got}"
        );
    }
}
