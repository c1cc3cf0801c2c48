//! Metric expressions: aggregations, binary operations with Prometheus
//! precedence, literals, `vector()` and `label_replace()`.

use pest::iterators::{Pair, Pairs};

use super::label_filter::{label_filter, literal};
use super::pipeline::{log_expr, stage};
use super::selector::{anchored_regex, selector};
use super::{Built, string, unexpected_at};
use crate::ast::{
    BinaryExpr, BinaryModifier, BinaryOp, Expr, GroupModifier, Grouping, LabelReplace, LogExpr,
    LogRange, MetricExpr, RangeAggregation, RangeOp, Unwrap, UnwrapConversion, VectorAggregation,
    VectorMatching, VectorOp,
};
use crate::error::ParseError;
use crate::grammar::Rule;
use go::duration::Duration;

/// A built operand: metric, or a log query that is only valid at the top.
enum Node {
    Metric(MetricExpr),
    Log(LogExpr, usize),
}

/// Builds the `root` pair.
pub(crate) fn build_root(input: &str, root: Pair<'_, Rule>) -> Built<Expr> {
    let Some(m) = root.into_inner().find(|c| c.as_rule() == Rule::metric_expr) else {
        return Err(ParseError::Semantic("empty query".into()));
    };
    Ok(match metric_expr(input, m)? {
        Node::Log(l, _) => Expr::Log(l),
        Node::Metric(m) => Expr::Metric(m),
    })
}

/// Builds a metric expression that must not be a bare log query.
fn metric_only(input: &str, p: Pair<'_, Rule>) -> Built<MetricExpr> {
    match metric_expr(input, p)? {
        Node::Metric(m) => Ok(m),
        Node::Log(_, end) => Err(unexpected_at(input, end)),
    }
}

fn metric_expr(input: &str, p: Pair<'_, Rule>) -> Built<Node> {
    let mut it = p.into_inner();
    let Some(first) = it.next() else {
        return Err(ParseError::Semantic("empty expression".into()));
    };
    let lhs = operand(input, first)?;
    // Most expressions are one operand: no operator list to build.
    if it.peek().is_none() {
        return Ok(lhs);
    }
    let mut rest = Vec::new();
    while let (Some(op), Some(rhs)) = (it.next(), it.next()) {
        rest.push((infix(op)?, rhs));
    }
    let mut rest = rest.into_iter().peekable();
    climb(input, lhs, &mut rest, 0)
}

type Infix = (BinaryOp, BinaryModifier);

/// An operator name in lower case, copied only when it has upper-case letters
/// (keywords are case-insensitive, but nearly always written in lower case).
fn lower(s: &str) -> std::borrow::Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(s.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The function name an aggregation's text starts with (`range_op` and
/// `vector_op` are silent rules, so they have no pair).
fn leading_name(s: &str) -> &str {
    let end = s
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or(s.len());
    s.get(..end).unwrap_or_default()
}

fn prec(op: BinaryOp) -> (u8, bool) {
    use BinaryOp::*;
    match op {
        Or => (1, false),
        And | Unless => (2, false),
        Eq | Neq | Gt | Ge | Lt | Le => (3, false),
        Add | Sub => (4, false),
        Mul | Div | Mod => (5, false),
        Pow => (6, true),
    }
}

fn climb<'i>(
    input: &str,
    mut lhs: Node,
    rest: &mut std::iter::Peekable<impl Iterator<Item = (Infix, Pair<'i, Rule>)>>,
    min: u8,
) -> Built<Node> {
    while let Some(((op, _), _)) = rest.peek() {
        let (p, _) = prec(*op);
        if p < min.max(1) {
            break;
        }
        let Some(((op, modifier), rhs_pair)) = rest.next() else {
            break;
        };
        let mut rhs = operand(input, rhs_pair)?;
        while let Some(((next, _), _)) = rest.peek() {
            let (np, right) = prec(*next);
            if np > p || (right && np == p) {
                rhs = climb(input, rhs, rest, if np > p { p + 1 } else { p })?;
            } else {
                break;
            }
        }
        lhs = Node::Metric(binary(op, modifier, lhs, rhs)?);
    }
    Ok(lhs)
}

fn go_type(l: &LogExpr) -> &'static str {
    if l.pipeline.is_empty() {
        "*syntax.MatchersExpr"
    } else {
        "*syntax.PipelineExpr"
    }
}

