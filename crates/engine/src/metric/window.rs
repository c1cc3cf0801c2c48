//! The sliding-window combiner: Loki's `(t − range, t]` windows over buckets.
//!
//! Buckets of `g = gcd(range, step)` end on every step's window edge, so the
//! window at step `t` (shifted by `offset`) is exactly the buckets whose end
//! `a` satisfies `t − offset − range < a ≤ t − offset`. Two cursors walk the
//! sorted buckets once per series; each window combines at most `range / g`
//! buckets. Steps whose window holds no bucket get no sample (no zero fill).

use logql_parser::RangeOp;

use super::buckets::{BucketSeries, Stats};
use super::error::EngineError;
use super::grid::Grid;
use super::series::{Labels, Matrix, Point, Series};
use crate::labels::write_label_string;

/// What a window computes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowSpec {
    /// The range function.
    pub op: RangeOp,
    /// The window length in nanoseconds.
    pub range: i64,
    /// `offset` in nanoseconds (windows end at `t − offset`).
    pub offset: i64,
    /// Divisor from VictoriaLogs numbers to Loki values (1e9 for durations:
    /// dividing, as Go's `Duration.Seconds()` does, keeps `2m3s` exactly 123).
    pub divisor: f64,
    /// Whether the aggregation unwraps a label (changes `rate`).
    pub unwrapped: bool,
}

/// Evaluates `spec` over every series at every grid step.
///
/// # Errors
/// [`EngineError::SampleExtraction`] when a window holds a value Loki fails to convert.
pub fn evaluate(
    series: &[BucketSeries],
    grid: &Grid,
    spec: &WindowSpec,
) -> Result<Matrix, EngineError> {
    let mut out = Vec::with_capacity(series.len());
    for s in series {
        let points = windows(&s.buckets, grid, spec, &s.labels)?;
        if !points.is_empty() {
            out.push(Series {
                labels: s.labels.clone(),
                points,
            });
        }
    }
    Ok(out)
}

fn windows(
    buckets: &[(i64, Stats)],
    grid: &Grid,
    spec: &WindowSpec,
    labels: &Labels,
) -> Result<Vec<Point>, EngineError> {
    let mut points = Vec::new();
    let (mut lo, mut hi) = (0usize, 0usize);
    for i in 0..grid.len {
        let end = grid.time(i) - spec.offset;
        let start = end - spec.range;
        while lo < buckets.len() && buckets[lo].0 <= start {
            lo += 1;
        }
        hi = hi.max(lo);
        while hi < buckets.len() && buckets[hi].0 <= end {
            hi += 1;
        }
        if lo == hi {
            continue;
        }
        let mut acc = Stats::default();
        for (_, s) in &buckets[lo..hi] {
            acc.merge(s);
        }
        if acc.errors > 0.0 {
            let mut text = Vec::new();
            write_label_string(
                &mut text,
                labels.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            );
            return Err(EngineError::SampleExtraction(
                String::from_utf8_lossy(&text).into_owned(),
            ));
        }
        if let Some(v) = value(&acc, spec) {
            points.push(Point { step: i, v });
        }
    }
    Ok(points)
}

/// The function's value over one window's combined statistics.
pub fn value(acc: &Stats, spec: &WindowSpec) -> Option<f64> {
    let secs = spec.range as f64 / 1e9;
    let d = spec.divisor;
    if acc.count <= 0.0 && acc.bytes <= 0.0 {
        return None;
    }
    Some(match spec.op {
        RangeOp::CountOverTime => acc.count,
        RangeOp::Rate if spec.unwrapped => acc.sum / d / secs,
        RangeOp::Rate => acc.count / secs,
        RangeOp::BytesOverTime => acc.bytes,
        RangeOp::BytesRate => acc.bytes / secs,
        RangeOp::SumOverTime => acc.sum / d,
        RangeOp::AvgOverTime => acc.sum / acc.count / d,
        RangeOp::MinOverTime => acc.min / d,
        RangeOp::MaxOverTime => acc.max / d,
        RangeOp::StdvarOverTime => variance(acc) / d / d,
        RangeOp::StddevOverTime => (variance(acc) / d / d).sqrt(),
        RangeOp::AbsentOverTime
        | RangeOp::QuantileOverTime
        | RangeOp::FirstOverTime
        | RangeOp::LastOverTime
        | RangeOp::RateCounter => return None,
    })
}

/// Population variance from count, sum and sum of squares; exactly 0 when
/// every value is equal (so rounding cannot invent a spread).
fn variance(acc: &Stats) -> f64 {
    if acc.min == acc.max {
        return 0.0;
    }
    let mean = acc.sum / acc.count;
    ((acc.sumsq - acc.sum * mean) / acc.count).max(0.0)
}

