//! The times a metric evaluation derives from the request, checked once.
//!
//! The engine computes with `start`, `end`, `step`, each range `[r]` and
//! `offset`, and the bucket and window lengths that follow from them:
//! `t − offset − range + 1`, `t − offset`, a bucket end `b + bucket − 1`,
//! window bounds up to one window length past the grid. Loki computes these
//! with Go's wrapping `int64`; lokivl checks, before any evaluation, that the
//! widest combination fits: every term with its sign, so every partial sum
//! the engine forms along the way fits too. Past it the request gets a 400
//! (Loki has no such check and answers from wrapped times). Within it the
//! engine's plain arithmetic cannot overflow.

use super::Grid;
use super::plan::RangeInput;
use crate::Error;

/// The 400 text for a request whose derived times leave `i64` nanoseconds.
pub const OUT_OF_RANGE: &str = "the query's time range, step, range and offset reach past the int64 nanoseconds lokivl computes with (years 1678 to 2262); narrow them";

/// Checks that every time the evaluation of `inputs` over `grid` derives
/// fits in `i64`, with windows of up to `window` nanoseconds (0 when the
/// range is not split).
///
/// # Errors
/// [`Error::BadRequest`] with [`OUT_OF_RANGE`].
pub fn check(grid: &Grid, window: i64, inputs: &[RangeInput<'_>]) -> Result<(), Error> {
    reach(grid, window, inputs)
        .map(|_| ())
        .ok_or_else(|| Error::BadRequest(OUT_OF_RANGE.to_owned()))
}

/// The lowest and highest time the evaluation may form, if both fit.
///
/// Computed in `i128`: each bound is the grid's edge moved by every term
/// that moves it that way (a window length, the offset, the range, a bucket,
/// one nanosecond), so the partial sums the engine forms on the way (the
/// grid edge, then minus the offset, then the range or a bucket) lie between
/// the two.
fn reach(grid: &Grid, window: i64, inputs: &[RangeInput<'_>]) -> Option<(i64, i64)> {
    let (start, last, step) = (
        i128::from(grid.start),
        i128::from(grid.last()),
        i128::from(grid.step),
    );
    // A split window extends at most one window length past the grid; the
    // windows are the split interval rounded up to whole steps, or
    // lengthened to a sixteenth of the span (see `window::metric_split`).
    let ext = if window > 0 {
        ((last - start) / 16).max(i128::from(window)) + step
    } else {
        0
    };
    let (mut lo, mut hi) = (start - ext, last + ext);
    for input in inputs {
        let r = &input.agg.range;
        let range = i128::from(r.interval.as_nanos().max(0));
        let offset = i128::from(r.offset.map_or(0, |d| d.as_nanos()));
        // `t − offset − range + 1` and a bucket (never longer than the range) before it.
        lo = lo.min(start - ext - offset - 2 * range - 1);
        // `t − offset` and a bucket end after it.
        hi = hi.max(last + ext - offset + range + 1);
    }
    // The grid's own span is a difference the engine takes too.
    let fits = |t: i128| i64::try_from(t).ok();
    fits(last - start)?;
    Some((fits(lo)?, fits(hi)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::plan;

    const S: i64 = 1_000_000_000;

    fn inputs(q: &str) -> logql_parser::MetricExpr {
        match logql_parser::parse(q).unwrap() {
            logql_parser::Expr::Metric(m) => m,
            other => panic!("{other:?}"),
        }
    }

    fn ok(q: &str, grid: Grid, window: i64) -> bool {
        let e = inputs(q);
        check(&grid, window, &plan::collect(&e)).is_ok()
    }

    #[test]
    fn ordinary_queries_pass() {
        let g = Grid::range(1_787_389_200 * S, 1_787_392_800 * S, 60 * S);
        assert!(ok(r#"count_over_time({a="b"}[5m] offset 1h)"#, g, 3600 * S));
        assert!(ok(r#"rate({a="b"}[1y] offset -720h)"#, g, 3600 * S));
        assert!(ok("vector(1)", Grid::instant(i64::MAX), 0));
    }

    #[test]
    fn reaching_past_int64_is_refused() {
        let near_end = Grid::range(i64::MAX - 100 * S, i64::MAX - 40 * S, 60 * S);
        assert!(!ok(
            r#"count_over_time({a="b"}[1m] offset -1h)"#,
            near_end,
            0
        ));
        assert!(ok(r#"count_over_time({a="b"}[1m] offset 1h)"#, near_end, 0));
        let near_start = Grid::instant(i64::MIN + 3600 * S);
        assert!(!ok(
            r#"count_over_time({a="b"}[1h] offset 1h)"#,
            near_start,
            0
        ));
        let now = Grid::instant(1_787_392_800 * S);
        assert!(!ok(r#"count_over_time({a="b"}[292y] offset 292y)"#, now, 0));
        assert!(ok(r#"count_over_time({a="b"}[100y] offset 100y)"#, now, 0));
        // A grid over all of int64 leaves no room for any range.
        let all = Grid::range(i64::MIN, i64::MAX, i64::MAX / 4);
        assert!(!ok(r#"count_over_time({a="b"}[1s])"#, all, 0));
        assert!(ok("vector(1)", all, 0));
        // A split window reaches a window length past the grid.
        let edge = Grid::range(i64::MAX - 7200 * S, i64::MAX - 3600 * S, 60 * S);
        assert!(ok(r#"count_over_time({a="b"}[1s])"#, edge, 0));
        assert!(!ok(r#"count_over_time({a="b"}[1s])"#, edge, 7200 * S));
    }
}
