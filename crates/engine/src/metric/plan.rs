//! Which range aggregations a query needs, and which labels of each.
//!
//! Asking VictoriaLogs to group by fewer fields makes its answer smaller, but
//! merging series is only exact where Loki would merge them too: under
//! `sum by (…)` of an additive range function (counts, bytes and sums add
//! up across series), and inside a range aggregation's own `by (…)`. Every
//! other parent needs each series with all its labels.

use logql_parser::{Grouping, MetricExpr, RangeAggregation, RangeOp, VectorOp};

/// The labels a range aggregation's series must carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// Every label: one series per distinct label set.
    All,
    /// Only these labels: series that agree on them may be merged.
    Only(Vec<String>),
}

/// A range aggregation to fetch, in evaluation (pre-)order.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeInput<'a> {
    /// The aggregation.
    pub agg: &'a RangeAggregation,
    /// The labels its series must carry.
    pub need: Need,
}

/// Lists the range aggregations of `expr` in the order [`crate::metric::eval::evaluate`] consumes them.
pub fn collect(expr: &MetricExpr) -> Vec<RangeInput<'_>> {
    let mut out = Vec::new();
    walk(expr, None, &mut out);
    out
}

fn walk<'a>(expr: &'a MetricExpr, parent: Option<Need>, out: &mut Vec<RangeInput<'a>>) {
    match expr {
        MetricExpr::RangeAggregation(r) => {
            let need = match (&r.grouping, parent) {
                (
                    Some(Grouping {
                        without: false,
                        labels,
                    }),
                    _,
                ) => Need::Only(labels.clone()),
                (Some(_), _) => Need::All,
                (None, _) if r.op == RangeOp::AbsentOverTime => Need::Only(Vec::new()),
                (None, Some(n)) if additive(r) => n,
                (None, _) => Need::All,
            };
            out.push(RangeInput { agg: r, need });
        }
        MetricExpr::VectorAggregation(v) => {
            let need = match (&v.op, &v.grouping) {
                (
                    VectorOp::Sum,
                    Some(Grouping {
                        without: false,
                        labels,
                    }),
                ) => Some(Need::Only(labels.clone())),
                (VectorOp::Sum, None) => Some(Need::Only(Vec::new())),
                _ => None,
            };
            walk(&v.inner, need, out);
        }
        MetricExpr::Binary(b) => {
            walk(&b.lhs, None, out);
            walk(&b.rhs, None, out);
        }
        MetricExpr::LabelReplace(l) => walk(&l.inner, None, out),
        MetricExpr::Literal(_) | MetricExpr::Vector(_) => {}
    }
}

/// Range functions whose value over merged series is the sum of the values.
fn additive(r: &RangeAggregation) -> bool {
    matches!(
        r.op,
        RangeOp::CountOverTime
            | RangeOp::BytesOverTime
            | RangeOp::BytesRate
            | RangeOp::Rate
            | RangeOp::SumOverTime
    )
}

#[cfg(test)]
mod tests {
    use logql_parser::Expr;

    use super::*;

    fn needs(q: &str) -> Vec<Need> {
        let Expr::Metric(m) = logql_parser::parse(q).unwrap() else {
            panic!("not a metric query")
        };
        collect(&m).into_iter().map(|i| i.need).collect()
    }

    fn only(l: &[&str]) -> Need {
        Need::Only(l.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn sum_by_of_counts_needs_only_its_labels() {
        assert_eq!(
            needs(r#"sum by (app) (rate({a="b"}[5m]))"#),
            vec![only(&["app"])]
        );
        assert_eq!(
            needs(r#"sum(count_over_time({a="b"}[5m]))"#),
            vec![only(&[])]
        );
    }

    #[test]
    fn other_parents_need_every_label() {
        assert_eq!(
            needs(r#"max by (app) (rate({a="b"}[5m]))"#),
            vec![Need::All]
        );
        assert_eq!(needs(r#"count(rate({a="b"}[5m]))"#), vec![Need::All]);
        assert_eq!(
            needs(r#"sum without (x) (rate({a="b"}[5m]))"#),
            vec![Need::All]
        );
        assert_eq!(needs(r#"rate({a="b"}[5m]) / 2"#), vec![Need::All]);
        assert_eq!(
            needs(r#"sum by (a) (max_over_time({a="b"} | unwrap x [5m]))"#),
            vec![Need::All]
        );
    }

    #[test]
    fn range_grouping_and_order() {
        assert_eq!(
            needs(
                r#"avg_over_time({a="b"} | unwrap x [5m]) by (pod) + sum by (c) (rate({a="c"}[1m]))"#
            ),
            vec![only(&["pod"]), only(&["c"])]
        );
        assert_eq!(needs(r#"absent_over_time({a="b"}[5m])"#), vec![only(&[])]);
    }
}
