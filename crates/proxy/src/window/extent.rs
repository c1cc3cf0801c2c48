//! Cache extents of live metric windows: the steps of a window that are
//! already closed, kept across refreshes, so a refresh evaluates only the
//! steps after them.
//!
//! A dashboard that ends at now asks for the same live window on every
//! refresh, each time with a later `end`. Without extents the whole window
//! (up to an interval of logs) is evaluated again each time. Loki's results
//! cache keeps every part of such a query older than
//! `max_cache_freshness_per_query` and recomputes only the fresh tail; an
//! extent does the same at step granularity. Its key names the query, the
//! step and the window's first step, never the request's `end`, so every
//! refresh finds it; it holds the steps from that first step up to the last
//! one whose logs (`(t − offset − range, t − offset]`) ended before
//! `now − freshness` when it was written, so nothing newer than the
//! freshness bound is ever kept for the long TTL.
//!
//! A step's value depends only on its own logs, so the held steps followed
//! by the evaluated tail are the unsplit answer (the argument of
//! [`super::matrix`]). An extent whose start, step or format differ from
//! the window's is ignored; two refreshes writing at once each write a valid
//! extent, and the last one stays.

use std::future::Future;

use bytes::Bytes;
use cache::{CacheKey, Encoding, Fetched};

use super::WindowContext;
use super::matrix::{Merged, MetricWindowQuery};
use crate::error::ApiError;
use engine::answer::matrix_codec;
use engine::metric::{Grid, Matrix, Series};

/// The cache label of extent reads in `lokivl_cache_requests_total`.
const EXTENT_ENDPOINT: &str = "query_range_metric_extent";
/// The key route of extents (never a real path, never a window's route).
const EXTENT_ROUTE: &str = "/loki/api/v1/query_range#metric-extent";
/// The first bytes of every extent: a body of another format is ignored.
const MAGIC: &[u8; 4] = b"LXM1";
/// Magic, first step, step and step count.
const HEADER: usize = 4 + 8 + 8 + 4;

/// The closed steps of one window as stored: `grid` starts at the window's
/// first step and ends at its last closed step.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Extent {
    /// The steps held (same start and step as the window).
    pub grid: Grid,
    /// Their series; point steps index `grid`.
    pub series: Matrix,
}

/// The series of `window` (one window of a request, closed or live), made
/// of the extent's steps and `eval_tail` over the steps after them.
///
/// With `closed_before` (the window is live), the steps at or before it are
/// stored back as the window's grown extent when they are more than it held.
///
/// # Errors
/// `eval_tail`'s error.
pub(super) async fn assemble<F, Fut>(
    ctx: &WindowContext,
    q: &MetricWindowQuery,
    window: Grid,
    closed_before: Option<i64>,
    eval_tail: F,
) -> Result<Matrix, ApiError>
where
    F: FnOnce(Grid) -> Fut,
    Fut: Future<Output = Result<Matrix, ApiError>>,
{
    let key = extent_key(q, window);
    let held = read(ctx, &key, window).await;
    let held_len = held.as_ref().map_or(0, |e| e.grid.len);
    let mut merged = Merged::new(window);
    if let Some(e) = held {
        merged.push(&e.grid, e.series);
    }
    let tail = tail(window, held_len);
    if tail.len > 0 {
        merged.push(&tail, eval_tail(tail).await?);
    }
    let series = merged.finish();
    let grown = closed_before
        .and_then(|before| closed_steps(window, before))
        .filter(|closed| closed.len > held_len);
    if let Some(closed) = grown {
        let e = Extent {
            grid: closed,
            series: prefix(&series, closed.len),
        };
        write(ctx, key, &e).await;
    }
    Ok(series)
}

/// The steps of `window` after its first `held` ones (none when all are held).
fn tail(window: Grid, held: u32) -> Grid {
    Grid {
        start: window.time(held.min(window.len)),
        step: window.step,
        len: window.len.saturating_sub(held),
    }
}

/// The steps of `window` at or before `before`, or `None` when there are none.
pub(super) fn closed_steps(window: Grid, before: i64) -> Option<Grid> {
    if window.len == 0 || before < window.start {
        return None;
    }
    let n = (before - window.start) / window.step + 1;
    let len = u32::try_from(n).unwrap_or(u32::MAX).min(window.len);
    Some(Grid { len, ..window })
}

/// The points of `m` at its first `len` steps; series without one are left out.
fn prefix(m: &Matrix, len: u32) -> Matrix {
    m.iter()
        .filter_map(|s| {
            let points: Vec<_> = s.points.iter().copied().filter(|p| p.step < len).collect();
            (!points.is_empty()).then(|| Series {
                labels: s.labels.clone(),
                points,
            })
        })
        .collect()
}

/// The extent of `window`, if one is stored for its query, start and step.
/// Every extent read goes through here; it reads the shared tier too, so a
/// replica grows the extent another replica stored.
async fn read(ctx: &WindowContext, key: &CacheKey, window: Grid) -> Option<Extent> {
    let cache = ctx.cache.as_ref()?;
    let held = cache
        .get_through(key)
        .await
        .and_then(|b| decode(&b, window));
    let outcome = if held.is_some() { "hit" } else { "miss" };
    ctx.metrics.observe_cache(EXTENT_ENDPOINT, outcome);
    held
}

/// Stores `e` for the long TTL. Every extent write goes through here; the
/// caller guarantees `e` holds closed steps only.
async fn write(ctx: &WindowContext, key: CacheKey, e: &Extent) {
    if let Some(cache) = &ctx.cache {
        cache
            .insert(key, Fetched::new(encode(e), ctx.lifetimes.ttl))
            .await;
    }
}

/// The key of a window's extent: tenant, credentials, canonical query, step,
/// the step alignment and the window's first step. Not the request's end.
fn extent_key(q: &MetricWindowQuery, window: Grid) -> CacheKey {
    CacheKey::new(
        q.request.cache_scope(),
        Encoding::Identity,
        "",
        q.request.credentials(),
        EXTENT_ROUTE,
        format!(
            "{}\n{}\n{}\n{}",
            q.query,
            window.step,
            window.start.rem_euclid(window.step),
            window.start
        ),
    )
}

fn encode(e: &Extent) -> Bytes {
    let mut out = Vec::with_capacity(HEADER + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&e.grid.start.to_le_bytes());
    out.extend_from_slice(&e.grid.step.to_le_bytes());
    out.extend_from_slice(&e.grid.len.to_le_bytes());
    matrix_codec::encode(&e.series, &mut out);
    Bytes::from(out)
}

/// The extent in `b` when it is one for `window`'s start and step, in this
/// format, with every point on its steps; `None` otherwise.
fn decode(b: &[u8], window: Grid) -> Option<Extent> {
    let head = b.get(..HEADER)?;
    let (magic, rest) = head.split_at(4);
    if magic != MAGIC {
        return None;
    }
    let start = i64::from_le_bytes(rest.get(..8)?.try_into().ok()?);
    let step = i64::from_le_bytes(rest.get(8..16)?.try_into().ok()?);
    let len = u32::from_le_bytes(rest.get(16..20)?.try_into().ok()?);
    if start != window.start || step != window.step || len == 0 {
        return None;
    }
    let series = matrix_codec::decode(b.get(HEADER..)?).ok()?;
    if series.iter().flat_map(|s| &s.points).any(|p| p.step >= len) {
        return None;
    }
    Some(Extent {
        grid: Grid { start, step, len },
        series,
    })
}

#[cfg(test)]
mod tests;
