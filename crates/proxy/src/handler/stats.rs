//! `GET /loki/api/v1/index/stats`: streams, chunks, entries and bytes of a selector.
//!
//! Every number is computed by VictoriaLogs (`stats by (_stream) count(),
//! sum_len(_msg)`) over `[start, end]`, never estimated. VictoriaLogs has no
//! chunks; lokivl reports one chunk per stream with data in the range (the
//! least Loki could have), and documents it.

use axum::Extension;
use axum::extract::State;
use axum::response::Response;

use super::volume::stream_stats;
use super::{AppState, json_response};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::params::{self, Form, timestamp::now_ns};
use engine::drilldown::streams::select;

/// Totals of an `index/stats` answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct IndexStats {
    /// Streams with entries in the range.
    pub streams: u64,
    /// One per stream (VictoriaLogs has no chunks).
    pub chunks: u64,
    /// Bytes of log lines.
    pub bytes: u64,
    /// Entries.
    pub entries: u64,
}

/// `GET|POST /loki/api/v1/index/stats`.
///
/// # Errors
/// Bad parameters or selectors (400), backend failures.
pub async fn index_stats(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let b = params::bounds(&form, now_ns())?;
    let sel = select(form.logql("query")?, true, ctx.discovery())?;
    let rows = stream_stats(&state, &ctx, &sel, b.start, b.end, None, sel.needs_level()).await?;
    let mut s = IndexStats::default();
    let mut seen = std::collections::BTreeSet::new();
    for r in &rows {
        seen.insert(&r.labels);
        s.entries += r.entries;
        s.bytes += r.bytes;
    }
    s.streams = seen.len() as u64;
    s.chunks = s.streams;
    let out = serde_json::to_vec(&s)?;
    Ok(json_response(out))
}
