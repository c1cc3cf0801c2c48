//! Rewrites Loki applies to a metric query before it evaluates it, where
//! they show in answers.
//!
//! * `removeLineformat` (`pkg/logql/optimize.go`): every `line_format` of a
//!   range aggregation that no later parser or line filter reads is dropped,
//!   except under `bytes_over_time` and `bytes_rate` (which measure the
//!   line). A template error then no longer fails the query, and the labels
//!   such a template reads are no longer required by the parser hints
//!   (`sum by (level) (count_over_time({…} | json | line_format "{{.msg}}" [5m]))`
//!   stops parsing at `level`).
//! * The query frontend's shard mapping (`pkg/logql/shardmapper.go`) turns a
//!   grouped `avg_over_time(… | unwrap x [r]) by (g)` into
//!   `sum by (g) (sum_over_time(… | unwrap x [r])) / sum by (g) (count_over_time(… [r]))`:
//!   the count drops the `unwrap` and its filters, so it counts every
//!   selected entry (also those without `x` or with a conversion error), and
//!   a parser error in it fails the query.

use std::borrow::Cow;

use logql_parser::{
    BinaryExpr, BinaryModifier, BinaryOp, Grouping, LabelFormatOp, MetricExpr, RangeAggregation,
    RangeOp, Stage, VectorAggregation, VectorOp,
};

/// `expr` as Loki evaluates it: [`sharded`], then [`without_line_format`].
pub fn as_loki_runs(expr: &MetricExpr) -> Cow<'_, MetricExpr> {
    match sharded(expr) {
        Cow::Borrowed(e) => without_line_format(e),
        Cow::Owned(e) => Cow::Owned(without_line_format(&e).into_owned()),
    }
}

/// `expr` without the `line_format` stages Loki removes; borrowed when
/// there are none.
pub fn without_line_format(expr: &MetricExpr) -> Cow<'_, MetricExpr> {
    if !any_removable(expr) {
        return Cow::Borrowed(expr);
    }
    let mut owned = expr.clone();
    strip(&mut owned);
    Cow::Owned(owned)
}

fn applies(r: &RangeAggregation) -> bool {
    !matches!(r.op, RangeOp::BytesOverTime | RangeOp::BytesRate)
}

/// Whether the `line_format` at `i` is read later: a parser or line filter
/// at or after it.
fn read_later(stages: &[Stage], i: usize) -> bool {
    stages[i..]
        .iter()
        .any(|s| matches!(s, Stage::Parser(_) | Stage::LineFilter(_)))
}

fn removable(r: &RangeAggregation) -> bool {
    let stages = &r.range.log.pipeline;
    applies(r)
        && stages
            .iter()
            .enumerate()
            .any(|(i, s)| matches!(s, Stage::LineFormat(_)) && !read_later(stages, i))
}

fn any_removable(expr: &MetricExpr) -> bool {
    match expr {
        MetricExpr::RangeAggregation(r) => removable(r),
        MetricExpr::VectorAggregation(v) => any_removable(&v.inner),
        MetricExpr::Binary(b) => any_removable(&b.lhs) || any_removable(&b.rhs),
        MetricExpr::LabelReplace(l) => any_removable(&l.inner),
        MetricExpr::Literal(_) | MetricExpr::Vector(_) => false,
    }
}

fn strip(expr: &mut MetricExpr) {
    match expr {
        MetricExpr::RangeAggregation(r) => {
            if removable(r) {
                let stages = std::mem::take(&mut r.range.log.pipeline);
                r.range.log.pipeline = stages
                    .iter()
                    .enumerate()
                    .filter(|(i, s)| !matches!(s, Stage::LineFormat(_)) || read_later(&stages, *i))
                    .map(|(_, s)| s.clone())
                    .collect();
            }
        }
        MetricExpr::VectorAggregation(v) => strip(&mut v.inner),
        MetricExpr::Binary(b) => {
            strip(&mut b.lhs);
            strip(&mut b.rhs);
        }
        MetricExpr::LabelReplace(l) => strip(&mut l.inner),
        MetricExpr::Literal(_) | MetricExpr::Vector(_) => {}
    }
}

/// `expr` after the shard mapper's `avg_over_time` rewrite; borrowed when
/// nothing changes.
pub fn sharded(expr: &MetricExpr) -> Cow<'_, MetricExpr> {
    let mut owned = expr.clone();
    if map(&mut owned, true) {
        Cow::Owned(owned)
    } else {
        Cow::Borrowed(expr)
    }
}

/// Loki's `groupingReducesLabels`.
fn grouping_reduces(g: Option<&Grouping>) -> bool {
    g.is_some_and(|g| !g.labels.is_empty())
}

