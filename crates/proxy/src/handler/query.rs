//! `query_range` and `query`: LogQL in, Loki JSON out.

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use http::StatusCode;
use logql_parser::{Expr, LogExpr};
use logsql_ast::LogPlan;

use super::{AppState, json_response};
use crate::backend::Backend;
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::params::{self, Form, RangeParams, timestamp::now_ns};
use crate::query::log::LogRange;
use crate::window::{Window, WindowBody, WindowContext, WindowQuery};
use crate::work::{RowBudget, Work, cpu};
use engine::answer::LogAnswer;
use engine::answer::encode::write_streams;
use engine::encode::streams::{StreamsOptions, decode_streams};
use engine::ndjson::Source;

/// The header Grafana sends to ask for structured metadata and parsed labels apart.
/// Loki's text for a log query sent to the instant endpoint.
pub const INSTANT_LOG_QUERY: &str = "log queries are not supported as an instant query type, please change your query to a range query type";

/// `GET|POST /loki/api/v1/query_range`.
///
/// # Errors
/// [`ApiError`] for bad parameters or LogQL, unsupported queries and backend failures.
pub async fn query_range(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    windows: Option<Extension<WindowContext>>,
    form: Form,
) -> Result<Response, ApiError> {
    let p = params::range_params(&form, now_ns())?;
    form.logql("query")?;
    let expr = logql_parser::parse_query(&p.query)?;
    engine::pipeline::validate::check(&expr).map_err(ApiError::BadRequest)?;
    params::check_query_length(ctx.limits(), p.bounds)?;
    // One budget for the whole request, shared by all its windows.
    let work = Work::new(&state.work, ctx.deadline());
    match expr {
        Expr::Log(log) => {
            let evaluation = log_range(&state, &ctx, windows.as_deref(), &p, &log, &work);
            state.log_queries.run(evaluation).await
        }
        Expr::Metric(m) => {
            let bounds = (p.bounds.start, p.bounds.end);
            super::metric::range(&state, &ctx, &m, bounds, p.step, windows.as_deref(), &work).await
        }
    }
}

/// `GET|POST /loki/api/v1/query`.
///
/// # Errors
/// [`ApiError`] for bad parameters or LogQL, log queries and unsupported metric queries.
pub async fn query(
    State(state): State<AppState>,
    Extension(ctx): Extension<RequestContext>,
    form: Form,
) -> Result<Response, ApiError> {
    let p = params::instant_params(&form, now_ns())?;
    form.logql("query")?;
    let expr = logql_parser::parse_query(&p.query)?;
    engine::pipeline::validate::check(&expr).map_err(ApiError::BadRequest)?;
    let work = Work::new(&state.work, ctx.deadline());
    match expr {
        Expr::Log(_) => Err(ApiError::BadRequest(INSTANT_LOG_QUERY.to_owned())),
        Expr::Metric(m) => super::metric::instant(&state, &ctx, &m, p.time, &work).await,
    }
}

/// Whether the client asked for categorized labels, read as Loki reads
async fn log_range(
    state: &AppState,
    ctx: &RequestContext,
    windows: Option<&WindowContext>,
    p: &RangeParams,
    log: &LogExpr,
    work: &Work,
) -> Result<Response, ApiError> {
    params::check_max_entries(ctx.limits(), p.limit)?;
    if p.interval > 0 {
        // Sampling one entry per interval is not implemented; answering without it would
        // return more entries than Loki, so say so instead.
        return Err(ApiError::Unsupported(
            "the interval parameter is not supported by lokivl yet".to_owned(),
        ));
    }
    let discovery = ctx.discovery();
    let mut plan = logsql_ast::lower_log(log, discovery)?;
    if state.parser_pushdown {
        // `| json | <filters>` (or `| logfmt`): VictoriaLogs returns only
        // the rows the filters keep or its guard doubts; the proxy still
        // runs it all.
        logsql_ast::add_parser_prefilter(&mut plan);
    }
    let started = std::time::Instant::now();
    let categorize = ctx.categorize_labels();
    let (start, end) = (p.bounds.start, p.bounds.end);
    if end <= start {
        // An empty [start, start) range: nothing to ask for.
        let answer = if plan.has_proxy_stages() {
            crate::query::log::empty_answer(categorize)
        } else {
            let mut empty = bytes::BytesMut::new();
            decode(
                &mut empty,
                &streams_options(p, &plan, categorize),
                discovery,
            )?
        };
        return encode(answer, started, work).await;
    }
    // Without a cache nothing is reused, and for a query VictoriaLogs
    // answers whole the windows a parallel walk reads beyond the one that
    // completes `limit` would only add work: it runs unsplit, in one call.
    // A query with proxy stages stays split: it reads its rows page by
    // page, and a page over one window costs VictoriaLogs that window, not
    // the whole range.
    let unsplit = !plan.has_proxy_stages() && windows.is_some_and(|w| w.cache.is_none());
    let split = windows.filter(|_| !unsplit).and_then(|wctx| {
        let now = crate::params::timestamp::now_ns();
        crate::window::log_extent::live_windows(wctx, start, end, p.direction, now)
            .map(|w| (wctx, w))
    });
    let Some((wctx, windows)) = split else {
        let w = Window { start, end };
        let out = fetch_range(&state.backend, ctx, &plan, p, w, work).await?;
        return encode(out.answer, started, work).await;
    };
    // Each window is the same query over a slice of the range, answered by the
    // same code, with the whole limit (earlier windows may hold fewer entries).
    let q = WindowQuery {
        query: log.to_string(),
        limit: p.limit as usize,
        direction: p.direction,
        categorize,
        request: ctx.clone(),
    };
    let backend = state.backend.clone();
    let plan = std::sync::Arc::new(plan);
    let p = std::sync::Arc::new(p.clone());
    let (ctx, fetch_work) = (ctx.clone(), work.clone());
    // Each window's fetch owns a copy of the request context.
    let answer = crate::window::run(wctx, &q, windows, move |w: Window| {
        let (backend, ctx, plan, p, work) = (
            backend.clone(),
            ctx.clone(),
            plan.clone(),
            p.clone(),
            fetch_work.clone(),
        );
        // Boxed: the window task stays small (debug builds copy large
        // futures through every poll frame).
        async move { Box::pin(fetch_range(&backend, &ctx, &plan, &p, w, &work)).await }
    })
    .await?;
    encode(answer, started, work).await
}

