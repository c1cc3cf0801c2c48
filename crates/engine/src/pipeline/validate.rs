//! Loki's errors for pipeline stages that do not build, checked before a
//! query runs so that it never reaches VictoriaLogs.
//!
//! Loki builds a query's stages when it runs it, and refuses a stage that
//! does not build with `parse error : stage '<stage>' : <why>` (consecutive
//! line filters are one stage). The texts here are Loki 3.7.8's, compared by
//! `tests/differential_errors.rs`. Line filter regexes are checked by
//! [`logql_parser::parse_query`], `regexp` and `pattern` parsers while
//! parsing.

use logql_parser::{
    Expr, LabelFilter, LabelFormatOp, LineFilterOp, LineFilterValue, LogExpr, MetricExpr, Parser,
    Stage,
};

use super::{ip, json};
use go::template::Template;

/// `Err` with Loki's message for the first stage of `expr` that does not build.
pub fn check(expr: &Expr) -> Result<(), String> {
    match expr {
        Expr::Log(l) => log(l),
        Expr::Metric(m) => metric(m),
    }
}

fn metric(m: &MetricExpr) -> Result<(), String> {
    match m {
        MetricExpr::RangeAggregation(r) => log(&r.range.log),
        MetricExpr::VectorAggregation(v) => metric(&v.inner),
        MetricExpr::Binary(b) => {
            metric(&b.lhs)?;
            metric(&b.rhs)
        }
        MetricExpr::LabelReplace(l) => metric(&l.inner),
        MetricExpr::Literal(_) | MetricExpr::Vector(_) => Ok(()),
    }
}

fn stage_error(stage: &str, why: &str) -> String {
    format!("parse error : stage '{stage}' : {why}")
}

fn ip_error(value: &str) -> Option<String> {
    ip::parse(value)
        .err()
        .map(|_| format!("ip: invalid pattern: {value:?}"))
}

fn label_filter_ip(f: &LabelFilter) -> Option<String> {
    match f {
        LabelFilter::And(a, b) | LabelFilter::Or(a, b) => {
            label_filter_ip(a).or_else(|| label_filter_ip(b))
        }
        LabelFilter::Paren(inner) => label_filter_ip(inner),
        LabelFilter::Ip { value, .. } => ip_error(value),
        _ => None,
    }
}

/// Loki's JSON expression grammar reports a path cut inside `[` this way.
fn json_path_error(expr: &str) -> Option<String> {
    let e = json::parse_path(expr).err()?;
    if expr.trim_end().ends_with('[') {
        Some(format!(
            "{e}: syntax error: unexpected $end, expecting STRING or INDEX"
        ))
    } else {
        Some(e)
    }
}

fn log(l: &LogExpr) -> Result<(), String> {
    // Loki chains the line filters into one stage, printed whole.
    let chain = || {
        l.pipeline
            .iter()
            .filter_map(|s| match s {
                Stage::LineFilter(f) => Some(f.to_string()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    for stage in &l.pipeline {
        let why = match stage {
            Stage::LineFilter(f) => f.values.iter().find_map(|v| match v {
                LineFilterValue::Ip(ip) => ip_error(ip),
                LineFilterValue::Literal(p)
                    if matches!(f.op, LineFilterOp::Pattern | LineFilterOp::NotPattern) =>
                {
                    logql_parser::parse_pattern(p, true).err()
                }
                LineFilterValue::Literal(_) => None,
            }),
            Stage::LabelFilter(f) => label_filter_ip(f),
            Stage::LineFormat(t) => Template::parse_named("line", t)
                .err()
                .map(|e| format!("invalid line template: {e}")),
            Stage::LabelFormat(ops) => ops.iter().find_map(|op| match op {
                LabelFormatOp::Template { dst, template } => {
                    Template::parse_named("label", template)
                        .err()
                        .map(|e| format!("invalid template for label '{dst}': {e}"))
                }
                LabelFormatOp::Rename { .. } => None,
            }),
            Stage::Parser(Parser::Json(ex)) => ex
                .iter()
                .find_map(|e| json_path_error(e.expr.as_deref().unwrap_or(&e.name))),
            _ => None,
        };
        if let Some(why) = why {
            let printed = match stage {
                Stage::LineFilter(_) => chain(),
                s => s.to_string(),
            };
            return Err(stage_error(&printed, &why));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(q: &str) -> Result<(), String> {
        check(&logql_parser::parse_query(q).unwrap())
    }

    /// Loki 3.7.8's answers (tests/golden/errors/loki.json holds them too).
    #[test]
    fn stages_fail_with_lokis_words() {
        for (q, want) in [
            (
                r#"{app="api"} |= ip("300.1.1.1")"#,
                r#"parse error : stage '|= ip("300.1.1.1")' : ip: invalid pattern: "300.1.1.1""#,
            ),
            (
                r#"{app="api"} | logfmt | addr = ip("x")"#,
                r#"parse error : stage '| addr=ip("x")' : ip: invalid pattern: "x""#,
            ),
            (
                r#"{app="api"} | line_format "{{.b""#,
                r#"parse error : stage '| line_format "{{.b"' : invalid line template: template: line:1: unclosed action"#,
            ),
            (
                r#"{app="api"} | label_format a="{{.b""#,
                r#"parse error : stage '| label_format a="{{.b"' : invalid template for label 'a': template: label:1: unclosed action"#,
            ),
            (
                r#"{app="api"} | json a="b[""#,
                r#"parse error : stage '| json a="b["' : cannot parse expression [b[]: syntax error: unexpected $end, expecting STRING or INDEX"#,
            ),
            (
                r#"{app="api"} |> "<a> x""#,
                r#"parse error : stage '|> "<a> x"' : named captures are not allowed: found '<a>'"#,
            ),
            (
                r#"sum(count_over_time({app="api"} |= ip("x") [5m]))"#,
                r#"parse error : stage '|= ip("x")' : ip: invalid pattern: "x""#,
            ),
        ] {
            assert_eq!(run(q), Err(want.to_owned()), "{q}");
        }
        assert_eq!(
            run(r#"{app="api"} |= ip("10.0.0.0/8") | line_format "{{.a}}""#),
            Ok(())
        );
    }
}