/// Loki's `ReducesLabels`: a grouping with labels anywhere, `keep`/`drop`,
/// or a `label_format` rename.
fn reduces_labels(expr: &MetricExpr) -> bool {
    match expr {
        MetricExpr::RangeAggregation(r) => {
            grouping_reduces(r.grouping.as_ref())
                || r.range.log.pipeline.iter().any(|s| match s {
                    Stage::Keep(_) | Stage::Drop(_) => true,
                    Stage::LabelFormat(ops) => ops
                        .iter()
                        .any(|o| matches!(o, LabelFormatOp::Rename { .. })),
                    _ => false,
                })
        }
        MetricExpr::VectorAggregation(v) => {
            grouping_reduces(v.grouping.as_ref()) || reduces_labels(&v.inner)
        }
        MetricExpr::Binary(b) => reduces_labels(&b.lhs) || reduces_labels(&b.rhs),
        MetricExpr::LabelReplace(l) => reduces_labels(&l.inner),
        MetricExpr::Literal(_) | MetricExpr::Vector(_) => false,
    }
}

fn range_shardable(r: &RangeAggregation, top: bool) -> bool {
    use RangeOp as R;
    match r.op {
        R::QuantileOverTime => top,
        R::AvgOverTime
        | R::CountOverTime
        | R::FirstOverTime
        | R::LastOverTime
        | R::Rate
        | R::BytesOverTime
        | R::BytesRate
        | R::SumOverTime
        | R::MaxOverTime
        | R::MinOverTime => true,
        _ => false,
    }
}

/// Loki's `Shardable` (pipelines always are).
fn shardable(expr: &MetricExpr, top: bool) -> bool {
    match expr {
        MetricExpr::RangeAggregation(r) => range_shardable(r, top),
        MetricExpr::VectorAggregation(v) => {
            let op_ok = matches!(
                v.op,
                VectorOp::Sum | VectorOp::Avg | VectorOp::Count | VectorOp::Max | VectorOp::Min
            );
            if !op_ok || !shardable(&v.inner, top) {
                return false;
            }
            match v.op {
                VectorOp::Count | VectorOp::Avg => !reduces_labels(&v.inner),
                VectorOp::Max | VectorOp::Min => {
                    matches!(&*v.inner, MetricExpr::RangeAggregation(r) if range_shardable(r, false))
                }
                _ => !matches!(
                    &*v.inner,
                    MetricExpr::VectorAggregation(c) if matches!(c.op, VectorOp::Min | VectorOp::Max)
                ),
            }
        }
        MetricExpr::Binary(b) => {
            let matching_ok = b
                .modifier
                .matching
                .as_ref()
                .is_none_or(|m| !m.on && m.labels.is_empty());
            matching_ok
                && matches!(b.op, BinaryOp::Add | BinaryOp::Mul)
                && shardable(&b.lhs, top)
                && shardable(&b.rhs, top)
        }
        MetricExpr::Literal(_) => true,
        MetricExpr::LabelReplace(_) | MetricExpr::Vector(_) => false,
    }
}

