//! Range functions over raw samples: quantile, first, last and `rate_counter`.
//!
//! These cannot be combined from bucket statistics, so the proxy fetches
//! only each sample's time, number and grouping labels (bounded), and
//! evaluates Loki's `(t − range, t]` windows itself.

use std::collections::BTreeMap;

use logql_parser::{Grouping, RangeOp};
use logsql_ast::NUMBER_FIELD;

use super::buckets::{labels_of, parse_number, project};
use super::error::EngineError;
use super::grid::Grid;
use super::series::{Labels, Matrix, Point, Series};
use super::window::WindowSpec;
use crate::ndjson::{Decoder, Rows, Source};

/// Samples of one series, ascending by time.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawSeries {
    /// Loki's labels of the series.
    pub labels: Labels,
    /// `(time ns, value)` ascending by time.
    pub samples: Vec<(i64, f64)>,
}

/// Decodes `fields _time, __lokivl_n, …` rows into series, dividing numbers by `divisor`.
///
/// # Errors
/// [`EngineError::Backend`] for malformed NDJSON or numbers.
pub fn decode(
    body: &mut (impl Source + ?Sized),
    grouping: Option<&Grouping>,
    divisor: f64,
) -> Result<Vec<RawSeries>, EngineError> {
    Ok(decode_guarded(body, grouping, divisor)?.unwrap_or_default())
}

/// [`decode`], or `None` when a row is marked suspect by the guard of a
/// parser run in VictoriaLogs (`logsql_ast`'s `__lokivl_g`): its samples
/// may not be Loki's, and the range is evaluated from rows instead.
///
/// # Errors
/// As [`decode`].
pub fn decode_guarded(
    body: &mut (impl Source + ?Sized),
    grouping: Option<&Grouping>,
    divisor: f64,
) -> Result<Option<Vec<RawSeries>>, EngineError> {
    let mut rows = Rows::new();
    Decoder::new()
        .decode(body, &mut rows)
        .map_err(|e| EngineError::Backend(e.to_string()))?;
    // Ordered by labels, so later float sums are the same on every run.
    let mut by_labels: BTreeMap<Labels, Vec<(i64, f64)>> = BTreeMap::new();
    for row in &rows.rows {
        let fields = rows.fields_of(row);
        if fields
            .iter()
            .any(|(n, v)| *n == logsql_ast::SUSPECT_FIELD && *v == "1")
        {
            return Ok(None);
        }
        let v = fields
            .iter()
            .find(|(n, _)| *n == NUMBER_FIELD)
            .map_or(Ok(f64::NAN), |(_, v)| parse_number(v))?;
        let labels = project(labels_of(fields.iter().copied()), grouping);
        by_labels
            .entry(labels)
            .or_default()
            .push((row.time_ns, v / divisor));
    }
    Ok(Some(
        by_labels
            .into_iter()
            .map(|(labels, mut samples)| {
                samples.sort_by_key(|s| s.0);
                RawSeries { labels, samples }
            })
            .collect(),
    ))
}

/// Evaluates a raw-sample range function (`param` is quantile's φ).
pub fn evaluate(series: &[RawSeries], grid: &Grid, spec: &WindowSpec, param: f64) -> Matrix {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    for s in series {
        let mut points = Vec::new();
        let (mut lo, mut hi) = (0usize, 0usize);
        for i in 0..grid.len {
            let end = grid.time(i) - spec.offset;
            let start = end - spec.range;
            while lo < s.samples.len() && s.samples[lo].0 <= start {
                lo += 1;
            }
            hi = hi.max(lo);
            while hi < s.samples.len() && s.samples[hi].0 <= end {
                hi += 1;
            }
            let w = &s.samples[lo..hi];
            if w.is_empty() {
                continue;
            }
            let v = match spec.op {
                RangeOp::QuantileOverTime => {
                    scratch.clear();
                    scratch.extend(w.iter().map(|s| s.1));
                    quantile(param, &mut scratch)
                }
                RangeOp::FirstOverTime => w[0].1,
                RangeOp::LastOverTime => w[w.len() - 1].1,
                RangeOp::RateCounter => counter_rate(w, spec.range),
                _ => continue,
            };
            points.push(Point { step: i, v });
        }
        if !points.is_empty() {
            out.push(Series {
                labels: s.labels.clone(),
                points,
            });
        }
    }
    out
}

