//! Evaluation of a metric expression over the step grid, given the fetched
//! range aggregations.

use logql_parser::{MetricExpr, VectorOp};

use super::aggregate::aggregate;
use super::binary;
use super::error::EngineError;
use super::grid::Grid;
use super::label_replace;
use super::series::{Matrix, Point, Series, Value, compare_labels};

/// Evaluates `expr`; `inputs` yields each range aggregation's series in the
/// order [`crate::metric::plan::collect`] listed them.
///
/// # Errors
/// [`EngineError`] from vector matching, `label_replace` or a missing input.
pub fn evaluate(
    expr: &MetricExpr,
    grid: &Grid,
    inputs: &mut impl Iterator<Item = Matrix>,
) -> Result<Value, EngineError> {
    Ok(match expr {
        MetricExpr::Literal(v) => Value::Scalar(*v),
        MetricExpr::Vector(v) => Value::Vector(vec![Series {
            labels: Vec::new(),
            points: (0..grid.len).map(|step| Point { step, v: *v }).collect(),
        }]),
        MetricExpr::RangeAggregation(_) => {
            Value::Vector(inputs.next().ok_or_else(|| {
                EngineError::Unsupported("range aggregation was not fetched".into())
            })?)
        }
        MetricExpr::VectorAggregation(a) => {
            let inner = vector(evaluate(&a.inner, grid, inputs)?, grid);
            Value::Vector(aggregate(a.op, a.param, a.grouping.as_ref(), inner, grid))
        }
        MetricExpr::Binary(b) => {
            let lhs = evaluate(&b.lhs, grid, inputs)?;
            let rhs = evaluate(&b.rhs, grid, inputs)?;
            binary::apply(b.op, &b.modifier, lhs, rhs, grid)?
        }
        MetricExpr::LabelReplace(lr) => {
            let inner = vector(evaluate(&lr.inner, grid, inputs)?, grid);
            Value::Vector(label_replace::apply(lr, inner)?)
        }
    })
}

/// A scalar used where a vector is needed becomes a label-less series at every step.
fn vector(v: Value, grid: &Grid) -> Matrix {
    match v {
        Value::Vector(m) => m,
        Value::Scalar(s) => vec![Series {
            labels: Vec::new(),
            points: (0..grid.len).map(|step| Point { step, v: s }).collect(),
        }],
    }
}

/// How an instant vector answer is ordered: by value for a top-level
/// `sort`/`sort_desc`, otherwise by labels (as Loki sorts its results).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Prometheus' label order.
    Labels,
    /// Ascending by value.
    ValueAsc,
    /// Descending by value.
    ValueDesc,
}

/// The answer order for `expr`.
pub fn order_of(expr: &MetricExpr) -> Order {
    match expr {
        MetricExpr::VectorAggregation(a) if a.op == VectorOp::Sort => Order::ValueAsc,
        MetricExpr::VectorAggregation(a) if a.op == VectorOp::SortDesc => Order::ValueDesc,
        _ => Order::Labels,
    }
}

/// Sorts series for the answer: by labels, or by each series' (single) value.
pub fn sort(m: &mut Matrix, order: Order) {
    m.sort_by(|a, b| compare_labels(&a.labels, &b.labels));
    let first = |s: &Series| s.points.first().map_or(f64::NAN, |p| p.v);
    match order {
        Order::Labels => {}
        Order::ValueAsc => m.sort_by(|a, b| first(a).total_cmp(&first(b))),
        Order::ValueDesc => m.sort_by(|a, b| first(b).total_cmp(&first(a))),
    }
}

#[cfg(test)]
mod tests {
    use logql_parser::Expr;

    use super::*;

    fn parse(q: &str) -> MetricExpr {
        let Expr::Metric(m) = logql_parser::parse(q).unwrap() else {
            panic!("not metric")
        };
        m
    }

    fn eval(q: &str, grid: &Grid, inputs: Vec<Matrix>) -> Value {
        evaluate(&parse(q), grid, &mut inputs.into_iter()).unwrap()
    }

    fn series(app: &str, pts: &[(u32, f64)]) -> Series {
        Series {
            labels: vec![("app".into(), app.into())],
            points: pts.iter().map(|&(step, v)| Point { step, v }).collect(),
        }
    }

    #[test]
    fn health_check_and_literals() {
        let g = Grid::instant(4_000_000_000_000_000_000);
        let Value::Vector(m) = eval("vector(1)+vector(1)", &g, vec![]) else {
            panic!()
        };
        assert_eq!(m[0].points, vec![Point { step: 0, v: 2.0 }]);
        assert_eq!(eval("1 + 2 * 3", &g, vec![]), Value::Scalar(7.0));
    }

    #[test]
    fn or_vector_zero_fills_gaps() {
        let g = Grid::range(0, 2, 1);
        let Value::Vector(m) = eval(
            r#"sum(count_over_time({a="b"}[1m])) or vector(0)"#,
            &g,
            vec![vec![series("x", &[(1, 5.0)])]],
        ) else {
            panic!()
        };
        let pts: Vec<(u32, f64)> = m
            .iter()
            .flat_map(|s| s.points.iter().map(|p| (p.step, p.v)))
            .collect();
        let mut pts = pts;
        pts.sort_by_key(|p| p.0);
        assert_eq!(pts, vec![(0, 0.0), (1, 5.0), (2, 0.0)]);
    }

    #[test]
    fn inputs_are_consumed_in_order() {
        let g = Grid::instant(0);
        let Value::Vector(m) = eval(
            r#"sum(rate({a="b"}[1m])) / sum(rate({a="c"}[1m]))"#,
            &g,
            vec![
                vec![series("x", &[(0, 6.0)])],
                vec![series("y", &[(0, 3.0)])],
            ],
        ) else {
            panic!()
        };
        assert_eq!(m[0].points[0].v, 2.0);
    }

    #[test]
    fn sort_orders() {
        let mut m = vec![
            series("b", &[(0, 1.0)]),
            series("a", &[(0, 3.0)]),
            series("c", &[(0, 2.0)]),
        ];
        sort(&mut m, order_of(&parse(r#"sort_desc(rate({a="b"}[1m]))"#)));
        let apps: Vec<&str> = m.iter().map(|s| s.labels[0].1.as_str()).collect();
        assert_eq!(apps, vec!["a", "c", "b"]);
        sort(&mut m, Order::Labels);
        let apps: Vec<&str> = m.iter().map(|s| s.labels[0].1.as_str()).collect();
        assert_eq!(apps, vec!["a", "b", "c"]);
    }
}