/// Walks `expr` as Loki's `ShardMapper.Map` does and rewrites the
/// `avg_over_time`s it reaches; whether anything changed.
fn map(expr: &mut MetricExpr, top: bool) -> bool {
    match expr {
        MetricExpr::Literal(_) | MetricExpr::Vector(_) => false,
        MetricExpr::LabelReplace(l) => map(&mut l.inner, top),
        MetricExpr::Binary(b) => {
            let l = map(&mut b.lhs, top);
            let r = map(&mut b.rhs, top);
            l || r
        }
        MetricExpr::VectorAggregation(_) => {
            // A shardable sum, avg or count runs whole on each shard; max
            // and min too, unless their input reduces labels.
            let whole = shardable(expr, top)
                && match expr {
                    MetricExpr::VectorAggregation(v) => match v.op {
                        VectorOp::Max | VectorOp::Min | VectorOp::Count => {
                            !reduces_labels(&v.inner)
                        }
                        _ => true,
                    },
                    _ => false,
                };
            let MetricExpr::VectorAggregation(v) = expr else {
                return false;
            };
            !whole && map(&mut v.inner, false)
        }
        MetricExpr::RangeAggregation(_) => {
            let rewrite = match &*expr {
                MetricExpr::RangeAggregation(r) => {
                    let noop = r
                        .grouping
                        .as_ref()
                        .is_none_or(|g| g.without && g.labels.is_empty());
                    r.op == RangeOp::AvgOverTime
                        && range_shardable(r, top)
                        && (reduces_labels(expr) || !noop)
                }
                _ => false,
            };
            let MetricExpr::RangeAggregation(r) = expr else {
                return false;
            };
            if !rewrite {
                return false;
            }
            let grouping = r.grouping.clone().unwrap_or(Grouping {
                without: true,
                labels: Vec::new(),
            });
            let mut count_grouping = grouping.clone();
            let mut count_range = r.range.clone();
            if let Some(u) = count_range.unwrap.take()
                && count_grouping.without
            {
                count_grouping.labels.push(u.label);
            }
            let sum = |op: RangeOp, range, grouping| {
                MetricExpr::VectorAggregation(VectorAggregation {
                    op: VectorOp::Sum,
                    param: None,
                    inner: Box::new(MetricExpr::RangeAggregation(RangeAggregation {
                        op,
                        param: None,
                        range,
                        grouping: None,
                    })),
                    grouping: Some(grouping),
                })
            };
            *expr = MetricExpr::Binary(BinaryExpr {
                op: BinaryOp::Div,
                lhs: Box::new(sum(RangeOp::SumOverTime, r.range.clone(), grouping)),
                rhs: Box::new(sum(RangeOp::CountOverTime, count_range, count_grouping)),
                modifier: BinaryModifier::default(),
            });
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use logql_parser::Expr;

    use super::*;

    fn metric(q: &str) -> MetricExpr {
        let Ok(Expr::Metric(m)) = logql_parser::parse(q) else {
            panic!("not a metric query: {q}")
        };
        m
    }

    #[test]
    fn unread_line_format_is_removed() {
        for (q, want) in [
            (
                r#"sum by (level) (count_over_time({a="b"} | json | line_format "{{.msg}}" [5m]))"#,
                r#"sum by (level) (count_over_time({a="b"} | json [5m]))"#,
            ),
            // Only line_format: the selector alone remains.
            (
                r#"rate({a="b"} | line_format "x" [1m]) / rate({a="b"} | line_format "{{.y}}" | label_format z=y [1m])"#,
                r#"rate({a="b"}[1m]) / rate({a="b"} | label_format z=y [1m])"#,
            ),
        ] {
            assert_eq!(*without_line_format(&metric(q)), metric(want), "{q}");
        }
    }

    #[test]
    fn grouped_avg_over_time_becomes_sum_over_count() {
        for (q, want) in [
            (
                r#"avg_over_time({a="b"} | json | unwrap x | __error__="" [5m]) by (app)"#,
                r#"sum by (app) (sum_over_time({a="b"} | json | unwrap x | __error__="" [5m])) / sum by (app) (count_over_time({a="b"} | json [5m]))"#,
            ),
            (
                r#"topk(1, avg_over_time({a="b"} | logfmt | unwrap x [5m]) without (pod))"#,
                r#"topk(1, sum without (pod) (sum_over_time({a="b"} | logfmt | unwrap x [5m])) / sum without (pod, x) (count_over_time({a="b"} | logfmt [5m])))"#,
            ),
            (
                r#"avg_over_time({a="b"} | logfmt | keep x | unwrap x [5m])"#,
                r#"sum without () (sum_over_time({a="b"} | logfmt | keep x | unwrap x [5m])) / sum without (x) (count_over_time({a="b"} | logfmt | keep x [5m]))"#,
            ),
        ] {
            assert_eq!(*sharded(&metric(q)), metric(want), "{q}");
        }
        // Ungrouped, or run whole on each shard under a sum: unchanged.
        for q in [
            r#"avg_over_time({a="b"} | logfmt | unwrap x [5m])"#,
            r#"sum by (app) (avg_over_time({a="b"} | logfmt | unwrap x [5m]) by (app))"#,
            r#"avg_over_time({a="b"} | logfmt | unwrap x [5m]) without ()"#,
        ] {
            let m = metric(q);
            assert!(matches!(sharded(&m), Cow::Borrowed(_)), "{q}");
        }
    }

    #[test]
    fn read_or_measured_line_format_stays() {
        for q in [
            r#"count_over_time({a="b"} | line_format "{{.x}}" |= "y" [1m])"#,
            r#"count_over_time({a="b"} | line_format "{{.x}}" | logfmt [1m])"#,
            r#"bytes_over_time({a="b"} | line_format "{{.x}}" [1m])"#,
            r#"sum(bytes_rate({a="b"} | line_format "{{.x}}" [1m]))"#,
        ] {
            let m = metric(q);
            assert!(matches!(without_line_format(&m), Cow::Borrowed(_)), "{q}");
        }
    }
}
