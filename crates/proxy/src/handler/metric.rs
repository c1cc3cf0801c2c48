//! Metric queries (`query_range` and `query` with a metric expression).
//!
//! Each range aggregation is lowered to a bucketed `stats` request
//! ([`logsql_ast::RangePlan::lower`]); buckets are `gcd(range, step)` wide and
//! aligned so that Loki's `(t − range, t]` windows are exact unions of them.
//! The proxy combines buckets per window and evaluates the vector operators
//! ([`engine::metric`]). Raw values are fetched only for quantile, first,
//! last and `rate_counter`, at most [`MAX_RAW_SAMPLES`] per request.
//!
//! With discovery on, selectors see the derived `service_name`; series
//! needing it are counted per stream and mapped
//! ([`engine::metric::discovered`]), series needing `detected_level` are
//! counted from rows (at most [`MAX_ROWS`] per request).
//!
//! Both bounds are the request's ([`crate::work::Budgets`]), shared by its
//! windows and range aggregations; decoding, extraction and evaluation run
//! as [`crate::work::cpu`] jobs, off the async workers.

use std::sync::Arc;
use std::time::Instant;

use axum::response::Response;
use logql_parser::{Grouping, MatchOp, MetricExpr, RangeOp};
use logsql_ast::{MetricPipe, RangePlan, bucket_start};

use super::bucketed::{self, Bucketed, post};
use super::{AppState, json_response};
use crate::backend::{Endpoint, Request};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::window::WindowContext;
use crate::window::matrix::MetricWindowQuery;
use crate::work::{RowBudget, Work, cpu};
use engine::answer::encode::metric::write_metric;
use engine::answer::{MetricAnswer, MetricResult};
use engine::encode::stats::Summary;
use engine::labels::sanitize_label_name;
use engine::metric::discovered::{self, Derived};
use engine::metric::eval::{self, Order};
use engine::metric::plan::{self, Need, RangeInput};
use engine::metric::window::{self, WindowSpec};
use engine::metric::{EngineError, Grid, Matrix, Value, buckets, domain, optimize, raw, rows};
use engine::ndjson::{Body, Source as _};
use engine::pipeline::hints::MetricGrouping;

mod levels;

use self::levels::{Leveled, fetch_levels};

/// Loki's default `max_query_series` (the request's is [`RequestContext::limits`]).
pub const DEFAULT_MAX_QUERY_SERIES: usize = 500;
/// Raw samples read at most per request for quantile/first/last/rate_counter
/// (the default of [`crate::work::WorkLimits::max_raw_samples`]).
pub const MAX_RAW_SAMPLES: u64 = crate::work::budget::DEFAULT_MAX_RAW_SAMPLES as u64;
/// Buckets per series at most: beyond, `gcd(range, step)` is too fine to be cheap.
pub const MAX_BUCKETS: i64 = 200_000;
/// Entries read at most per request when the pipeline runs in the proxy
/// (the default of [`crate::work::WorkLimits::max_rows`]).
pub const MAX_ROWS: u64 = crate::work::budget::DEFAULT_MAX_ROWS as u64;

