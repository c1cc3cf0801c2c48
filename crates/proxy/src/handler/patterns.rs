//! `GET /loki/api/v1/patterns`: log patterns mined with Drain
//! ([`engine::drilldown::drain`]) over the newest [`MAX_PATTERN_LINES`]
//! lines of the selector, one miner per `detected_level`.
//!
//! Counts per step are exact for the lines mined. When the bound is reached
//! the answer says so in `warnings` (Loki mines every line at ingest, so this
//! is lokivl's documented difference).

use std::collections::BTreeMap;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;

use super::{AppState, json_response};
use logsql_ast::Discovery;

use crate::backend::{Request, Take};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::params::{self, Form, timestamp::now_ns};
use crate::work::{Stop, cpu};
use engine::discovery::detected_level;
use engine::drilldown::drain::Drain;
use engine::drilldown::streams::{Selection, derive_labels, select};
use engine::ndjson::{Body, Decoder, Rows, Source as _};

/// Lines mined at most per request (the newest ones).
pub const MAX_PATTERN_LINES: usize = 50_000;

/// `GET /loki/api/v1/patterns`.
///
/// # Errors
/// Bad parameters or selectors (400), backend failures.
pub async fn patterns(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let p = params::range_params(&form, now_ns())?;
    let sel = select(form.logql("query")?, false, ctx.discovery())?;
    let (start, end, step) = (p.bounds.start, p.bounds.end, p.step);
    let mut miners: BTreeMap<String, Drain> = BTreeMap::new();
    let mut read = 0usize;
    if end > start {
        let req = Request::query(sel.vl_query.as_str(), start, end - 1)
            .take(Take::Newest(MAX_PATTERN_LINES));
        let body = state.backend.send_rows(&ctx, &req).await?;
        // Mining up to 50,000 lines is CPU work: off the async workers, and
        // it stops at the request's deadline.
        let discovery = ctx.discovery().clone();
        (miners, read) = cpu::run(ctx.deadline(), body.byte_len(), move |stop| {
            mine(body, &sel, &discovery, step, stop)
        })
        .await?;
    }
    let mut found: Vec<(u64, serde_json::Value)> = Vec::new();
    for (level, d) in &miners {
        for c in d.clusters() {
            let total: u64 = c.counts.values().sum();
            let samples: Vec<(i64, u64)> = c
                .counts
                .iter()
                .map(|(b, n)| (b.div_euclid(1_000_000_000), *n))
                .collect();
            found.push((
                total,
                serde_json::json!({"pattern": c.pattern(), "level": level, "samples": samples}),
            ));
        }
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    let mut body = serde_json::json!({
        "status": "success",
        "data": found.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
    });
    if read >= MAX_PATTERN_LINES {
        body["warnings"] = serde_json::json!([format!(
            "lokivl mined patterns over the newest {MAX_PATTERN_LINES} lines of the range only; narrow the selector or the time range for complete counts"
        )]);
    }
    let out = serde_json::to_vec(&body)?;
    Ok(json_response(out))
}

/// Decodes the rows of `body` and trains one miner per `detected_level` on
/// the lines `sel` keeps, oldest first; returns the miners and the rows read.
fn mine(
    mut body: Body,
    sel: &Selection,
    discovery: &Discovery,
    step: i64,
    stop: &Stop,
) -> Result<(BTreeMap<String, Drain>, usize), ApiError> {
    let mut miners: BTreeMap<String, Drain> = BTreeMap::new();
    let mut rows = Rows::new();
    Decoder::new()
        .decode(&mut body, &mut rows)
        .map_err(|e| ApiError::BackendFailed {
            status: http::StatusCode::BAD_GATEWAY,
            message: e.to_string(),
        })?;
    // Oldest first, as the pattern ingester sees them.
    let mut order: Vec<usize> = (0..rows.rows.len()).collect();
    order.sort_by_key(|&i| rows.rows[i].time_ns);
    for (seen, i) in order.into_iter().enumerate() {
        stop.every(seen)?;
        let row = &rows.rows[i];
        let labels = derive_labels(row.stream, discovery)?;
        if !sel.keeps(&labels) {
            continue;
        }
        let mut meta = Vec::new();
        engine::discovery::otel::push_metadata(
            engine::discovery::otel::is_otlp_raw_stream(row.stream),
            rows.fields_of(row).iter().copied(),
            &mut meta,
        );
        let fields: Vec<(String, String)> = meta
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.to_owned()))
            .collect();
        let level = detected_level(&labels, &fields, row.msg);
        // The step bucket the line falls in; a bucket starting before
        // the first representable nanosecond is named by that nanosecond.
        let bucket = row.time_ns.div_euclid(step).saturating_mul(step);
        miners.entry(level).or_default().train(row.msg, bucket);
    }
    Ok((miners, rows.rows.len()))
}
