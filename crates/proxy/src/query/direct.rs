//! Log queries VictoriaLogs answers whole (no pipeline stage in the proxy):
//! the newest (or oldest) `limit` entries of a range, exactly as Loki
//! keeps them.
//!
//! VictoriaLogs' `limit` keeps an arbitrary subset of the rows that share
//! the timestamp where it cuts, while Loki keeps those of the streams with
//! the smallest hashes ([`engine::tie`]). So the first call asks for a few
//! rows more than the limit ([`extra_rows`]). When the limit cuts through a
//! timestamp and a farther row came back, every row of that timestamp is
//! in the answer, and the engine keeps Loki's choice from it. Only when the
//! rows from the last kept one to the farthest all share one time (and the
//! answer is full) may VictoriaLogs hold more of them: a second call then
//! reads that one timestamp whole (bounded by the request's row budget),
//! and the first answer's rows on the near side of it and the second
//! answer's rows ([`engine::ndjson::Spliced`]) are every row up to and
//! including it. The first answer is copied, for that splice, only when
//! [`engine::ndjson::edge_run`] shows the case before the in-place decode.

use http::StatusCode;
use logsql_ast::LogPlan;

use crate::backend::{Backend, Request, Take};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::work::{Work, cpu};
use engine::answer::LogAnswer;
use engine::direction::Direction;
use engine::encode::streams::{StreamsOptions, StreamsSummary, decode_streams_summary};
use engine::ndjson::{Source, Spliced, edge_run};

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
    let extra = extra_rows(opts.limit);
    let want = opts.limit + extra;
    let req = Request::query(plan.query.clone(), start, last).take(take(want));
    let first = backend.send_rows(ctx, &req).await?;
    // The first answer is decoded in place; a copy is kept only when the
    // second call may follow: the answer is full and its rows from the
    // last kept one on all have the farthest time.
    let rows = first.row_count();
    let full = rows >= want;
    let may_tie = full && edge_run(&first, direction).is_none_or(|n| n > rows - opts.limit);
    let kept = may_tie.then(|| first.clone());
    let (answer, summary) = decode(first, &opts, plan, work).await?;
    // A short answer is every row of the range: nothing more to read.
    let Some(t) = summary.tied_cut.filter(|_| full) else {
        return Ok(answer);
    };
    // `edge_run` never misses a tie; were it to, the first answer is read
    // again rather than spliced without its rows.
    let first = match kept {
        Some(first) => first,
        None => backend.send_rows(ctx, &req).await?,
    };
    let whole = work.budgets.rows.max().max(want);
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

/// Rows asked beyond `limit`: a cut through a timestamp with fewer rows
/// than this beyond the limit needs no second call. About 6 % of the
/// limit, at least 1 and at most 64: a few rows more to transfer against a
/// second VictoriaLogs call and a second decode on data whose timestamps
/// repeat (coarse clocks, batched shippers).
fn extra_rows(limit: usize) -> usize {
    (limit / 16 + 1).min(64)
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
