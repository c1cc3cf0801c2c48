//! Label filters with Loki's grouping of `and`, `or`, `,` and juxtaposition.
//!
//! Loki's yacc grammar gives `or` and `and` left associativity with `and`
//! binding tighter, while `,` and juxtaposition always shift: `a, b or c` is
//! `a, (b or c)` and `a or b, c` is `a or (b, c)`. A small precedence climber
//! reproduces exactly that with binding powers (left, right): or (1,1),
//! and (2,2), `,`/juxtaposition (3,0).

use pest::iterators::Pair;

use super::selector::matcher;
use super::{Built, string, unexpected_at};
use crate::ast::{CmpOp, LabelFilter, MatchOp};
use crate::error::ParseError;
use crate::grammar::Rule;
use go::duration::Duration;
use go::humanize::parse_bytes;

#[derive(Clone, Copy)]
enum Op {
    And,
    Or,
    Comma,
}

impl Op {
    fn lbp(self) -> u8 {
        match self {
            Op::Or => 1,
            Op::And => 2,
            Op::Comma => 3,
        }
    }
    fn rbp(self) -> u8 {
        match self {
            Op::Or => 1,
            Op::And => 2,
            Op::Comma => 0,
        }
    }
}

/// Builds a `label_filter` pair.
pub(crate) fn label_filter(input: &str, p: Pair<'_, Rule>) -> Built<LabelFilter> {
    let mut operands = Vec::new();
    let mut ops = Vec::new();
    let mut pending = None;
    for c in p.into_inner() {
        if c.as_rule() == Rule::lf_op {
            let s = c.as_str().to_ascii_lowercase();
            pending = Some(match s.as_str() {
                "or" => Op::Or,
                "and" => Op::And,
                _ => Op::Comma,
            });
        } else {
            if !operands.is_empty() {
                ops.push(pending.take().unwrap_or(Op::Comma));
            }
            operands.push(primary(input, c)?);
        }
    }
    let mut operands = operands.into_iter();
    let mut ops = ops.into_iter().peekable();
    let first = operands
        .next()
        .ok_or_else(|| ParseError::Semantic("empty label filter".into()))?;
    Ok(climb(first, &mut operands, &mut ops, 0))
}

fn climb(
    mut lhs: LabelFilter,
    operands: &mut impl Iterator<Item = LabelFilter>,
    ops: &mut std::iter::Peekable<impl Iterator<Item = Op>>,
    min: u8,
) -> LabelFilter {
    while let Some(&op) = ops.peek() {
        if op.lbp() <= min {
            break;
        }
        ops.next();
        let Some(first) = operands.next() else { break };
        let rhs = climb(first, operands, ops, op.rbp());
        lhs = match op {
            Op::Or => LabelFilter::Or(Box::new(lhs), Box::new(rhs)),
            Op::And | Op::Comma => LabelFilter::And(Box::new(lhs), Box::new(rhs)),
        };
    }
    lhs
}

fn cmp(s: &str) -> CmpOp {
    match s {
        ">" => CmpOp::Gt,
        ">=" => CmpOp::Ge,
        "<" => CmpOp::Lt,
        "<=" => CmpOp::Le,
        "!=" => CmpOp::Neq,
        _ => CmpOp::Eq,
    }
}

fn primary(input: &str, p: Pair<'_, Rule>) -> Built<LabelFilter> {
    let rule = p.as_rule();
    if rule == Rule::string_filter {
        let Some(m) = p.into_inner().next() else {
            return Err(ParseError::Semantic("malformed label filter".into()));
        };
        return Ok(LabelFilter::Matcher(matcher(input, m)?));
    }
    let mut it = p.into_inner();
    let Some(first) = it.next() else {
        return Err(ParseError::Semantic("malformed label filter".into()));
    };
    if rule == Rule::lf_paren {
        // Loki drops the parentheses; its printer brackets every binary filter.
        return label_filter(input, first);
    }
    let name = super::ident(&first)?;
    let (Some(op), Some(value)) = (it.next(), it.next()) else {
        return Err(ParseError::Semantic("malformed label filter".into()));
    };
    match rule {
        Rule::ip_filter => {
            let s = it.next().unwrap_or(value);
            let op = if op.as_str() == "!=" {
                MatchOp::Neq
            } else {
                MatchOp::Eq
            };
            Ok(LabelFilter::Ip {
                name,
                op,
                value: string(input, &s)?,
            })
        }
        Rule::duration_filter => match Duration::parse_logql(value.as_str()) {
            Ok(d) => Ok(LabelFilter::Duration {
                name,
                op: cmp(op.as_str()),
                value: d,
            }),
            Err(_) => Err(bad_unit(input, &value)),
        },
        Rule::bytes_filter => match parse_bytes(value.as_str()) {
            Some(b) => Ok(LabelFilter::Bytes {
                name,
                op: cmp(op.as_str()),
                value: b,
            }),
            None => Err(bad_unit(input, &value)),
        },
        _ => Ok(LabelFilter::Number {
            name,
            op: cmp(op.as_str()),
            value: literal(value.as_str())?,
        }),
    }
}

