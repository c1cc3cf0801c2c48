//! Log queries VictoriaLogs answers whole (no pipeline stage in the proxy):
//! the newest (or oldest) `limit` entries of a range, exactly as Loki
//! keeps them.
//!
//! VictoriaLogs' `limit` keeps an arbitrary subset of the rows that share
//! the timestamp where it cuts, while Loki keeps those of the streams with
//! the smallest hashes ([`engine::tie`]). So the first call asks for one
//! row more than the limit: when that row has the timestamp of the last
//! kept one, the cut went through a timestamp and a second call reads that
//! one timestamp whole (bounded by the request's row budget). The first
//! answer's rows on the near side of it and the second answer's rows
//! ([`engine::ndjson::Spliced`]) are then every row up to and including it,
//! from which the engine keeps Loki's choice. Otherwise, the usual case, the
//! extra row is dropped and nothing more is asked; the first answer is then
//! not copied either ([`engine::ndjson::edge_time_repeats`] tells the two
//! cases apart before the in-place decode).

use http::StatusCode;
use logsql_ast::LogPlan;

use crate::backend::{Backend, Request, Take};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::work::{Work, cpu};
use engine::answer::LogAnswer;
use engine::direction::Direction;
use engine::encode::streams::{StreamsOptions, StreamsSummary, decode_streams_summary};
use engine::ndjson::{Source, Spliced, edge_time_repeats};

/// The answer of `plan` over Loki's `[start, end)` (non-empty) for
/// `opts.limit` entries in `opts.direction`.
///
/// # Errors
/// Backend failures; a malformed answer is a 502.
pub async fn fetch(
    backend: &Backend,
    ctx: &RequestContext,
    plan: &LogPlan,
    opts: StreamsOptions,
    (start, end): (i64, i64),
    work: &Work,
) -> Result<LogAnswer, ApiError> {
    let direction = opts.direction;
    let take = |n: usize| match direction {
        Direction::Backward => Take::Newest(n),
        Direction::Forward => Take::Oldest(n),
    };
    // Loki's log range is [start, end); VictoriaLogs' is [start, end].
    let last = end - 1;
    let req = Request::query(plan.query.clone(), start, last).take(take(opts.limit + 1));
    let first = backend.send_rows(ctx, &req).await?;
    // The first answer is decoded in place; a copy is kept only when the
    // cut may go through a timestamp: more rows than the limit came back,
    // and (with exactly one more) the farthest row's time occurs twice.
    let rows = first.row_count();
    let may_tie =
        rows > opts.limit && (rows != opts.limit + 1 || edge_time_repeats(&first, direction));
    let kept = may_tie.then(|| first.clone());
    let (answer, summary) = decode(first, &opts, plan, work).await?;
    let Some(t) = summary.tied_cut else {
        return Ok(answer);
    };
    // `edge_time_repeats` never misses a tie; were it to, the first answer
    // is read again rather than spliced without its rows.
    let first = match kept {
        Some(first) => first,
        None => backend.send_rows(ctx, &req).await?,
    };
    let whole = work.budgets.rows.max().max(opts.limit + 1);
    let req = Request::query(plan.query.clone(), t, t).take(take(whole));
    let second = backend.send_rows(ctx, &req).await?;
    let spliced = Spliced {
        first,
        second,
        tied_ns: t,
    };
    let (answer, _) = decode(spliced, &opts, plan, work).await?;
    Ok(answer)
}

async fn decode(
    mut body: impl Source + Send + 'static,
    opts: &StreamsOptions,
    plan: &LogPlan,
    work: &Work,
) -> Result<(LogAnswer, StreamsSummary), ApiError> {
    let (opts, discovery) = (opts.clone(), plan.discovery.clone());
    cpu::run(work.deadline, body.byte_len(), move |_| {
        decode_streams_summary(&mut body, &opts, &discovery).map_err(|e| ApiError::BackendFailed {
            status: StatusCode::BAD_GATEWAY,
            message: e.to_string(),
        })
    })
    .await
}
