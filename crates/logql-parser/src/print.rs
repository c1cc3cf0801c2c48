//! `Display` for every AST node, printing exactly what Loki's `String()` prints
//! (pkg/logql/syntax/ast.go), which `/loki/api/v1/format_query` returns.

use std::fmt::{self, Display, Formatter};

use crate::ast::*;
use crate::regex_simplify::stays_regex;
use go::humanize::format_bytes;
use go::strconv::quote as go_quote;

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Log(l) => l.fmt(f),
            Expr::Metric(m) => m.fmt(f),
        }
    }
}

impl Display for LogExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.selector.fmt(f)?;
        for s in &self.pipeline {
            write!(f, " {s}")?;
        }
        Ok(())
    }
}

impl Display for Selector {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, m) in self.matchers.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            m.fmt(f)?;
        }
        f.write_str("}")
    }
}

impl Display for MatchOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MatchOp::Eq => "=",
            MatchOp::Neq => "!=",
            MatchOp::Re => "=~",
            MatchOp::Nre => "!~",
        })
    }
}

impl Display for Matcher {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}{}",
            label_name(&self.name),
            self.op,
            go_quote(&self.value)
        )
    }
}

/// A label name as Prometheus prints it in a matcher: quoted unless it is a
/// classic `[a-zA-Z_][a-zA-Z0-9_]*` name (Loki accepts any Unicode letters).
fn label_name(name: &str) -> std::borrow::Cow<'_, str> {
    let classic = name
        .chars()
        .enumerate()
        .all(|(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()));
    if classic && !name.is_empty() {
        name.into()
    } else {
        go_quote(name).into()
    }
}

impl Display for LineFilterOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LineFilterOp::Contains => "|=",
            LineFilterOp::NotContains => "!=",
            LineFilterOp::Regex => "|~",
            LineFilterOp::NotRegex => "!~",
            LineFilterOp::Pattern => "|>",
            LineFilterOp::NotPattern => "!>",
        })
    }
}

impl Display for LineFilterValue {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            LineFilterValue::Literal(s) => f.write_str(&go_quote(s)),
            LineFilterValue::Ip(s) => write!(f, "ip({})", go_quote(s)),
        }
    }
}

impl Display for LineFilter {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.op)?;
        for (i, v) in self.values.iter().enumerate() {
            if i > 0 {
                f.write_str(" or")?;
            }
            write!(f, " {v}")?;
        }
        Ok(())
    }
}

impl Display for Stage {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Stage::LineFilter(l) => l.fmt(f),
            Stage::Parser(p) => p.fmt(f),
            Stage::LabelFilter(l) => write!(f, "| {l}"),
            Stage::LineFormat(t) => write!(f, "| line_format {}", go_quote(t)),
            Stage::LabelFormat(ops) => {
                f.write_str("| label_format ")?;
                for (i, op) in ops.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    match op {
                        LabelFormatOp::Rename { dst, src } => write!(f, "{dst}={src}")?,
                        LabelFormatOp::Template { dst, template } => {
                            write!(f, "{dst}={}", go_quote(template))?
                        }
                    }
                }
                Ok(())
            }
            Stage::Drop(items) => write!(f, "| drop {}", join_selectors(items)),
            Stage::Keep(items) => write!(f, "| keep {}", join_selectors(items)),
            Stage::Decolorize => f.write_str("| decolorize"),
        }
    }
}

fn join_selectors(items: &[LabelSelector]) -> String {
    items
        .iter()
        .map(|i| match i {
            LabelSelector::Name(n) => n.clone(),
            LabelSelector::Matcher(m) => m.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn write_extractions(f: &mut Formatter<'_>, ex: &[LabelExtraction]) -> fmt::Result {
    for (i, e) in ex.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(
            f,
            "{}={}",
            e.name,
            go_quote(e.expr.as_deref().unwrap_or(&e.name))
        )?;
    }
    Ok(())
}

impl Display for Parser {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Parser::Json(ex) if ex.is_empty() => f.write_str("| json"),
            Parser::Json(ex) => {
                f.write_str("| json ")?;
                write_extractions(f, ex)
            }
            Parser::Logfmt {
                strict,
                keep_empty,
                extractions,
            } if extractions.is_empty() => {
                f.write_str("| logfmt")?;
                if *strict {
                    f.write_str(" --strict")?;
                }
                if *keep_empty {
                    f.write_str(" --keep-empty")?;
                }
                Ok(())
            }
            Parser::Logfmt {
                strict,
                keep_empty,
                extractions,
            } => {
                f.write_str("| logfmt ")?;
                if *strict {
                    f.write_str("--strict ")?;
                }
                if *keep_empty {
                    f.write_str("--keep-empty ")?;
                }
                write_extractions(f, extractions)
            }
            Parser::Regexp(r) => write!(f, "| regexp {}", go_quote(r)),
            Parser::Pattern(p) => write!(f, "| pattern {}", go_quote(p)),
            Parser::Unpack => f.write_str("| unpack"),
        }
    }
}

impl Display for CmpOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CmpOp::Eq => "==",
            CmpOp::Neq => "!=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
        })
    }
}

