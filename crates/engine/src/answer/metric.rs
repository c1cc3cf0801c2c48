//! [`MetricAnswer`]: the answer of a metric query, or of `index/volume`, as
//! typed series.
//!
//! The metric engine's [`Matrix`] is the data; the answer adds the shape
//! Loki gives it (`matrix`, `vector` or `scalar`), the times of its steps,
//! the escaping of its label strings and the `stats` summary. The one
//! writer of all three shapes is [`super::encode::metric::write_metric`].
//!
//! ```
//! use engine::answer::{MetricAnswer, MetricResult, encode::metric::write_metric};
//! use engine::encode::stats::Summary;
//! use engine::metric::{Grid, Point, Series};
//!
//! let s = 1_000_000_000;
//! let series = Series {
//!     labels: vec![("app".into(), "api".into())],
//!     points: vec![Point { step: 0, v: 0.5 }, Point { step: 1, v: 2.0 }],
//! };
//! let grid = Grid::range(60 * s, 120 * s, 60 * s);
//! let answer = MetricAnswer::query(MetricResult::Matrix(vec![series]), grid, Summary::default());
//! let mut out = Vec::new();
//! write_metric(&answer, &mut out);
//! assert!(out.starts_with(br#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"app":"api"},"values":[[60,"0.5"],[120,"2"]]}],"stats":"#));
//! ```

use crate::encode::json::Escape;
use crate::encode::stats::Summary;
use crate::metric::grid::Grid;
use crate::metric::series::Matrix;

/// The times of an answer's steps: what [`crate::metric::Point::step`]
/// indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Steps {
    /// A query's evaluation grid.
    Grid(Grid),
    /// Explicit times in nanoseconds: volume buckets, stamped with their
    /// ends and the last one with the request's end, are not a grid.
    Times(Vec<i64>),
}

impl Steps {
    /// The time of step `i` in nanoseconds (0 for a step past `Times`).
    pub fn time(&self, i: u32) -> i64 {
        match self {
            Self::Grid(g) => g.time(i),
            Self::Times(t) => t.get(i as usize).copied().unwrap_or(0),
        }
    }
}

/// Loki's `resultType` and the data under `result`.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricResult {
    /// `matrix`: each series with its samples, in the order given.
    Matrix(Matrix),
    /// `vector`: one element per sample of each series, in the order given
    /// (an instant query has at most one sample per series).
    Vector(Matrix),
    /// `scalar`: the value at step 0.
    Scalar(f64),
}

/// The answer of a metric query: its result, the times of its steps, the
/// escaping of label names and values, and the `stats` summary.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricAnswer {
    /// The shape and its series.
    pub result: MetricResult,
    /// The times of the series' steps.
    pub steps: Steps,
    /// [`Escape::Html`] for `query_range`/`query` (Go's `encoding/json`, as
    /// Loki's answers); [`Escape::Plain`] for the volume answers, kept from
    /// when they were written through `serde_json`.
    pub escape: Escape,
    /// `stats.summary` (metric queries report only `execTime`).
    pub stats: Summary,
}

impl MetricAnswer {
    /// The answer of a `query_range`/`query` metric query over `grid`:
    /// labels escaped as Loki's query answers are.
    pub fn query(result: MetricResult, grid: Grid, stats: Summary) -> Self {
        Self {
            result,
            steps: Steps::Grid(grid),
            escape: Escape::Html,
            stats,
        }
    }
}
