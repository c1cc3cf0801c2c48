//! Pipeline stages: line filters, parsers, formatters, drop/keep.

use pest::iterators::Pair;

use super::label_filter::label_filter;
use super::selector::{matcher, selector};
use super::{Built, string};
use crate::ast::{
    LabelExtraction, LabelFormatOp, LabelSelector, LineFilter, LineFilterOp, LineFilterValue,
    LogExpr, Parser, Stage,
};
use crate::error::ParseError;
use crate::grammar::Rule;

/// Builds `selector pipeline?`.
pub(crate) fn log_expr(input: &str, p: Pair<'_, Rule>) -> Built<LogExpr> {
    let mut it = p.into_inner();
    let mut sel = None;
    let mut stages = Vec::new();
    for c in it.by_ref() {
        match c.as_rule() {
            Rule::selector => sel = Some(selector(input, c)?),
            // `pipeline` is silent: the stages are children of `log_expr`.
            _ => stage(input, c, &mut stages)?,
        }
    }
    let selector =
        sel.ok_or_else(|| crate::error::ParseError::Semantic("missing selector".into()))?;
    Ok(LogExpr {
        selector,
        pipeline: stages,
    })
}

/// Builds one pipeline stage onto `out`; other pairs are ignored.
pub(crate) fn stage(input: &str, p: Pair<'_, Rule>, out: &mut Vec<Stage>) -> Built<()> {
    let rule = p.as_rule();
    let text = p.as_str();
    let mut it = p.into_inner();
    let st = match rule {
        Rule::line_filter => return line_filter(input, text, it, out),
        Rule::json_stage => {
            let ex = it.find(|c| c.as_rule() == Rule::extractions);
            Stage::Parser(Parser::Json(match ex {
                Some(e) => extractions(input, e)?,
                None => Vec::new(),
            }))
        }
        Rule::logfmt_stage => {
            let (mut strict, mut keep_empty, mut extr) = (false, false, Vec::new());
            for c in it {
                match c.as_rule() {
                    Rule::logfmt_flag if c.as_str() == "--strict" => strict = true,
                    Rule::logfmt_flag => keep_empty = true,
                    Rule::extractions => extr = extractions(input, c)?,
                    _ => {}
                }
            }
            Stage::Parser(Parser::Logfmt {
                strict,
                keep_empty,
                extractions: extr,
            })
        }
        Rule::regexp_stage => {
            let re = last_string(input, it)?;
            if let Some(e) = regexp_parser_error(&re) {
                return Err(ParseError::Semantic(format!("invalid regexp parser: {e}")));
            }
            Stage::Parser(Parser::Regexp(re))
        }
        Rule::pattern_stage => {
            let p = last_string(input, it)?;
            if let Err(e) = crate::pattern::parse_pattern(&p, false) {
                return Err(ParseError::Semantic(format!("invalid pattern parser: {e}")));
            }
            Stage::Parser(Parser::Pattern(p))
        }
        Rule::unpack_stage => Stage::Parser(Parser::Unpack),
        Rule::line_format_stage => Stage::LineFormat(last_string(input, it)?),
        Rule::decolorize_stage => Stage::Decolorize,
        Rule::label_format_stage => {
            let mut ops = Vec::new();
            for f in it.filter(|c| c.as_rule() == Rule::label_fmt) {
                let mut f = f.into_inner();
                let (Some(dst), Some(src)) = (f.next(), f.next()) else {
                    continue;
                };
                let dst = super::ident(&dst)?;
                ops.push(if src.as_rule() == Rule::identifier {
                    LabelFormatOp::Rename {
                        dst,
                        src: super::ident(&src)?,
                    }
                } else {
                    LabelFormatOp::Template {
                        dst,
                        template: string(input, &src)?,
                    }
                });
            }
            Stage::LabelFormat(ops)
        }
        Rule::drop_stage | Rule::keep_stage => {
            let mut items = Vec::new();
            for n in it.filter(|c| c.as_rule() == Rule::named_matcher) {
                let Some(inner) = n.into_inner().next() else {
                    continue;
                };
                items.push(if inner.as_rule() == Rule::matcher {
                    LabelSelector::Matcher(matcher(input, inner)?)
                } else {
                    LabelSelector::Name(super::ident(&inner)?)
                });
            }
            if rule == Rule::drop_stage {
                Stage::Drop(items)
            } else {
                Stage::Keep(items)
            }
        }
        Rule::label_filter_stage => match it.next() {
            Some(f) => Stage::LabelFilter(label_filter(input, f)?),
            None => return Ok(()),
        },
        _ => return Ok(()),
    };
    out.push(st);
    Ok(())
}