/// Loki's `mustNewBinOpExpr`: operand checks, then literal folding.
fn binary(op: BinaryOp, modifier: BinaryModifier, lhs: Node, rhs: Node) -> Built<MetricExpr> {
    let sym = op.symbol();
    let lhs = match lhs {
        Node::Metric(m) => m,
        Node::Log(l, _) => {
            return Err(ParseError::Semantic(format!(
                "unexpected type for left leg of binary operation ({sym}): {}",
                go_type(&l)
            )));
        }
    };
    let rhs = match rhs {
        Node::Metric(m) => m,
        Node::Log(l, _) => {
            return Err(ParseError::Semantic(format!(
                "unexpected type for right leg of binary operation ({sym}): {}",
                go_type(&l)
            )));
        }
    };
    let logical = matches!(op, BinaryOp::Or | BinaryOp::And | BinaryOp::Unless);
    if logical {
        for (side, e) in [("left", &lhs), ("right", &rhs)] {
            if let MetricExpr::Literal(v) = e {
                return Err(ParseError::Semantic(format!(
                    "unexpected literal for {side} leg of logical/set binary operation ({sym}): {v:.6}"
                )));
            }
        }
    }
    if let (MetricExpr::Literal(a), MetricExpr::Literal(b)) = (&lhs, &rhs) {
        return Ok(MetricExpr::Literal(fold(op, *a, *b)));
    }
    Ok(MetricExpr::Binary(BinaryExpr {
        op,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
        modifier,
    }))
}

/// Constant folding of two literals, as Loki's `reduceBinOp`.
fn fold(op: BinaryOp, a: f64, b: f64) -> f64 {
    let t = |c: bool| if c { 1.0 } else { 0.0 };
    match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        // Loki answers NaN for any division or modulo by zero (not ±Inf).
        BinaryOp::Div | BinaryOp::Mod if b == 0.0 => f64::NAN,
        BinaryOp::Div => a / b,
        BinaryOp::Mod => a % b,
        BinaryOp::Pow => a.powf(b),
        BinaryOp::Eq => t(a == b),
        BinaryOp::Neq => t(a != b),
        BinaryOp::Gt => t(a > b),
        BinaryOp::Ge => t(a >= b),
        BinaryOp::Lt => t(a < b),
        BinaryOp::Le => t(a <= b),
        BinaryOp::Or | BinaryOp::And | BinaryOp::Unless => a,
    }
}

fn infix(p: Pair<'_, Rule>) -> Built<Infix> {
    let mut op = BinaryOp::Add;
    let mut m = BinaryModifier::default();
    for c in p.into_inner() {
        match c.as_rule() {
            Rule::bin_op => {
                op =
                    BinaryOp::from_symbol(&c.as_str().to_ascii_lowercase()).unwrap_or(BinaryOp::Add)
            }
            Rule::bool_mod => m.return_bool = true,
            Rule::matching => {
                let on = c.as_str().to_ascii_lowercase().starts_with("on");
                m.matching = Some(VectorMatching {
                    on,
                    labels: labels_of(c.into_inner())?,
                    group: None,
                });
            }
            Rule::group_mod => {
                let left = c.as_str().to_ascii_lowercase().starts_with("group_left");
                if let Some(vm) = m.matching.as_mut() {
                    vm.group = Some(GroupModifier {
                        left,
                        include: labels_of(c.into_inner())?,
                    });
                }
            }
            _ => {}
        }
    }
    Ok((op, m))
}

fn labels_of(it: Pairs<'_, Rule>) -> Built<Vec<String>> {
    let mut out = Vec::new();
    // `labels` is silent: its identifiers are direct children.
    for i in it.filter(|c| c.as_rule() == Rule::identifier) {
        out.push(super::ident(&i)?);
    }
    Ok(out)
}

fn grouping(p: Pair<'_, Rule>) -> Built<Grouping> {
    let without = p
        .as_str()
        .get(..7)
        .is_some_and(|w| w.eq_ignore_ascii_case("without"));
    Ok(Grouping {
        without,
        labels: labels_of(p.into_inner())?,
    })
}