/// Answers a range metric query as a `matrix`.
///
/// With `windows` (the cache layer's context), a range longer than one split
/// interval is evaluated in step-aligned windows ([`crate::window::matrix`]),
/// so that closed windows are served from the cache on the next refresh.
/// All windows read from the request's one budget ([`Work`]).
///
/// # Errors
/// [`ApiError`] for unsupported pipelines, engine errors and backend failures.
pub async fn range(
    state: &AppState,
    ctx: &RequestContext,
    expr: &MetricExpr,
    bounds: (i64, i64),
    step: i64,
    windows: Option<&WindowContext>,
    work: &Work,
) -> Result<Response, ApiError> {
    let began = Instant::now();
    let expr = &*optimize::as_loki_runs(expr);
    let (start, end) = bounds;
    // Loki's query frontend aligns metric range queries to the step:
    // `start` down and `end` up to a multiple of it.
    let aligned = start
        .checked_sub(start.rem_euclid(step))
        .zip(end.checked_add((step - end.rem_euclid(step)) % step));
    let Some((start, end)) = aligned else {
        return Err(ApiError::BadRequest(domain::OUT_OF_RANGE.to_owned()));
    };
    let grid = Grid::range(start, end, step);
    // Without a cache nothing is reused, and whole closed windows would only
    // add work: the range runs unsplit.
    let cached = windows.filter(|w| w.cache.is_some());
    let window = cached.map_or(0, |w| w.settings.interval_ns());
    domain::check(&grid, window, &plan::collect(expr))?;
    let split = cached.and_then(|ctx| {
        let closed_before = crate::params::timestamp::now_ns()
            .saturating_sub(i64::try_from(ctx.lifetimes.freshness.as_nanos()).unwrap_or(0))
            .saturating_sub(lookahead(expr));
        crate::window::metric_split::metric_windows(grid, ctx.settings.interval_ns(), closed_before)
            .map(|w| (ctx, w, closed_before))
    });
    let m = match split {
        None => Box::pin(matrix(state, ctx, expr, &grid, work)).await?,
        Some((wctx, w, closed_before)) => {
            let q = MetricWindowQuery {
                query: expr.to_string(),
                request: ctx.clone(),
            };
            let (state, expr, work) = (state.clone(), Arc::new(expr.clone()), work.clone());
            let eval = move |ctx: RequestContext, g: Grid| {
                let (state, expr, work) = (state.clone(), Arc::clone(&expr), work.clone());
                // Boxed: the window task stays small (debug builds copy
                // large futures through every poll frame).
                async move { Box::pin(matrix(&state, &ctx, &expr, &g, &work)).await }
            };
            crate::window::matrix::run(wctx, &q, grid, w, closed_before, eval).await?
        }
    };
    let max_series = ctx.limits().max_query_series;
    let out = cpu::run(work.deadline, points(&m) * 32, move |_| {
        let mut m = m;
        check_series(&m, max_series)?;
        eval::sort(&mut m, Order::Labels);
        let mut out = Vec::with_capacity(256 + m.len() * 64);
        let answer = MetricAnswer::query(MetricResult::Matrix(m), grid, summary(began));
        write_metric(&answer, &mut out);
        Ok::<_, ApiError>(out)
    })
    .await?;
    Ok(json_response(out))
}

/// Points over all series of `m`, to size the work on it.
fn points(m: &Matrix) -> usize {
    m.iter().map(|s| s.points.len()).sum()
}

/// The series of `expr` over `grid` (a scalar becomes one label-less series).
async fn matrix(
    state: &AppState,
    ctx: &RequestContext,
    expr: &MetricExpr,
    grid: &Grid,
    work: &Work,
) -> Result<Matrix, ApiError> {
    Ok(match run(state, ctx, expr, grid, work).await? {
        Value::Vector(m) => m,
        Value::Scalar(v) => eval_scalar_series(v, grid),
    })
}

/// How far past a step the logs it reads may reach: a negative `offset`
/// reads after the step's time, so its window closes later.
pub(crate) fn lookahead(expr: &MetricExpr) -> i64 {
    plan::collect(expr)
        .iter()
        .map(|i| i.agg.range.offset.map_or(0, |d| -d.as_nanos()))
        .max()
        .unwrap_or(0)
        .max(0)
}

/// Answers an instant metric query as a `vector` or `scalar`.
///
/// # Errors
/// [`ApiError`] for unsupported pipelines, engine errors and backend failures.
pub async fn instant(
    state: &AppState,
    ctx: &RequestContext,
    expr: &MetricExpr,
    time: i64,
    work: &Work,
) -> Result<Response, ApiError> {
    let began = Instant::now();
    let expr = &*optimize::as_loki_runs(expr);
    let grid = Grid::instant(time);
    domain::check(&grid, 0, &plan::collect(expr))?;
    let value = run(state, ctx, expr, &grid, work).await?;
    let summary = summary(began);
    let result = match value {
        Value::Scalar(v) => MetricResult::Scalar(v),
        Value::Vector(mut m) => {
            check_series(&m, ctx.limits().max_query_series)?;
            eval::sort(&mut m, eval::order_of(expr));
            MetricResult::Vector(m)
        }
    };
    let mut out = Vec::with_capacity(256);
    write_metric(&MetricAnswer::query(result, grid, summary), &mut out);
    Ok(json_response(out))
}