impl Display for LabelFilter {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            LabelFilter::And(a, b) => write!(f, "( {a} , {b} )"),
            LabelFilter::Or(a, b) => write!(f, "( {a} or {b} )"),
            LabelFilter::Paren(a) => a.fmt(f),
            LabelFilter::Matcher(m) if m.op == MatchOp::Re && stays_regex(&m.value) => {
                // Loki prints a compiled regex filter with backticks unless it contains one.
                if m.value.contains('`') {
                    m.fmt(f)
                } else {
                    // Loki prints this form with the bare name, even a Unicode one.
                    write!(f, "{}{}`{}`", m.name, m.op, m.value)
                }
            }
            LabelFilter::Matcher(m) => m.fmt(f),
            LabelFilter::Number { name, op, value } => write!(f, "{name}{op}{value}"),
            LabelFilter::Duration { name, op, value } => {
                write!(f, "{name}{op}{}", value.to_go_string())
            }
            LabelFilter::Bytes { name, op, value } => {
                write!(f, "{name}{op}{}", format_bytes(*value))
            }
            LabelFilter::Ip { name, op, value } => write!(f, "{name}{op}ip({})", go_quote(value)),
        }
    }
}

impl Display for MetricExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            MetricExpr::RangeAggregation(r) => r.fmt(f),
            MetricExpr::VectorAggregation(v) => v.fmt(f),
            MetricExpr::Binary(b) => b.fmt(f),
            MetricExpr::Literal(v) => f.write_str(&go_float_v(*v)),
            MetricExpr::Vector(v) => write!(f, "vector({v:.6})"),
            MetricExpr::LabelReplace(l) => write!(
                f,
                "label_replace({},{},{},{},{})",
                l.inner,
                go_quote(&l.dst),
                go_quote(&l.replacement),
                go_quote(&l.src),
                go_quote(&l.regex)
            ),
        }
    }
}

/// Go's `fmt.Sprint(float64)`: shortest digits, exponent form outside [1e-4, 1e21).
pub(crate) fn go_float_v(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e21).contains(&a) {
        let s = format!("{v:e}");
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    format!("{v}")
}

impl Display for Grouping {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let kw = if self.without { "without" } else { "by" };
        write!(f, " {kw} ({})", self.labels.join(","))
    }
}

impl Display for Unwrap {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.conversion {
            UnwrapConversion::Plain => write!(f, " | unwrap {}", self.label)?,
            UnwrapConversion::Bytes => write!(f, " | unwrap bytes({})", self.label)?,
            UnwrapConversion::Duration => write!(f, " | unwrap duration({})", self.label)?,
            UnwrapConversion::DurationSeconds => {
                write!(f, " | unwrap duration_seconds({})", self.label)?
            }
        }
        for p in &self.post_filters {
            write!(f, " | {p}")?;
        }
        Ok(())
    }
}

impl Display for LogRange {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.log.fmt(f)?;
        if let Some(u) = &self.unwrap {
            u.fmt(f)?;
        }
        write!(f, "[{}]", self.interval.to_prometheus_string())?;
        if let Some(o) = self.offset.filter(|o| o.0 != 0) {
            write!(f, " offset {}", o.to_go_string())?;
        }
        Ok(())
    }
}

impl Display for RangeAggregation {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.op.name())?;
        if let Some(p) = self.param {
            write!(f, "{p},")?;
        }
        write!(f, "{})", self.range)?;
        if let Some(g) = &self.grouping {
            g.fmt(f)?;
        }
        Ok(())
    }
}

impl Display for VectorAggregation {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.op.name())?;
        if let Some(g) = self
            .grouping
            .as_ref()
            .filter(|g| g.without || !g.labels.is_empty())
        {
            g.fmt(f)?;
        }
        match self.param {
            Some(k) => write!(f, "({k},{})", self.inner),
            None => write!(f, "({})", self.inner),
        }
    }
}

impl Display for BinaryExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut op = self.op.symbol().to_string();
        if self.modifier.return_bool {
            op.push_str(" bool");
        }
        if let Some(m) = self
            .modifier
            .matching
            .as_ref()
            .filter(|m| m.on || !m.labels.is_empty())
        {
            let group = match &m.group {
                None => String::new(),
                Some(g) => {
                    let kw = if g.left { "group_left" } else { "group_right" };
                    if g.include.is_empty() {
                        kw.to_string()
                    } else {
                        format!("{kw} ({})", g.include.join(","))
                    }
                }
            };
            let on = if m.on { "on" } else { "ignoring" };
            op = format!("{op} {on} ({}) {group}", m.labels.join(","));
        }
        write!(f, "({} {op} {})", self.lhs, self.rhs)
    }
}

#[cfg(test)]
mod tests {
    fn fmt(q: &str) -> String {
        crate::parse(q)
            .map(|e| e.to_string())
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn prints_like_loki() {
        assert_eq!(
            fmt(r#"{ app = `a`,b!~"c" }|=`x` or "y"!="z""#),
            r#"{app="a", b!~"c"} |= "x" or "y" != "z""#
        );
        assert_eq!(
            fmt(r#"{a="b"} | json x, y="z" | logfmt --strict"#),
            r#"{a="b"} | json x="x",y="z" | logfmt --strict"#
        );
        assert_eq!(
            fmt(r#"{a="b"} | x>1 and y=~"a.+" or d<=250ms, s>10KB"#),
            r#"{a="b"} | ( ( x>1 , y=~`a.+` ) or ( d<=250ms , s>10kB ) )"#
        );
        assert_eq!(
            fmt("vector(1)+vector(1)"),
            "(vector(1.000000) + vector(1.000000))"
        );
        assert_eq!(fmt("1+1"), "2");
        assert_eq!(
            fmt(
                r#"sum by (a) (rate({a="b"}[1h30m] offset 5m)) / on (a) group_left count(rate({a="b"}[5m]))"#
            ),
            r#"(sum by (a)(rate({a="b"}[1h30m] offset 5m0s)) / on (a) group_left count(rate({a="b"}[5m])))"#
        );
    }
}