fn operand(input: &str, p: Pair<'_, Rule>) -> Built<Node> {
    let end = p.as_span().end();
    Ok(Node::Metric(match p.as_rule() {
        Rule::log_expr => return Ok(Node::Log(log_expr(input, p)?, end)),
        Rule::paren_expr => match p.into_inner().next() {
            Some(inner) => return metric_expr(input, inner),
            None => return Err(ParseError::Semantic("empty parentheses".into())),
        },
        Rule::literal => MetricExpr::Literal(literal(p.as_str())?),
        Rule::vector_expr => {
            let n = p
                .into_inner()
                .next()
                .map(|n| n.as_str().to_string())
                .unwrap_or_default();
            MetricExpr::Vector(literal(&n)?)
        }
        Rule::range_agg => range_agg(input, p)?,
        Rule::vector_agg => vector_agg(input, p)?,
        Rule::label_replace => label_replace(input, p)?,
        _ => return Err(unexpected_at(input, p.as_span().start())),
    }))
}

fn label_replace(input: &str, p: Pair<'_, Rule>) -> Built<MetricExpr> {
    let mut inner = None;
    let mut strs = Vec::new();
    for c in p.into_inner() {
        match c.as_rule() {
            Rule::metric_expr => inner = Some(metric_only(input, c)?),
            Rule::string => strs.push(string(input, &c)?),
            _ => {}
        }
    }
    let (Some(inner), [dst, replacement, src, regex]) = (inner, strs.as_slice()) else {
        return Err(ParseError::Semantic("malformed label_replace".into()));
    };
    if let Err(e) = anchored_regex(regex) {
        return Err(ParseError::Semantic(format!(
            "invalid regex in label_replace: {e}"
        )));
    }
    Ok(MetricExpr::LabelReplace(LabelReplace {
        inner: Box::new(inner),
        dst: dst.clone(),
        replacement: replacement.clone(),
        src: src.clone(),
        regex: regex.clone(),
    }))
}

fn vector_agg(input: &str, p: Pair<'_, Rule>) -> Built<MetricExpr> {
    let op = VectorOp::from_name(&lower(leading_name(p.as_str()))).unwrap_or(VectorOp::Sum);
    let (mut param, mut inner, mut group) = (None, None, None);
    let mut inner_pair = None;
    for c in p.into_inner() {
        match c.as_rule() {
            Rule::number => param = Some(c.as_str().to_string()),
            Rule::metric_expr => inner_pair = Some(c),
            Rule::grouping => group = Some(grouping(c)?),
            _ => {}
        }
    }
    if let Some(c) = inner_pair {
        inner = Some(metric_only(input, c)?);
    }
    let name = op.name();
    let k = match op {
        VectorOp::Topk | VectorOp::Bottomk | VectorOp::ApproxTopk => {
            let Some(s) = param else {
                return Err(ParseError::Semantic(format!(
                    "parameter required for operation {name}"
                )));
            };
            let k: i64 = s
                .parse()
                .map_err(|_| ParseError::Semantic(format!("invalid parameter {name}({s},")))?;
            if k <= 0 {
                return Err(ParseError::Semantic(format!(
                    "invalid parameter (must be greater than 0) {name}({s}"
                )));
            }
            if op == VectorOp::ApproxTopk && group.is_some() {
                return Err(ParseError::Semantic(format!(
                    "grouping not allowed for {name} aggregation"
                )));
            }
            Some(k)
        }
        _ => {
            if let Some(s) = param {
                return Err(ParseError::Semantic(format!(
                    "unsupported parameter for operation {name}({s},"
                )));
            }
            None
        }
    };
    // `by ()` prints as nothing in Loki, so it is the same as no grouping.
    let group = group.filter(|g| g.without || !g.labels.is_empty());
    let inner = inner.ok_or_else(|| ParseError::Semantic("missing aggregation argument".into()))?;
    Ok(MetricExpr::VectorAggregation(VectorAggregation {
        op,
        param: k,
        inner: Box::new(inner),
        grouping: group,
    }))
}

