//! Loki's `removeLineformat` (`pkg/logql/optimize.go`): before a metric
//! query runs, Loki drops every `line_format` of a range aggregation that
//! no later parser or line filter reads, except under `bytes_over_time`
//! and `bytes_rate` (which measure the line). Reproduced because it is
//! visible in answers: a template error no longer fails the query, and the
//! labels such a template reads are no longer required by the parser hints
//! (`sum by (level) (count_over_time({…} | json | line_format "{{.msg}}" [5m]))`
//! stops parsing at `level`). It also lets more queries be counted in
//! VictoriaLogs.

use std::borrow::Cow;

use logql_parser::{MetricExpr, RangeAggregation, RangeOp, Stage};

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
