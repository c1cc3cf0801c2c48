//! Loki's post-parse checks (`validateExpr`): every selector needs a matcher
//! that cannot match the empty string, and `sort` takes no grouping.

use crate::ast::{Expr, LogExpr, MetricExpr, VectorOp};
use crate::build::selector_matches_empty;
use crate::error::ParseError;

/// Loki's exact message for a selector that could select every stream.
pub const EMPTY_MATCHERS: &str = "queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~\".*\" does not meet this requirement, but app=~\".+\" will";

pub(crate) fn validate(e: &Expr) -> Result<(), ParseError> {
    match e {
        Expr::Log(l) => log(l),
        Expr::Metric(m) => metric(m),
    }
}

fn log(l: &LogExpr) -> Result<(), ParseError> {
    if l.selector.matchers.iter().all(selector_matches_empty) {
        return Err(ParseError::Semantic(EMPTY_MATCHERS.into()));
    }
    Ok(())
}

fn metric(m: &MetricExpr) -> Result<(), ParseError> {
    match m {
        MetricExpr::Binary(b) => {
            metric(&b.lhs)?;
            metric(&b.rhs)
        }
        MetricExpr::Literal(_) | MetricExpr::Vector(_) => Ok(()),
        MetricExpr::VectorAggregation(v) => {
            if matches!(v.op, VectorOp::Sort | VectorOp::SortDesc)
                && v.grouping.as_ref().is_some_and(|g| !g.labels.is_empty())
            {
                return Err(ParseError::Semantic(
                    "sort and sort_desc doesn't allow grouping by ".into(),
                ));
            }
            metric(&v.inner)
        }
        MetricExpr::RangeAggregation(r) => log(&r.range.log),
        MetricExpr::LabelReplace(l) => metric(&l.inner),
    }
}