fn range_agg(input: &str, p: Pair<'_, Rule>) -> Built<MetricExpr> {
    let op = RangeOp::from_name(&lower(leading_name(p.as_str()))).unwrap_or(RangeOp::Rate);
    let (mut param, mut range, mut group) = (None, None, None);
    for c in p.into_inner() {
        match c.as_rule() {
            Rule::number => param = Some(c.as_str().to_string()),
            Rule::log_range => range = Some(log_range(input, c)?),
            Rule::grouping => group = Some(grouping(c)?),
            _ => {}
        }
    }
    let name = op.name();
    let param = match param {
        Some(s) if op != RangeOp::QuantileOverTime => {
            return Err(ParseError::Semantic(format!("parameter {s} not supported for operation {name}")));
        }
        Some(s) => Some(literal(&s).map_err(|_| {
            ParseError::Semantic(format!(
                "invalid parameter for operation {name}: strconv.ParseFloat: parsing \"{s}\": invalid syntax"
            ))
        })?),
        None if op == RangeOp::QuantileOverTime => {
            return Err(ParseError::Semantic(format!("parameter required for operation {name}")));
        }
        None => None,
    };
    let range = range.ok_or_else(|| ParseError::Semantic("missing log range".into()))?;
    use RangeOp::*;
    if group.is_some()
        && !matches!(
            op,
            AvgOverTime
                | StddevOverTime
                | StdvarOverTime
                | QuantileOverTime
                | MaxOverTime
                | MinOverTime
                | FirstOverTime
                | LastOverTime
        )
    {
        return Err(ParseError::Semantic(format!(
            "grouping not allowed for {name} aggregation"
        )));
    }
    if range.unwrap.is_some() {
        if matches!(op, CountOverTime | BytesOverTime | BytesRate) {
            return Err(ParseError::Semantic(format!(
                "invalid aggregation {name} with unwrap"
            )));
        }
    } else if !matches!(
        op,
        BytesOverTime | BytesRate | CountOverTime | Rate | AbsentOverTime
    ) {
        return Err(ParseError::Semantic(format!(
            "invalid aggregation {name} without unwrap"
        )));
    }
    Ok(MetricExpr::RangeAggregation(RangeAggregation {
        op,
        param,
        range,
        grouping: group,
    }))
}

fn log_range(input: &str, p: Pair<'_, Rule>) -> Built<LogRange> {
    let mut sel = None;
    let mut stages = Vec::new();
    let (mut interval, mut offset, mut unwrap) = (None, None, None);
    for c in p.into_inner() {
        match c.as_rule() {
            Rule::log_range => return log_range(input, c),
            Rule::selector => sel = Some(selector(input, c)?),
            Rule::range => {
                let start = c.as_span().start();
                let text = c.as_str();
                let body = text
                    .strip_prefix('[')
                    .and_then(|t| t.strip_suffix(']'))
                    .unwrap_or_default();
                // Loki reports a range error at line 0 (a multi-character scan).
                let d = Duration::parse_prometheus(body).map_err(|e| ParseError::Syntax {
                    line: 0,
                    col: super::line_col(input, start).1,
                    msg: e.to_string(),
                })?;
                interval = Some(d);
            }
            Rule::offset => {
                let text = c
                    .into_inner()
                    .last()
                    .map(|d| d.as_str().to_string())
                    .unwrap_or_default();
                let d = Duration::parse_logql(&text)
                    .map_err(|e| ParseError::Semantic(e.to_string()))?;
                offset = Some(d).filter(|d| d.0 != 0);
            }
            Rule::unwrap => {
                if unwrap.is_some() {
                    return Err(unexpected_at(input, c.as_span().start()));
                }
                unwrap = Some(build_unwrap(input, c)?);
            }
            // `pipeline` is silent: any other child is a stage.
            _ => stage(input, c, &mut stages)?,
        }
    }
    let (Some(selector), Some(interval)) = (sel, interval) else {
        return Err(ParseError::Semantic("malformed log range".into()));
    };
    Ok(LogRange {
        log: LogExpr {
            selector,
            pipeline: stages,
        },
        interval,
        offset,
        unwrap,
    })
}

fn build_unwrap(input: &str, p: Pair<'_, Rule>) -> Built<Unwrap> {
    let mut conversion = UnwrapConversion::Plain;
    let mut label = String::new();
    let mut post_filters = Vec::new();
    for c in p.into_inner() {
        match c.as_rule() {
            Rule::conv_op => {
                conversion = match c.as_str().to_ascii_lowercase().as_str() {
                    "bytes" => UnwrapConversion::Bytes,
                    "duration" => UnwrapConversion::Duration,
                    _ => UnwrapConversion::DurationSeconds,
                }
            }
            Rule::identifier => label = super::ident(&c)?,
            Rule::label_filter => post_filters.push(label_filter(input, c)?),
            _ => {}
        }
    }
    Ok(Unwrap {
        conversion,
        label,
        post_filters,
    })
}

#[cfg(test)]
mod tests {
    use crate::ast::*;
    use go::duration::Duration;

    fn metric(q: &str) -> MetricExpr {
        match crate::parse(q) {
            Ok(Expr::Metric(m)) => m,
            other => panic!("{q}: {other:?}"),
        }
    }