fn summary(began: Instant) -> Summary {
    Summary {
        exec_time_secs: began.elapsed().as_secs_f64(),
        ..Summary::default()
    }
}

fn eval_scalar_series(v: f64, grid: &Grid) -> Matrix {
    vec![engine::metric::Series {
        labels: Vec::new(),
        points: (0..grid.len)
            .map(|step| engine::metric::Point { step, v })
            .collect(),
    }]
}

/// Loki's `max_query_series` (`max`, 0 = unlimited) on an answer.
fn check_series(m: &Matrix, max: usize) -> Result<(), ApiError> {
    if max > 0 && m.len() > max {
        return Err(EngineError::TooManySeries(max).into());
    }
    Ok(())
}

async fn run(
    state: &AppState,
    ctx: &RequestContext,
    expr: &MetricExpr,
    grid: &Grid,
    work: &Work,
) -> Result<Value, ApiError> {
    let mut inputs = Vec::new();
    for input in plan::collect(expr) {
        inputs.push(Box::pin(fetch(state, ctx, &input, grid, work)).await?);
    }
    let size = inputs.iter().map(points).sum::<usize>() * 16;
    let (expr, grid) = (expr.clone(), *grid);
    cpu::run(work.deadline, size, move |_| {
        Ok(eval::evaluate(&expr, &grid, &mut inputs.into_iter())?)
    })
    .await
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The VictoriaLogs bucket for windows of `range` at `grid`'s steps:
/// gcd(range, step), the range itself for an instant query; refused when
/// `[vl_start, vl_end]` would need more than [`MAX_BUCKETS`] of them.
fn bucket_ns(grid: &Grid, range: i64, vl_start: i64, vl_end: i64) -> Result<i64, ApiError> {
    let bucket = if grid.is_instant() {
        range
    } else {
        gcd(range, grid.step)
    };
    if vl_end.saturating_sub(vl_start) / bucket > MAX_BUCKETS {
        return Err(ApiError::Unsupported(format!(
            "the range and step have too small a common divisor ({bucket} ns buckets); use a step that divides the range"
        )));
    }
    Ok(bucket)
}

/// The `| limit` of a rows query: one more than the budget, so that reading
/// past it is noticed.
///
/// The whole budget, not what is left of it: what is left depends on how far
/// the request's parallel windows got, and the LogsQL sent must not (cache
/// keys, recorded exchanges); the shared budget is enforced on what was read.
fn rows_limit(budget: &RowBudget) -> u64 {
    u64::try_from(budget.max())
        .unwrap_or(u64::MAX)
        .saturating_add(1)
}

/// Fetches and windows one range aggregation.
async fn fetch(
    state: &AppState,
    ctx: &RequestContext,
    input: &RangeInput<'_>,
    grid: &Grid,
    work: &Work,
) -> Result<Matrix, ApiError> {
    let r = input.agg;
    let range = r.range.interval.as_nanos();
    let offset = r.range.offset.map_or(0, |d| d.as_nanos());
    if range <= 0 {
        return Err(ApiError::BadRequest("range must be positive".into()));
    }
    let discovery = ctx.discovery();
    let derived = Derived::of(&input.need, discovery);
    // A parser runs in VictoriaLogs only for series of known labels: Loki's
    // parser hints then name every label it must produce.
    let lowered = match &input.need {
        Need::Only(labels) if state.parser_pushdown => {
            RangePlan::lower_with_parsers(r, discovery, labels)
        }
        _ => RangePlan::lower(r, discovery),
    };
    if let Ok(plan) = &lowered
        && !plan.guarded
        && derived.level
        && plan.unwrap.is_none()
        && !plan.needs_raw()
        && r.op != RangeOp::AbsentOverTime
    {
        let (fields, keep) = match &input.need {
            Need::Only(keep) => (keep.clone(), keep.clone()),
            // Every label: the fields of the selected entries (by their
            // names in VictoriaLogs, kept by their label names) and the
            // synthesized ones.
            Need::All => {
                let (s, e) = (grid.start - offset - range + 1, grid.last() - offset);
                let fields = discover(state, ctx, plan, s, e).await?;
                let keep = discovered::all_labels(&fields, derived);
                (fields, keep)
            }
        };
        // OTLP records' severity fields are translated per entry
        // (`engine::discovery::otel`): VictoriaLogs cannot group by what Loki stored.
        // Other streams' `severity_*` metadata is stored as pushed.
        let otlp = fields
            .iter()
            .any(|f| logsql_ast::otel::is_index_attribute(f));
        if engine::metric::discovered::groups_by_severity(&input.need)
            || otlp && engine::discovery::otel::stores_severity(&fields)
        {
            return fetch_rows(state, ctx, input, grid, work).await;
        }
        let level = Leveled {
            plan,
            fields: &fields,
            keep: &keep,
            discovery,
            derived,
        };
        return fetch_levels(state, ctx, input, grid, &level, work).await;
    }
    let plan = match lowered {
        // `detected_level` is per entry, and raw values are not grouped by
        // stream: counted from rows, which synthesize the labels.
        Ok(plan)
            if !(derived.level
                || derived.service_name && plan.needs_raw()
                || engine::metric::discovered::groups_by_severity(&input.need)) =>
        {
            plan
        }
        // Stages VictoriaLogs cannot count exactly: the proxy runs them.
        _ => return fetch_rows(state, ctx, input, grid, work).await,
    };
    let spec = WindowSpec {
        op: r.op,
        range,
        offset,
        divisor: plan.unwrap.map_or(1.0, |s| s.divisor()),
        unwrapped: plan.unwrap.is_some(),
    };
    // Loki's windows (t − offset − range, t − offset] for every step, as
    // VictoriaLogs' inclusive [start, end].
    let vl_start = grid.start - offset - range + 1;
    let vl_end = grid.last() - offset;
    let by = match &input.need {
        Need::Only(labels) => engine::discovery::otel::group_fields(labels, discovery),
        Need::All => discover(state, ctx, &plan, vl_start, vl_end).await?,
    };
    // OTel severity fields are translated per entry (`engine::discovery::otel`).
    if engine::discovery::otel::stores_severity(&by) {
        return fetch_rows(state, ctx, input, grid, work).await;
    }
    // Loki drops the unwrapped label from the sample's labels.
    let by: Vec<String> = match &r.range.unwrap {
        Some(u) => by
            .into_iter()
            .filter(|f| *f != u.label && sanitize_label_name(f) != u.label.as_str())
            .collect(),
        None => by,
    };
    // VictoriaLogs cannot group by the derived `service_name`: group by
    // stream and derive it per group (exact, it is a function of the stream).
    let by = if derived.service_name {
        discovered::stream_grouping(by)
    } else {
        by
    };
    let grouping = r.grouping.clone();
    let grid = *grid;
    if plan.needs_raw() {
        // Every window of the request reads from one budget of samples.
        let budget = work.budgets.raw_samples.clone();
        let q = plan.raw_query(&by, rows_limit(&budget));
        let mut body = post(state, ctx, &q, vl_start, vl_end).await?;
        let (op, param) = (r.op, r.param.unwrap_or(0.0));
        let m = cpu::run(work.deadline, body.byte_len(), move |_| {
            if !budget.spend(body.row_count()) {
                return Err(ApiError::Unsupported(format!(
                    "{op:?} needs every sample and more than {} fall in the query range; narrow the selector or the time range",
                    budget.max()
                )));
            }
            let series = raw::decode_guarded(&mut body, grouping.as_ref(), spec.divisor)?;
            Ok(series.map(|s| raw::evaluate(&s, &grid, &spec, param)))
        })
        .await?;
        if plan.guarded {
            state.metrics.observe_parser_pushdown(m.is_none());
        }
        // A suspect row: the proxy evaluates the range from rows.
        return match m {
            Some(m) => Ok(m),
            None => fetch_rows(state, ctx, input, &grid, work).await,
        };
    }
    let bucket = bucket_ns(&grid, range, vl_start, vl_end)?;
    let b = Bucketed {
        bucket_ns: bucket,
        start_ns: bucket_start(grid.start - offset, bucket),
        vl_start,
        vl_end,
    };
    let query = |o| plan.stats_query(bucket, o, &by);
    // Bucketed answers are one row per bucket and series, far fewer than the
    // entries they count (`bucketed::fetch` decodes large ones off the async
    // workers); the evaluation over the grid runs off the async workers.
    let series = if derived.service_name {
        bucketed::fetch(
            state,
            ctx,
            &b,
            query,
            work.deadline,
            buckets::decode_by_stream,
        )
        .await?
    } else {
        let grouping = grouping.clone();
        bucketed::fetch(state, ctx, &b, query, work.deadline, move |body, g| {
            buckets::decode(body, g, grouping.as_ref())
        })
        .await?
    };
    // Rows VictoriaLogs' parser may read otherwise than Loki's: the
    // proxy evaluates the range itself, as without the pushdown.
    if plan.guarded {
        let fallback = buckets::any_suspect(&series);
        state.metrics.observe_parser_pushdown(fallback);
        if fallback {
            return fetch_rows(state, ctx, input, &grid, work).await;
        }
    }
    let series = if derived.service_name {
        discovered::with_service_name(series, discovery, grouping.as_ref())?
    } else {
        series
    };
    let absent = (r.op == RangeOp::AbsentOverTime).then(|| absent_labels(r));
    let cells = series.iter().map(|s| s.buckets.len()).sum::<usize>() * 16;
    cpu::run(work.deadline, cells, move |_| {
        if let Some(labels) = absent {
            return Ok(window::absent(&series, &grid, &spec, labels));
        }
        Ok(window::evaluate(&series, &grid, &spec)?)
    })
    .await
}

/// Counts the rows of `body` against the request's row budget.
fn check_rows(body: &Body, budget: &RowBudget) -> Result<(), ApiError> {
    if !budget.spend(body.row_count()) {
        return Err(ApiError::Unsupported(format!(
            "the metric query's pipeline runs in lokivl and more than {} entries fall in the query range; narrow the selector or the time range",
            budget.max()
        )));
    }
    Ok(())
}

/// A range aggregation whose pipeline runs in the proxy: fetch the selected
/// entries (from the request's row budget), run the stages, extract
/// samples, window them.
async fn fetch_rows(
    state: &AppState,
    ctx: &RequestContext,
    input: &RangeInput<'_>,
    grid: &Grid,
    work: &Work,
) -> Result<Matrix, ApiError> {
    let discovery = ctx.discovery();
    let r = input.agg;
    let range = r.range.interval.as_nanos();
    let offset = r.range.offset.map_or(0, |d| d.as_nanos());
    let mut plan = logsql_ast::lower_log(&r.range.log, discovery)?;
    if state.parser_pushdown {
        // As for log queries: fewer rows, the same evaluation.
        logsql_ast::add_parser_prefilter(&mut plan);
    }
    let mut q = plan.query.to_string();
    // Nothing runs in the proxy but the synthesized labels: read only the
    // fields they and the needed labels come from.
    let synthesizes = *discovery != logsql_ast::Discovery::default();
    if let (Need::Only(labels), true, None) = (
        &input.need,
        synthesizes && plan.proxy_stages.is_empty(),
        &r.range.unwrap,
    ) {
        q.push_str(" | ");
        q.push_str(&MetricPipe::Fields(discovered::row_fields(labels)).to_string());
    }
    let budget = work.budgets.rows.clone();
    q.push_str(" | ");
    q.push_str(&logsql_ast::Pipe::Limit(rows_limit(&budget)).to_string());
    let vl_start = grid.start - offset - range + 1;
    let vl_end = grid.last() - offset;
    let mut body = post(state, ctx, &q, vl_start, vl_end).await?;
    // The job owns what it reads: the aggregation, the stages, the labels.
    let (agg, need, discovery, grid) = (r.clone(), input.need.clone(), discovery.clone(), *grid);
    let stages = plan.proxy_stages;
    let size = engine::pipeline::work_size(&stages, body.byte_len());
    cpu::run(work.deadline, size, move |stop| {
        check_rows(&body, &budget)?;
        let r = &agg;
        let unwrap = r.range.unwrap.as_ref();
        // Under `sum`, Loki's extractor already groups the samples by the
        // sum's labels (its `canInjectVectorGrouping`): one series per group,
        // whose rate is `count / range`, not a sum of per-entry rates.
        let injected = match (&r.grouping, &need) {
            (None, Need::Only(labels)) if r.op != RangeOp::AbsentOverTime => Some(Grouping {
                without: false,
                labels: labels.clone(),
            }),
            _ => None,
        };
        let ex = rows::Extract {
            op: r.op,
            unwrap: unwrap.map(logql_parser::Unwrap::target),
            grouping: r.grouping.as_ref().or(injected.as_ref()),
            windows: Some((grid, range, offset)),
            // Loki builds parser hints from the range aggregation's grouping,
            // its own or one a parent `sum` pushes down: what `Need` says.
            hint: match &need {
                Need::Only(labels) if labels.is_empty() => MetricGrouping::Nothing,
                Need::Only(labels) => MetricGrouping::By(labels),
                Need::All => MetricGrouping::All,
            },
            query_stages: &r.range.log.pipeline,
            discovery: &discovery,
        };
        let post_filters = unwrap
            .map(|u| u.post_filters.as_slice())
            .unwrap_or_default();
        let samples = rows::extract(&mut body, &stages, post_filters, &ex, stop)?;
        let spec = WindowSpec {
            op: r.op,
            range,
            offset,
            divisor: 1.0,
            unwrapped: unwrap.is_some(),
        };
        if r.op == RangeOp::AbsentOverTime {
            return Ok(window::absent(
                &samples.buckets,
                &grid,
                &spec,
                absent_labels(r),
            ));
        }
        if !samples.raw.is_empty() {
            return Ok(raw::evaluate(
                &samples.raw,
                &grid,
                &spec,
                r.param.unwrap_or(0.0),
            ));
        }
        Ok(window::evaluate(&samples.buckets, &grid, &spec)?)
    })
    .await
}

/// Loki's labels of `absent_over_time`: the selector's equality matchers, unless a name repeats.
fn absent_labels(r: &logql_parser::RangeAggregation) -> engine::metric::Labels {
    let ms = &r.range.log.selector.matchers;
    let mut out: engine::metric::Labels = Vec::new();
    for m in ms {
        if ms.iter().filter(|o| o.name == m.name).count() > 1 {
            continue;
        }
        if m.op == MatchOp::Eq {
            out.push((m.name.clone(), m.value.clone()));
        }
    }
    engine::metric::series::normalize(out)
}

/// The fields to group by when every label is needed: every field of the
/// selected entries except VictoriaLogs' own and the proxy's scratch fields.
async fn discover(
    state: &AppState,
    ctx: &RequestContext,
    plan: &RangePlan,
    start: i64,
    end: i64,
) -> Result<Vec<String>, ApiError> {
    let req = Request::new(Endpoint::FieldNames, plan.field_names_query(), start, end);
    Ok(field_names(state.backend.send_values(ctx, &req).await?))
}

/// The names to group by: every field name but VictoriaLogs' own and the
/// proxy's scratch fields, sorted.
fn field_names(hits: Vec<crate::backend::Hit>) -> Vec<String> {
    let mut out: Vec<String> = hits
        .into_iter()
        .map(|i| i.value)
        .filter(|n| {
            !matches!(n.as_str(), "_msg" | "_time" | "_stream" | "_stream_id")
                && !n.starts_with("__lokivl_")
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_skip_builtin_and_scratch() {
        let body = br#"{"values":[{"value":"_msg","hits":3},{"value":"env","hits":3},{"value":"app","hits":3},{"value":"__lokivl_v","hits":1},{"value":"_stream","hits":3}]}"#;
        assert_eq!(
            field_names(crate::backend::values::parse(body).unwrap()),
            vec!["app".to_owned(), "env".to_owned()]
        );
    }

    #[test]
    fn gcd_of_range_and_step() {
        assert_eq!(gcd(300, 60), 60);
        assert_eq!(gcd(300, 140), 20);
    }

    #[test]
    fn absent_labels_keep_unique_equalities() {
        let logql_parser::Expr::Metric(MetricExpr::RangeAggregation(r)) =
            logql_parser::parse(r#"absent_over_time({app="a", env=~"p.*", x="1", x="2"}[1m])"#)
                .unwrap()
        else {
            panic!()
        };
        assert_eq!(absent_labels(&r), vec![("app".to_owned(), "a".to_owned())]);
    }
}
