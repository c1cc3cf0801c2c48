//! Lowering a LogQL log query into a [`LogPlan`].
//!
//! Line filters only read the line, which no supported stage rewrites, so they
//! all go into the top-level filter. Label filters before any parser read
//! stored fields and join the top-level filter too; after a parser they become
//! `| filter` pipes at their position, since a later parser may overwrite the
//! fields they read.

mod label;
mod line;
mod parser;
mod selector;

use logql_parser::{LabelSelector, LogExpr, Selector, Stage};

use crate::error::LowerError;
use crate::filter::Filter;
use crate::pipe::Pipe;
use crate::plan::{LogPlan, PARSED_PREFIX};
use crate::query::Query;

/// Lowers a LogQL log query into a plan.
///
/// # Errors
/// [`LowerError::Unsupported`] naming the first stage or construct with no
/// exact LogsQL equivalent yet.
pub fn lower_log(expr: &LogExpr) -> Result<LogPlan, LowerError> {
    let mut top = vec![selector::lower(&expr.selector)];
    let mut pipes = Vec::new();
    let mut parsed = false;
    for stage in &expr.pipeline {
        match stage {
            Stage::LineFilter(lf) => top.push(line::lower(lf)?),
            Stage::LabelFilter(lf) => {
                let f = label::lower(lf, parsed)?;
                if !parsed {
                    top.push(f);
                } else if f != Filter::All {
                    pipes.push(Pipe::Filter(f));
                }
            }
            Stage::Parser(p) => {
                pipes.extend(parser::lower(p)?);
                parsed = true;
            }
            Stage::LineFormat(_) => return Err(unsupported("line_format")),
            Stage::LabelFormat(_) => return Err(unsupported("label_format")),
            // The plan never produces Loki's error labels, so dropping them
            // (Drilldown's `| json | logfmt | drop __error__, __error_details__`)
            // changes nothing; dropping any other label is not lowered yet.
            Stage::Drop(items) if items.iter().all(is_error_label) => {}
            Stage::Drop(_) => return Err(unsupported("drop")),
            Stage::Keep(_) => return Err(unsupported("keep")),
            Stage::Decolorize => return Err(unsupported("decolorize")),
        }
    }
    Ok(LogPlan {
        query: Query {
            filter: Filter::and(top),
            pipes,
        },
        parsed_prefix: parsed.then_some(PARSED_PREFIX),
    })
}

/// Lowers a stream selector alone (for `/labels?query=`, `/series?match[]=`).
pub fn lower_selector(selector: &Selector) -> Query {
    Query::new(selector::lower(selector))
}

fn is_error_label(item: &LabelSelector) -> bool {
    matches!(item, LabelSelector::Name(n) if n == "__error__" || n == "__error_details__")
}

fn unsupported(stage: &str) -> LowerError {
    LowerError::Unsupported(format!("{stage} stage"))
}

#[cfg(test)]
mod tests {
    use logql_parser::{
        CmpOp, LabelExtraction, LabelFilter, LineFilter, LineFilterOp, LineFilterValue, MatchOp,
        Matcher, Parser,
    };

    use super::*;

    fn m(name: &str, op: MatchOp, value: &str) -> Matcher {
        Matcher {
            name: name.into(),
            op,
            value: value.into(),
        }
    }

    fn expr(pipeline: Vec<Stage>) -> LogExpr {
        LogExpr {
            selector: Selector {
                matchers: vec![m("app", MatchOp::Eq, "api")],
            },
            pipeline,
        }
    }

    fn line(op: LineFilterOp, values: &[&str]) -> Stage {
        Stage::LineFilter(LineFilter {
            op,
            values: values
                .iter()
                .map(|v| LineFilterValue::Literal((*v).into()))
                .collect(),
        })
    }

    fn lowered(pipeline: Vec<Stage>) -> String {
        lower_log(&expr(pipeline)).unwrap().query.to_string()
    }

    #[test]
    fn contains_is_a_quoted_substring_regex() {
        assert_eq!(
            lowered(vec![line(LineFilterOp::Contains, &["[ERROR] a.b"])]),
            r#"{app="api"} and _msg:~"\\[ERROR\\] a\\.b""#
        );
    }

    #[test]
    fn or_alternatives_and_negation() {
        assert_eq!(
            lowered(vec![line(LineFilterOp::NotContains, &["a", "b|c"])]),
            r#"{app="api"} and !_msg:~"(?:a)|(?:b\\|c)""#
        );
        assert_eq!(
            lowered(vec![line(LineFilterOp::Contains, &[""])]),
            r#"{app="api"}"#
        );
        assert_eq!(
            lowered(vec![line(LineFilterOp::Contains, &["", "x"])]),
            r#"{app="api"} and _msg:~"x""#
        );
        assert_eq!(lowered(vec![line(LineFilterOp::NotContains, &[""])]), "!*");
    }

    #[test]
    fn label_filter_after_parser_prefers_stored_field() {
        let plan = lower_log(&expr(vec![
            Stage::Parser(Parser::Json(vec![])),
            Stage::LabelFilter(LabelFilter::Matcher(m("x", MatchOp::Eq, "v"))),
        ]))
        .unwrap();
        assert_eq!(plan.parsed_prefix, Some(PARSED_PREFIX));
        assert_eq!(
            plan.query.to_string(),
            r#"{app="api"} | unpack_json from _msg result_prefix "__lokivl_parsed." | filter "x":="v" or ("x":"" and "__lokivl_parsed.x":="v")"#
        );
    }

    #[test]
    fn label_filter_without_parser_reads_stored_fields_only() {
        let plan = lower_log(&expr(vec![Stage::LabelFilter(LabelFilter::Number {
            name: "status".into(),
            op: CmpOp::Ge,
            value: 500.0,
        })]))
        .unwrap();
        assert_eq!(plan.parsed_prefix, None);
        assert_eq!(plan.query.to_string(), r#"{app="api"} and "status":>=500"#);
    }

    #[test]
    fn json_field_expressions_copy_from_scratch() {
        let q = lowered(vec![Stage::Parser(Parser::Json(vec![LabelExtraction {
            name: "m".into(),
            expr: Some("req.method".into()),
        }]))]);
        assert_eq!(
            q,
            r#"{app="api"} | unpack_json from _msg fields ("req.method") result_prefix "__lokivl_tmp." | copy "__lokivl_tmp.req.method" as "__lokivl_parsed.m" | delete "__lokivl_tmp.req.method""#
        );
    }

    #[test]
    fn unsupported_stages_are_named() {
        let err = lower_log(&expr(vec![Stage::LineFormat("{{.a}}".into())])).unwrap_err();
        assert_eq!(err, LowerError::Unsupported("line_format stage".into()));
        let err = lower_log(&expr(vec![Stage::Parser(Parser::Regexp(
            "(?P<a>.)".into(),
        ))]))
        .unwrap_err();
        assert_eq!(err.to_string(), "unsupported: regexp parser");
    }

    #[test]
    fn selector_alone() {
        let q = lower_selector(&Selector {
            matchers: vec![m("a", MatchOp::Re, "x|y"), m("b", MatchOp::Neq, "")],
        });
        assert_eq!(q.to_string(), r#"{a=~"x|y", b!=""}"#);
        assert_eq!(
            lower_selector(&Selector { matchers: vec![] }).to_string(),
            "*"
        );
    }
}
