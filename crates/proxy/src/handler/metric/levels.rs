//! Range aggregations grouped by a derived `detected_level` (Logs
//! Drilldown's level panels): VictoriaLogs counts the entries, and computes
//! the level of lines without a level field with Loki's rules
//! ([`logsql_ast::line_level`]); only the lines it cannot classify exactly
//! are read as rows, from the request's row budget.

use logsql_ast::{MetricPipe, RangePlan, bucket_start};

use super::super::AppState;
use super::super::bucketed::{self, Bucketed, post};
use super::{bucket_ns, check_rows, rows_limit};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::work::{Work, cpu};
use engine::metric::discovered::{self, Derived};
use engine::metric::plan::RangeInput;
use engine::metric::window::{self, WindowSpec};
use engine::metric::{Grid, Matrix, buckets, rows};
use engine::ndjson::Source as _;
use engine::pipeline::hints::MetricGrouping;

/// What [`fetch_levels`] counts: a plan VictoriaLogs counts, the labels to
/// keep, and the labels to synthesize.
pub(super) struct Leveled<'a> {
    pub(super) plan: &'a RangePlan,
    /// The needed fields by their VictoriaLogs names.
    pub(super) fields: &'a [String],
    /// The labels of the series (Loki names).
    pub(super) keep: &'a [String],
    pub(super) discovery: &'a logsql_ast::Discovery,
    pub(super) derived: Derived,
}

/// A range aggregation needing `detected_level` (Drilldown's
/// `sum by (detected_level) (count_over_time(…))`) whose pipeline
/// VictoriaLogs counts: entries are counted in VictoriaLogs grouped by
/// stream and level fields, and the groups with a level field are mapped to
/// their level in the proxy. Only if some group has none are those entries
/// (whose level comes from the line) read as rows, from the request's row
/// budget.
pub(super) async fn fetch_levels(
    state: &AppState,
    ctx: &RequestContext,
    input: &RangeInput<'_>,
    grid: &Grid,
    level: &Leveled<'_>,
    work: &Work,
) -> Result<Matrix, ApiError> {
    let r = input.agg;
    let range = r.range.interval.as_nanos();
    let offset = r.range.offset.map_or(0, |d| d.as_nanos());
    let vl_start = grid.start - offset - range + 1;
    let vl_end = grid.last() - offset;
    let bucket = bucket_ns(grid, range, vl_start, vl_end)?;
    let b = Bucketed {
        bucket_ns: bucket,
        start_ns: bucket_start(grid.start - offset, bucket),
        vl_start,
        vl_end,
    };
    // Every entry counted, grouped by stream, level fields and the level
    // VictoriaLogs computes from the line when no level field is set; the
    // groups it could not classify are the residue read as rows.
    let by = discovered::line_level_grouping(level.fields);
    let pipes = discovered::line_level_pipes();
    let (residue, counted): (Vec<_>, Vec<_>) = bucketed::fetch(
        state,
        ctx,
        &b,
        |o| level.plan.stats_query_after(bucket, o, &by, &pipes),
        work.deadline,
        buckets::decode_by_stream,
    )
    .await?
    .into_iter()
    .partition(|s| discovered::is_residue(&s.labels));
    let any_residue = !residue.is_empty();
    let mut series = discovered::with_levels(counted, level.discovery, level.derived, level.keep)?;
    // Only when there are such entries are their lines read (lines whose
    // level key VictoriaLogs cannot locate exactly).
    if any_residue {
        series.extend(fetch_unleveled(state, ctx, input, grid, level, work).await?);
    }
    let spec = WindowSpec {
        op: r.op,
        range,
        offset,
        divisor: 1.0,
        unwrapped: false,
    };
    let (grouping, grid) = (r.grouping.clone(), *grid);
    let size = series.iter().map(|s| s.buckets.len()).sum::<usize>() * 64;
    cpu::run(work.deadline, size, move |_| {
        if grouping.is_none() && !any_residue {
            // Already one series per label set, as `with_levels` merged them.
            return Ok(window::evaluate(&series, &grid, &spec)?);
        }
        let series = buckets::merge(series.into_iter().fold(
            std::collections::BTreeMap::new(),
            |mut m, s| {
                m.entry(buckets::project(s.labels, grouping.as_ref()))
                    .or_insert_with(Vec::new)
                    .extend(s.buckets);
                m
            },
        ));
        Ok(window::evaluate(&series, &grid, &spec)?)
    })
    .await
}

/// The entries of `level.plan` without a level field whose line's level
/// VictoriaLogs left to the proxy ([`logsql_ast::line_level::RESIDUE`]),
/// read as rows whose `detected_level` comes from the line (from the
/// request's row budget), as series of [`fetch_levels`].
async fn fetch_unleveled(
    state: &AppState,
    ctx: &RequestContext,
    input: &RangeInput<'_>,
    grid: &Grid,
    level: &Leveled<'_>,
    work: &Work,
) -> Result<Vec<buckets::BucketSeries>, ApiError> {
    let r = input.agg;
    let range = r.range.interval.as_nanos();
    let offset = r.range.offset.map_or(0, |d| d.as_nanos());
    let vl_start = grid.start - offset - range + 1;
    let vl_end = grid.last() - offset;
    let mut unleveled = level.plan.query.clone();
    unleveled.filter = logsql_ast::Filter::and([
        level.plan.query.filter.clone(),
        logsql_ast::Filter::not(discovered::has_level_field()),
    ]);
    let budget = work.budgets.rows.clone();
    let q = format!(
        "{unleveled}{} | filter {} | {} | {}",
        discovered::line_level_pipes(),
        logsql_ast::line_level::residue_filter(),
        MetricPipe::Fields(discovered::row_fields(level.fields)),
        logsql_ast::Pipe::Limit(rows_limit(&budget))
    );
    let mut body = post(state, ctx, &q, vl_start, vl_end).await?;
    let (op, grid) = (r.op, *grid);
    let (discovery, keep) = (level.discovery.clone(), level.keep.to_vec());
    cpu::run(work.deadline, body.byte_len(), move |stop| {
        check_rows(&body, &budget)?;
        let ex = rows::Extract {
            op,
            unwrap: None,
            grouping: None,
            windows: Some((grid, range, offset)),
            hint: MetricGrouping::All,
            query_stages: &[],
            discovery: &discovery,
        };
        let samples = rows::extract(&mut body, &[], &[], &ex, stop)?;
        Ok(discovered::keep_only(samples.buckets, &keep))
    })
    .await
}