/// A number with a unit neither Prometheus, Go nor humanize accepts: Loki
/// lexes the number alone and then fails on the identifier after it.
fn bad_unit(input: &str, value: &Pair<'_, Rule>) -> ParseError {
    let s = value.as_str();
    let digits = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && c == '-')))
        .map_or(s.len(), |(i, _)| i);
    unexpected_at(input, value.as_span().start() + digits)
}

/// Parses a literal (with optional sign) as Go's `strconv.ParseFloat` would.
pub(crate) fn literal(text: &str) -> Built<f64> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t.as_str()),
    };
    let v: f64 = body.parse().map_err(|_| {
        ParseError::Semantic(format!(
            "unable to parse literal as a float: strconv.ParseFloat: parsing \"{body}\": invalid syntax"
        ))
    })?;
    Ok(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use crate::ast::{CmpOp, Expr, LabelFilter, MatchOp, Matcher, Stage};
    use go::duration::Duration;

    fn filter(q: &str) -> LabelFilter {
        let Ok(Expr::Log(l)) = crate::parse(q) else {
            panic!("{q} did not parse as a log query")
        };
        match l.pipeline.last() {
            Some(Stage::LabelFilter(f)) => f.clone(),
            other => panic!("last stage is {other:?}"),
        }
    }

    fn num(name: &str, op: CmpOp, value: f64) -> LabelFilter {
        LabelFilter::Number {
            name: name.into(),
            op,
            value,
        }
    }

    #[test]
    fn and_binds_tighter_than_or() {
        let f = filter(r#"{a="b"} | x>1 and y<2 or z==3"#);
        let want = LabelFilter::Or(
            Box::new(LabelFilter::And(
                Box::new(num("x", CmpOp::Gt, 1.0)),
                Box::new(num("y", CmpOp::Lt, 2.0)),
            )),
            Box::new(num("z", CmpOp::Eq, 3.0)),
        );
        assert_eq!(f, want);
    }

    #[test]
    fn comma_and_juxtaposition_shift_like_yacc() {
        let f = filter(r#"{a="b"} | x>1 or y<2, z=3"#);
        let want = LabelFilter::Or(
            Box::new(num("x", CmpOp::Gt, 1.0)),
            Box::new(LabelFilter::And(
                Box::new(num("y", CmpOp::Lt, 2.0)),
                Box::new(num("z", CmpOp::Eq, 3.0)),
            )),
        );
        assert_eq!(f, want);
        let g = filter(r#"{a="b"} | x>1 y="v""#);
        let m = Matcher {
            name: "y".into(),
            op: MatchOp::Eq,
            value: "v".into(),
        };
        assert_eq!(
            g,
            LabelFilter::And(
                Box::new(num("x", CmpOp::Gt, 1.0)),
                Box::new(LabelFilter::Matcher(m))
            )
        );
    }

    #[test]
    fn units_and_ip() {
        assert_eq!(
            filter(r#"{a="b"} | latency >= 1h30m"#),
            LabelFilter::Duration {
                name: "latency".into(),
                op: CmpOp::Ge,
                value: Duration(5_400_000_000_000)
            }
        );
        assert_eq!(
            filter(r#"{a="b"} | size > 5MiB"#),
            LabelFilter::Bytes {
                name: "size".into(),
                op: CmpOp::Gt,
                value: 5 * 1024 * 1024
            }
        );
        assert_eq!(
            filter(r#"{a="b"} | addr != ip("10.0.0.0/8")"#),
            LabelFilter::Ip {
                name: "addr".into(),
                op: MatchOp::Neq,
                value: "10.0.0.0/8".into()
            }
        );
    }
}
