//! Bucketed `stats` requests whose buckets start where Loki's windows need
//! them, whichever time-bucket offset rule the VictoriaLogs release follows
//! ([`crate::backend::dialect`]).

use engine::ndjson::{Body, Source as _};

use super::AppState;
use crate::backend::Request;
use crate::backend::dialect::{Alignment, alignment};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::work::cpu;
use crate::work::stop::Deadline;
use engine::metric::EngineError;
use engine::metric::buckets::BucketSeries;

/// One bucketed request: buckets of `bucket_ns` starting at `start_ns`
/// (mod `bucket_ns`), over VictoriaLogs' inclusive `[vl_start, vl_end]`.
pub(super) struct Bucketed {
    pub bucket_ns: i64,
    pub start_ns: i64,
    pub vl_start: i64,
    pub vl_end: i64,
}

/// Asks for `query(offset)` with the offset the server's rule needs and
/// decodes the answer with `decode` (by `deadline`); if the bucket starts show the other
/// rule, learns it and asks once more.
///
/// # Errors
/// [`ApiError`] for backend failures, undecodable answers, and an answer
/// whose buckets start where neither rule puts them.
pub(super) async fn fetch<D>(
    state: &AppState,
    ctx: &RequestContext,
    b: &Bucketed,
    query: impl Fn(i64) -> String,
    deadline: Deadline,
    decode: D,
) -> Result<Vec<BucketSeries>, ApiError>
where
    D: Fn(&mut Body, i64) -> Result<Vec<BucketSeries>, EngineError> + Clone + Send + 'static,
{
    let backend = &state.backend;
    let mut rule = backend
        .offset_rule(ctx.tenant().members().first().map(|m| m.vl))
        .await;
    for retry in [false, true] {
        let offset = rule.offset_for(b.start_ns, b.bucket_ns);
        let mut body = post(state, ctx, &query(offset), b.vl_start, b.vl_end).await?;
        // An answer is one row per bucket and series, usually small enough
        // to decode here; a large one (many series, or a backend answering
        // rows) is decoded off the async workers ([`cpu::run`] inlines
        // small jobs).
        let (decode, bucket) = (decode.clone(), b.bucket_ns);
        let series = cpu::run(deadline, body.byte_len(), move |_| {
            decode(&mut body, bucket).map_err(ApiError::from)
        })
        .await?;
        // A bucket ending at `a` covers `(a − bucket, a]`: it starts at `a − bucket + 1`.
        let starts = series
            .iter()
            .flat_map(|s| s.buckets.iter().map(|(end, _)| end - b.bucket_ns + 1));
        match alignment(starts, b.start_ns, offset, b.bucket_ns) {
            Alignment::Aligned => {
                backend.learn_offset_rule(rule);
                return Ok(series);
            }
            Alignment::Silent => return Ok(series),
            Alignment::Misaligned if !retry => rule = rule.other(),
            Alignment::Misaligned => break,
        }
    }
    Err(ApiError::Internal(format!(
        "VictoriaLogs put {} ns buckets where neither known offset rule puts them",
        b.bucket_ns
    )))
}

/// One `query` over VictoriaLogs' inclusive `[start, end]` (the metric
/// engine's calls go through here).
pub(super) async fn post(
    state: &AppState,
    ctx: &RequestContext,
    query: &str,
    start: i64,
    end: i64,
) -> Result<Body, ApiError> {
    Ok(state
        .backend
        .send_rows(ctx, &Request::query(query, start, end))
        .await?)
}