/// `absent_over_time`: 1 at every step whose window holds no entry, with `labels`.
pub fn absent(series: &[BucketSeries], grid: &Grid, spec: &WindowSpec, labels: Labels) -> Matrix {
    let mut all: Vec<(i64, Stats)> = series
        .iter()
        .flat_map(|s| s.buckets.iter().copied())
        .collect();
    all.sort_by_key(|b| b.0);
    let mut points = Vec::new();
    let mut lo = 0usize;
    for i in 0..grid.len {
        let end = grid.time(i) - spec.offset;
        let start = end - spec.range;
        while lo < all.len() && all[lo].0 <= start {
            lo += 1;
        }
        let present = all[lo..]
            .iter()
            .take_while(|b| b.0 <= end)
            .any(|b| b.1.count > 0.0);
        if !present {
            points.push(Point { step: i, v: 1.0 });
        }
    }
    if points.is_empty() {
        Vec::new()
    } else {
        vec![Series { labels, points }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn count(c: f64) -> Stats {
        Stats {
            count: c,
            ..Stats::default()
        }
    }

    fn spec(op: RangeOp, range: i64) -> WindowSpec {
        WindowSpec {
            op,
            range,
            offset: 0,
            divisor: 1.0,
            unwrapped: false,
        }
    }

    fn one(buckets: Vec<(i64, Stats)>) -> Vec<BucketSeries> {
        vec![BucketSeries {
            labels: vec![("app".into(), "a".into())],
            buckets,
        }]
    }

    #[test]
    fn sliding_counts_over_overlapping_windows() {
        // range 3 m, step 1 m: buckets of 1 m ending at 60, 120, 180, 240 s.
        let s = one(vec![
            (60 * S, count(1.0)),
            (120 * S, count(2.0)),
            (240 * S, count(4.0)),
        ]);
        let grid = Grid::range(60 * S, 360 * S, 60 * S);
        let m = evaluate(&s, &grid, &spec(RangeOp::CountOverTime, 180 * S)).unwrap();
        let got: Vec<(u32, f64)> = m[0].points.iter().map(|p| (p.step, p.v)).collect();
        // t=60: {60}; 120: {60,120}; 180: {60,120}; 240: {120,240}; 300: {240}; 360: {240}
        assert_eq!(
            got,
            vec![(0, 1.0), (1, 3.0), (2, 3.0), (3, 6.0), (4, 4.0), (5, 4.0)]
        );
    }

    #[test]
    fn rate_divides_by_range_seconds_and_steps_without_data_are_absent() {
        let s = one(vec![(120 * S, count(30.0))]);
        let grid = Grid::range(60 * S, 240 * S, 60 * S);
        let m = evaluate(&s, &grid, &spec(RangeOp::Rate, 60 * S)).unwrap();
        assert_eq!(m[0].points, vec![Point { step: 1, v: 0.5 }]);
    }

    #[test]
    fn offset_shifts_windows_back() {
        let s = one(vec![(60 * S, count(7.0))]);
        let grid = Grid::range(120 * S, 180 * S, 60 * S);
        let mut sp = spec(RangeOp::CountOverTime, 60 * S);
        sp.offset = 60 * S;
        let m = evaluate(&s, &grid, &sp).unwrap();
        assert_eq!(m[0].points, vec![Point { step: 0, v: 7.0 }]);
    }

    #[test]
    fn unwrapped_functions() {
        let b = |c: f64, sum: f64, min: f64, max: f64, sumsq: f64| Stats {
            count: c,
            sum,
            min,
            max,
            sumsq,
            ..Stats::default()
        };
        // values {1, 3} and {5}
        let s = one(vec![
            (60 * S, b(2.0, 4.0, 1.0, 3.0, 10.0)),
            (120 * S, b(1.0, 5.0, 5.0, 5.0, 25.0)),
        ]);
        let grid = Grid::instant(120 * S);
        let mut sp = spec(RangeOp::AvgOverTime, 120 * S);
        sp.unwrapped = true;
        let v = |op: RangeOp| {
            let mut sp = sp;
            sp.op = op;
            evaluate(&s, &grid, &sp).unwrap()[0].points[0].v
        };
        assert_eq!(v(RangeOp::AvgOverTime), 3.0);
        assert_eq!(v(RangeOp::SumOverTime), 9.0);
        assert_eq!(v(RangeOp::MinOverTime), 1.0);
        assert_eq!(v(RangeOp::MaxOverTime), 5.0);
        assert_eq!(v(RangeOp::Rate), 9.0 / 120.0);
        // mean 3, squares 1+9+25 = 35 → 35/3 − 9 = 8/3
        assert!((v(RangeOp::StdvarOverTime) - 8.0 / 3.0).abs() < 1e-12);
        assert!((v(RangeOp::StddevOverTime) - (8.0f64 / 3.0).sqrt()).abs() < 1e-12);
        sp.divisor = 1e9;
        sp.op = RangeOp::MaxOverTime;
        assert_eq!(evaluate(&s, &grid, &sp).unwrap()[0].points[0].v, 5e-9);
    }

    #[test]
    fn equal_values_have_zero_variance() {
        let st = Stats {
            count: 3.0,
            sum: 0.3,
            min: 0.1,
            max: 0.1,
            sumsq: 0.030000000000000006,
            ..Stats::default()
        };
        assert_eq!(variance(&st), 0.0);
    }

    #[test]
    fn conversion_errors_fail_like_loki() {
        let s = one(vec![(
            60 * S,
            Stats {
                errors: 1.0,
                ..count(1.0)
            },
        )]);
        let err = evaluate(
            &s,
            &Grid::instant(60 * S),
            &spec(RangeOp::SumOverTime, 60 * S),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("pipeline error: 'SampleExtractionErr' for series: '{app=\"a\"}'")
        );
    }

    #[test]
    fn absent_marks_empty_windows() {
        let s = one(vec![(120 * S, count(1.0))]);
        let grid = Grid::range(60 * S, 240 * S, 60 * S);
        let m = absent(
            &s,
            &grid,
            &spec(RangeOp::AbsentOverTime, 60 * S),
            vec![("a".into(), "b".into())],
        );
        let steps: Vec<u32> = m[0].points.iter().map(|p| p.step).collect();
        assert_eq!(steps, vec![0, 2, 3]);
    }
}