fn last_string(input: &str, it: pest::iterators::Pairs<'_, Rule>) -> Built<String> {
    match it.filter(|c| c.as_rule() == Rule::string).last() {
        Some(s) => string(input, &s),
        None => Ok(String::new()),
    }
}

fn extractions(input: &str, p: Pair<'_, Rule>) -> Built<Vec<LabelExtraction>> {
    let mut out = Vec::new();
    for e in p.into_inner() {
        let mut it = e.into_inner();
        let Some(name) = it.next() else { continue };
        let name = super::ident(&name)?;
        let expr = match it.next() {
            Some(s) => Some(string(input, &s)?),
            None => None,
        };
        // `json a` means `json a="a"`; keep one spelling so printing round-trips.
        let expr = expr.filter(|e| *e != name);
        out.push(LabelExtraction { name, expr });
    }
    Ok(out)
}

/// Builds one line filter; negative `or` chains become separate filters, as
/// Loki rewrites `!= "a" or "b"` into `!= "a" != "b"`.
///
/// `text` is the filter's text; it starts with the operator, which has no
/// pair of its own.
fn line_filter(
    input: &str,
    text: &str,
    it: pest::iterators::Pairs<'_, Rule>,
    out: &mut Vec<Stage>,
) -> Built<()> {
    let op = match text.get(..2).unwrap_or_default() {
        "|=" => LineFilterOp::Contains,
        "!=" => LineFilterOp::NotContains,
        "|~" => LineFilterOp::Regex,
        "!~" => LineFilterOp::NotRegex,
        "|>" => LineFilterOp::Pattern,
        _ => LineFilterOp::NotPattern,
    };
    let mut values = Vec::new();
    for v in it {
        match v.as_rule() {
            Rule::string => values.push(LineFilterValue::Literal(string(input, &v)?)),
            Rule::ip_value => {
                if let Some(s) = v.into_inner().find(|c| c.as_rule() == Rule::string) {
                    values.push(LineFilterValue::Ip(string(input, &s)?));
                }
            }
            _ => {}
        }
    }
    let negative = matches!(
        op,
        LineFilterOp::NotContains | LineFilterOp::NotRegex | LineFilterOp::NotPattern
    );
    if negative {
        for v in values {
            out.push(Stage::LineFilter(LineFilter {
                op,
                values: vec![v],
            }));
        }
    } else {
        out.push(Stage::LineFilter(LineFilter { op, values }));
    }
    Ok(())
}

/// Why Loki's `NewRegexpParser` refuses `re`, checked while parsing as Loki
/// does: Go's regex error, or no named capture.
fn regexp_parser_error(re: &str) -> Option<String> {
    if let Err(e) = go::regexp::check(re) {
        return Some(e);
    }
    if let Some(n) = go::regexp::duplicate_group_name(re) {
        return Some(format!("duplicate extracted label name '{n}'"));
    }
    let compiled = regex::Regex::new(re).ok()?;
    let mut names: Vec<&str> = Vec::new();
    for n in compiled.capture_names().flatten() {
        if names.contains(&n) {
            return Some(format!("duplicate extracted label name '{n}'"));
        }
        names.push(n);
    }
    names
        .is_empty()
        .then(|| "at least one named capture must be supplied".to_owned())
}