    #[test]
    fn health_check_and_folding() {
        assert_eq!(
            metric("vector(1)+vector(1)"),
            MetricExpr::Binary(BinaryExpr {
                op: BinaryOp::Add,
                lhs: Box::new(MetricExpr::Vector(1.0)),
                rhs: Box::new(MetricExpr::Vector(1.0)),
                modifier: BinaryModifier::default(),
            })
        );
        assert_eq!(metric("1+2*3"), MetricExpr::Literal(7.0));
        assert_eq!(metric("2^3^2"), MetricExpr::Literal(512.0));
        assert_eq!(metric("1 > bool 2"), MetricExpr::Literal(0.0));
    }

    #[test]
    fn precedence_with_modifiers() {
        let m = metric(r#"vector(1) + vector(2) * on (a) group_left (b) vector(3)"#);
        let MetricExpr::Binary(b) = m else {
            panic!("not binary")
        };
        assert_eq!(b.op, BinaryOp::Add);
        let MetricExpr::Binary(r) = *b.rhs else {
            panic!("rhs not binary")
        };
        assert_eq!(r.op, BinaryOp::Mul);
        assert_eq!(
            r.modifier.matching,
            Some(VectorMatching {
                on: true,
                labels: vec!["a".into()],
                group: Some(GroupModifier {
                    left: true,
                    include: vec!["b".into()]
                })
            })
        );
    }

    #[test]
    fn spaces_inside_compound_atomic_rules() {
        // `grouping`, `json_stage` and `logfmt_stage` spell their spaces out.
        let spaced = r#"sum  by  (  a ,  b  ) (count_over_time({x = "y"}  | json  f = "g" ,  h | logfmt  --strict  k [5m]))"#;
        let compact = r#"sum by(a,b)(count_over_time({x="y"}|json f="g",h|logfmt --strict k[5m]))"#;
        assert_eq!(metric(spaced), metric(compact));
        for (spaced, compact) in [
            (
                r#"topk ( 5 , sum by ( a ) ( rate ( {x="y"} [5m] ) ) )"#,
                r#"topk(5,sum by(a)(rate({x="y"}[5m])))"#,
            ),
            (
                r#"quantile_over_time ( 0.9 , {x="y"} | unwrap l [5m] ) by ( a )"#,
                r#"quantile_over_time(0.9,{x="y"}|unwrap l[5m])by(a)"#,
            ),
            (
                r#"sum ( count_over_time ( ( {x="y"} |= "a" ) [5m] ) ) without ( b )"#,
                r#"sum(count_over_time(({x="y"}|="a")[5m]))without(b)"#,
            ),
        ] {
            assert_eq!(metric(spaced), metric(compact), "{spaced}");
        }
        for bad in [
            r#"sumx(rate({x="y"}[5m]))"#,
            r#"ratex({x="y"}[5m])"#,
            r#"sum(rate({x="y"}[5m])) byx (a)"#,
        ] {
            assert!(crate::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            metric("vector(1) + on ( a , b ) group_left ( c ) vector(2)"),
            metric("vector(1)+on(a,b)group_left(c)vector(2)")
        );
        assert_eq!(
            metric(compact).to_string(),
            r#"sum by (a,b)(count_over_time({x="y"} | json f="g",h="h" | logfmt --strict k="k"[5m]))"#
        );
        for bad in [
            r#"sum byx (a) (rate({x="y"}[5m]))"#,
            r#"count_over_time({x="y"} | jsonx [5m])"#,
        ] {
            assert!(crate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn range_and_vector_aggregations() {
        let m = metric(
            r#"topk by (app) (5, quantile_over_time(0.99, {a="b"} | json | unwrap duration(lat) | __error__="" [5m] offset 1h) by (app))"#,
        );
        let MetricExpr::VectorAggregation(v) = m else {
            panic!("not a vector aggregation")
        };
        assert_eq!((v.op, v.param), (VectorOp::Topk, Some(5)));
        assert_eq!(
            v.grouping,
            Some(Grouping {
                without: false,
                labels: vec!["app".into()]
            })
        );
        let MetricExpr::RangeAggregation(r) = *v.inner else {
            panic!("not a range aggregation")
        };
        assert_eq!((r.op, r.param), (RangeOp::QuantileOverTime, Some(0.99)));
        assert_eq!(r.range.interval, Duration(300_000_000_000));
        assert_eq!(r.range.offset, Some(Duration(3_600_000_000_000)));
        let u = r.range.unwrap.unwrap();
        assert_eq!(
            (u.conversion, u.label.as_str(), u.post_filters.len()),
            (UnwrapConversion::Duration, "lat", 1)
        );
    }
}