/// Prometheus' quantile: linear interpolation between closest ranks;
/// φ < 0 gives −Inf, φ > 1 gives +Inf.
pub fn quantile(q: f64, values: &mut [f64]) -> f64 {
    if values.is_empty() || q.is_nan() {
        return f64::NAN;
    }
    if q < 0.0 {
        return f64::NEG_INFINITY;
    }
    if q > 1.0 {
        return f64::INFINITY;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    let rank = q * (n - 1.0);
    let lower = rank.floor().max(0.0);
    let upper = (lower + 1.0).min(n - 1.0);
    let w = rank - lower;
    values[lower as usize] * (1.0 - w) + values[upper as usize] * w
}

/// Loki's `rate_counter`: Prometheus' extrapolated counter rate as Loki 3.7
/// computes it. Loki keeps sample times in nanoseconds but measures the
/// window edges as Prometheus does in milliseconds, so the distance to the
/// window start is always the range in seconds, the distance to the end is
/// 0, and the sampled interval is in microseconds. Fewer than two samples
/// give 0 (Prometheus drops the point; Loki reports 0).
fn counter_rate(w: &[(i64, f64)], range: i64) -> f64 {
    if w.len() < 2 {
        return 0.0;
    }
    let (first, last) = (w[0], w[w.len() - 1]);
    let mut result = last.1 - first.1;
    let mut previous = 0.0;
    for &(_, v) in w {
        if v < previous {
            result += previous;
        }
        previous = v;
    }
    let range_ms = range / 1_000_000;
    let mut to_start = range_ms as f64 / 1000.0;
    let to_end = 0.0;
    let sampled = (last.0 - first.0) as f64 / 1000.0;
    let avg = sampled / (w.len() - 1) as f64;
    if result > 0.0 && first.1 >= 0.0 {
        let to_zero = sampled * (first.1 / result);
        if to_zero < to_start {
            to_start = to_zero;
        }
    }
    let threshold = avg * 1.1;
    let mut interval = sampled;
    interval += if to_start < threshold {
        to_start
    } else {
        avg / 2.0
    };
    interval += if to_end < threshold {
        to_end
    } else {
        avg / 2.0
    };
    result * (interval / sampled) / (range as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn spec(op: RangeOp) -> WindowSpec {
        WindowSpec {
            op,
            range: 60 * S,
            offset: 0,
            divisor: 1.0,
            unwrapped: true,
        }
    }

    #[test]
    fn quantiles_interpolate() {
        assert_eq!(quantile(0.5, &mut [3.0, 1.0, 2.0, 4.0]), 2.5);
        assert_eq!(quantile(0.99, &mut [1.0, 2.0]), 1.99);
        assert_eq!(quantile(1.0, &mut [5.0]), 5.0);
        assert_eq!(quantile(-1.0, &mut [5.0]), f64::NEG_INFINITY);
        assert_eq!(quantile(2.0, &mut [5.0]), f64::INFINITY);
    }

    #[test]
    fn first_last_and_window_edges() {
        let s = vec![RawSeries {
            labels: vec![],
            samples: vec![(0, 9.0), (10 * S, 1.0), (60 * S, 2.0), (61 * S, 3.0)],
        }];
        let grid = Grid::range(60 * S, 120 * S, 60 * S);
        let first = evaluate(&s, &grid, &spec(RangeOp::FirstOverTime), 0.0);
        // (0, 60]: sample at 0 excluded, 10 s and 60 s included.
        assert_eq!(
            first[0].points,
            vec![Point { step: 0, v: 1.0 }, Point { step: 1, v: 3.0 }]
        );
        let last = evaluate(&s, &grid, &spec(RangeOp::LastOverTime), 0.0);
        assert_eq!(
            last[0].points,
            vec![Point { step: 0, v: 2.0 }, Point { step: 1, v: 3.0 }]
        );
    }

    #[test]
    fn counter_rate_with_reset() {
        // Samples every 10 s in a 60 s window: 10..60 s.
        let w: Vec<(i64, f64)> = vec![(10 * S, 1.0), (20 * S, 3.0), (30 * S, 1.0), (60 * S, 4.0)];
        // increase = 4 - 1 + 3 (reset) = 6. Loki's units: sampled = 50 s in
        // ns / 1000 = 5e7, avg = 5e7 / 3; to_start = 60 (the range in s) is
        // below the threshold, to_zero = 5e7 / 6 is not; to_end = 0.
        let sampled = 5e7;
        let expected = 6.0 * ((sampled + 60.0) / sampled) / 60.0;
        let v = counter_rate(&w, 60 * S);
        assert!((v - expected).abs() < 1e-15, "{v} vs {expected}");
        // Fewer than two samples: Loki reports 0.
        assert_eq!(counter_rate(&w[..1], 60 * S), 0.0);
    }

    #[test]
    fn decode_groups_and_scales() {
        let mut body = br#"{"_time":"1970-01-01T00:00:02Z","__lokivl_n":"2000000000","pod":"a"}
{"_time":"1970-01-01T00:00:01Z","__lokivl_n":"1000000000","pod":"a"}
"#
        .to_vec();
        let out = decode(&mut body, None, 1e9).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].samples, vec![(S, 1.0), (2 * S, 2.0)]);
        assert_eq!(out[0].labels, vec![("pod".to_owned(), "a".to_owned())]);
    }
}