#[cfg(test)]
mod tests {
    use crate::ast::*;

    fn log(q: &str) -> LogExpr {
        match crate::parse(q) {
            Ok(Expr::Log(l)) => l,
            other => panic!("{q}: {other:?}"),
        }
    }

    #[test]
    fn selector_with_backticks_and_comments() {
        let l = log("{ app = `a\\d`, env=~\"prod|dev\" } # trailing comment");
        assert_eq!(
            l.selector.matchers,
            vec![
                Matcher {
                    name: "app".into(),
                    op: MatchOp::Eq,
                    value: "a\\d".into()
                },
                Matcher {
                    name: "env".into(),
                    op: MatchOp::Re,
                    value: "prod|dev".into()
                },
            ]
        );
        assert!(l.pipeline.is_empty());
    }

    #[test]
    fn line_filters_and_parsers() {
        let l = log(
            r#"{a="b"} |= "x" or "y" != "p" or "q" | logfmt --strict --keep-empty | json f="g.h", k"#,
        );
        assert_eq!(
            l.pipeline,
            vec![
                Stage::LineFilter(LineFilter {
                    op: LineFilterOp::Contains,
                    values: vec![
                        LineFilterValue::Literal("x".into()),
                        LineFilterValue::Literal("y".into())
                    ],
                }),
                Stage::LineFilter(LineFilter {
                    op: LineFilterOp::NotContains,
                    values: vec![LineFilterValue::Literal("p".into())]
                }),
                Stage::LineFilter(LineFilter {
                    op: LineFilterOp::NotContains,
                    values: vec![LineFilterValue::Literal("q".into())]
                }),
                Stage::Parser(Parser::Logfmt {
                    strict: true,
                    keep_empty: true,
                    extractions: vec![]
                }),
                Stage::Parser(Parser::Json(vec![
                    LabelExtraction {
                        name: "f".into(),
                        expr: Some("g.h".into())
                    },
                    LabelExtraction {
                        name: "k".into(),
                        expr: None
                    },
                ])),
            ]
        );
    }

    #[test]
    fn line_filter_spaces_are_explicit() {
        // `line_filter` is compound-atomic: its spaces are spelled out.
        assert_eq!(
            log(r#"{a="b"} |=  "x"  or  "y" !~ ip( "1.2.3.4" ) or ip("::1")"#),
            log(r#"{a="b"}|="x"or"y"!~ip("1.2.3.4")or ip("::1")"#)
        );
        // The operator is one token, as in Loki's lexer.
        assert!(crate::parse(r#"{a="b"} | = "x""#).is_err());
        assert!(crate::parse(r#"{a="b"} |= "x" orr "y""#).is_err());
    }

    #[test]
    fn ip_line_filter_and_formatters() {
        let l = log(
            r#"{a="b"} |= ip("1.2.3.4") | line_format "{{.x}}" | label_format a=b, c="{{.d}}" | drop x, y="z" | decolorize"#,
        );
        assert_eq!(
            l.pipeline[0],
            Stage::LineFilter(LineFilter {
                op: LineFilterOp::Contains,
                values: vec![LineFilterValue::Ip("1.2.3.4".into())]
            })
        );
        assert_eq!(l.pipeline[1], Stage::LineFormat("{{.x}}".into()));
        assert_eq!(
            l.pipeline[2],
            Stage::LabelFormat(vec![
                LabelFormatOp::Rename {
                    dst: "a".into(),
                    src: "b".into()
                },
                LabelFormatOp::Template {
                    dst: "c".into(),
                    template: "{{.d}}".into()
                },
            ])
        );
        assert_eq!(
            l.pipeline[3],
            Stage::Drop(vec![
                LabelSelector::Name("x".into()),
                LabelSelector::Matcher(Matcher {
                    name: "y".into(),
                    op: MatchOp::Eq,
                    value: "z".into()
                }),
            ])
        );
        assert_eq!(l.pipeline[4], Stage::Decolorize);
    }
}
