//! Loki's post-parse checks (`validateExpr`): every selector needs a matcher
//! that cannot match the empty string, and `sort` takes no grouping.

use crate::ast::{Expr, LineFilterOp, LineFilterValue, LogExpr, MetricExpr, Stage, VectorOp};
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

/// Loki's checks when it builds a query's pipelines (query_range, tail),
/// after parsing: every line filter regex must compile. `format_query`
/// and Loki's parser do not make them.
pub(crate) fn pipelines(e: &Expr) -> Result<(), ParseError> {
    match e {
        Expr::Log(l) => line_filter_regexes(l),
        Expr::Metric(m) => metric_pipelines(m),
    }
}

fn metric_pipelines(m: &MetricExpr) -> Result<(), ParseError> {
    match m {
        MetricExpr::Binary(b) => {
            metric_pipelines(&b.lhs)?;
            metric_pipelines(&b.rhs)
        }
        MetricExpr::Literal(_) | MetricExpr::Vector(_) => Ok(()),
        MetricExpr::VectorAggregation(v) => metric_pipelines(&v.inner),
        MetricExpr::RangeAggregation(r) => line_filter_regexes(&r.range.log),
        MetricExpr::LabelReplace(l) => metric_pipelines(&l.inner),
    }
}

/// Loki builds all line filters of a pipeline into one chained stage when it
/// validates; the outermost (last) filter with a bad regex is reported, with
/// the whole chain printed as the stage.
fn line_filter_regexes(l: &LogExpr) -> Result<(), ParseError> {
    let filters = || {
        l.pipeline.iter().filter_map(|s| match s {
            Stage::LineFilter(f) => Some(f),
            _ => None,
        })
    };
    let bad = filters()
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .filter(|f| matches!(f.op, LineFilterOp::Regex | LineFilterOp::NotRegex))
        .flat_map(|f| f.values.iter())
        .find_map(|v| match v {
            LineFilterValue::Literal(re) => go::regexp::check(re).err(),
            LineFilterValue::Ip(_) => None,
        });
    match bad {
        None => Ok(()),
        Some(msg) => Err(ParseError::InvalidRegex {
            stage: Some(
                filters()
                    .map(|f| f.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            msg,
        }),
    }
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

#[cfg(test)]
mod tests {
    fn run(q: &str) -> String {
        match crate::parse_query(q) {
            Ok(e) => format!("ok {e}"),
            Err(e) => e.to_string(),
        }
    }

    /// Loki 3.7.8's answers to query_range (its format_query accepts all of these).
    #[test]
    fn line_filter_regexes_fail_as_in_loki() {
        for (q, want) in [
            (
                r#"{a="b"} |~ "(""#,
                r#"parse error : stage '|~ "("' : error parsing regexp: missing closing ): `(`"#,
            ),
            (
                r#"{a="b"} !~ "a" or "(""#,
                r#"parse error : stage '!~ "a" !~ "("' : error parsing regexp: missing closing ): `(`"#,
            ),
            (
                r#"{a="b"} |~ "(" | json |= "x" |~ "[""#,
                r#"parse error : stage '|~ "(" |= "x" |~ "["' : error parsing regexp: missing closing ]: `[`"#,
            ),
            (
                r#"{a="b"} |~ "(" or "[""#,
                r#"parse error : stage '|~ "(" or "["' : error parsing regexp: missing closing ): `(`"#,
            ),
            (
                "count_over_time({a=\"b\"} |~ `error\\` [5m])",
                r#"parse error : stage '|~ "error\\"' : error parsing regexp: trailing backslash at end of expression: ``"#,
            ),
            (
                r#"rate({a="b"} |~ "(" [5m]) + rate({a="b"} |~ "[" [5m])"#,
                r#"parse error : stage '|~ "("' : error parsing regexp: missing closing ): `(`"#,
            ),
            (
                r#"{a="b"} |~ "[z-a]""#,
                r#"parse error : stage '|~ "[z-a]"' : error parsing regexp: invalid character class range: `z-a`"#,
            ),
        ] {
            assert_eq!(run(q), want, "{q}");
            assert!(crate::parse(q).is_ok(), "parse (format_query) accepts {q}");
        }
        assert_eq!(run(r#"{a="b"} |~ "(?i)a""#), r#"ok {a="b"} |~ "(?i)a""#);
    }

    #[test]
    fn matcher_regexes_fail_at_parse() {
        for (q, want) in [
            (
                r#"{a=~"a("}"#,
                "parse error : error parsing regexp: missing closing ): `a(`",
            ),
            (
                r#"{a="b"} | x!~"[z-a]""#,
                "parse error : error parsing regexp: invalid character class range: `z-a`",
            ),
        ] {
            assert_eq!(
                crate::parse(q).map_err(|e| e.to_string()).err().as_deref(),
                Some(want),
                "{q}"
            );
        }
    }
}