/// Writes the Loki body of `answer` (off the async workers when large).
async fn encode(
    answer: LogAnswer,
    started: std::time::Instant,
    work: &Work,
) -> Result<Response, ApiError> {
    let size = answer.len() * 64;
    let out = cpu::run(work.deadline, size, move |_| {
        let mut out = Vec::new();
        write_streams(&answer, started, &mut out);
        Ok::<_, ApiError>(out)
    })
    .await?;
    Ok(json_response(out))
}

fn streams_options(p: &RangeParams, plan: &LogPlan, categorize: bool) -> StreamsOptions {
    StreamsOptions {
        direction: p.direction,
        limit: p.limit as usize,
        categorize,
        parsed_prefix: plan.parsed_prefix,
    }
}

/// The Loki answer of `plan` over the window `[start, end)` (non-empty),
/// for `p.limit` entries in `p.direction`: the whole request, or one window
/// of it. Rows the proxy's pipeline reads come out of the request's budget.
async fn fetch_range(
    backend: &Backend,
    ctx: &RequestContext,
    plan: &LogPlan,
    p: &RangeParams,
    w: Window,
    work: &Work,
) -> Result<WindowBody, ApiError> {
    let categorize = ctx.categorize_labels();
    let (start, end) = (w.start, w.end);
    if plan.has_proxy_stages() {
        let q = LogRange {
            start,
            end,
            limit: p.limit as usize,
            direction: p.direction,
            categorize,
        };
        let budget: &RowBudget = &work.budgets.rows;
        let answer =
            crate::query::log::log_range_bounded(backend, ctx, plan, q, budget, work.deadline)
                .await?;
        return Ok(WindowBody {
            answer: answer.answer,
            cacheable: !answer.cut,
        });
    }
    let opts = streams_options(p, plan, categorize);
    let answer = crate::query::direct::fetch(backend, ctx, plan, opts, (start, end), work).await?;
    Ok(WindowBody {
        answer,
        cacheable: true,
    })
}

fn decode(
    body: &mut (impl Source + ?Sized),
    opts: &StreamsOptions,
    discovery: &logsql_ast::Discovery,
) -> Result<LogAnswer, ApiError> {
    decode_streams(body, opts, discovery).map_err(|e| ApiError::BackendFailed {
        status: StatusCode::BAD_GATEWAY,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use crate::context::{ENCODING_FLAGS, wants_categorized};
    use http::HeaderMap;
    use http::HeaderValue;

    #[test]
    fn categorize_flag_detection() {
        let mut h = HeaderMap::new();
        assert!(!wants_categorized(&h));
        h.insert(
            ENCODING_FLAGS,
            HeaderValue::from_static("categorize-labels"),
        );
        assert!(wants_categorized(&h));
        h.insert(
            ENCODING_FLAGS,
            HeaderValue::from_static("other,categorize-labels"),
        );
        assert!(wants_categorized(&h));
        // Loki compares each flag as sent, without trimming it.
        h.insert(
            ENCODING_FLAGS,
            HeaderValue::from_static("other, categorize-labels"),
        );
        assert!(!wants_categorized(&h));
        // Only the first value counts, as with Go's `Header.Get`.
        h.insert(ENCODING_FLAGS, HeaderValue::from_static("other"));
        h.append(
            ENCODING_FLAGS,
            HeaderValue::from_static("categorize-labels"),
        );
        assert!(!wants_categorized(&h));
        h.insert(
            ENCODING_FLAGS,
            HeaderValue::from_static("categorize-labels-v2"),
        );
        assert!(!wants_categorized(&h));
    }
}
