//! LogsQL filters: the part of a query before the first pipe, and the body of
//! `| filter` pipes.

use std::fmt;

use crate::quote::{write_field, write_quoted};

/// A LogsQL filter expression. `Display` prints valid LogsQL.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `*`: every entry.
    All,
    /// `!*`: no entry (Loki's `!= ""` excludes every line).
    Nothing,
    /// `{app="x", env=~"re"}`: a stream filter; regexes are anchored by VictoriaLogs.
    Stream(Vec<StreamMatcher>),
    /// `{app="x", env="p" or app="y"}`: streams matching any group (`,` binds
    /// tighter than `or`). One stream filter is resolved once against the
    /// stream index; the same groups as separate `{…} or {…}` filters are
    /// evaluated one by one (VictoriaLogs spent about twice the CPU on a
    /// 14-branch `service_name` selector written that way).
    StreamAny(Vec<Vec<StreamMatcher>>),
    /// `f:="v"`: the field equals the value exactly.
    Exact {
        /// The field name.
        field: String,
        /// The value.
        value: String,
    },
    /// `f:""`: the field is empty or missing.
    Empty(String),
    /// `f:*`: the field is present and non-empty.
    NonEmpty(String),
    /// `f:~"re"`: the RE2 regex matches somewhere in the field (unanchored).
    Regex {
        /// The field name.
        field: String,
        /// The regex.
        regex: String,
    },
    /// `f:"p"`: the phrase occurs in the field, bounded by non-word characters
    /// where it starts or ends with a word character (VictoriaLogs' tokens are
    /// `[A-Za-z0-9_]` and Unicode letters and digits).
    Phrase {
        /// The field name.
        field: String,
        /// The phrase.
        phrase: String,
    },
    /// `f:seq("a","b")`: the phrases occur in this order, each after the end
    /// of the one before (so `seq("x","x")` means two occurrences of `x`).
    Seq {
        /// The field name.
        field: String,
        /// The phrases, in order.
        phrases: Vec<String>,
    },
    /// `f:="p"*`: the field's value starts with `p`.
    ExactPrefix {
        /// The field name.
        field: String,
        /// The prefix.
        prefix: String,
    },
    /// `f:>5`, `f:range[5,5]`: numeric comparison; non-numeric values never match.
    Range {
        /// The field name.
        field: String,
        /// The comparison.
        op: RangeOp,
        /// The bound (durations in nanoseconds, sizes in bytes).
        value: f64,
    },
    /// `a and b and …` (empty means [`Filter::All`]).
    And(Vec<Filter>),
    /// `a or b or …` (empty means [`Filter::Nothing`]).
    Or(Vec<Filter>),
    /// `!a`.
    Not(Box<Filter>),
}

/// A matcher of a stream filter.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamMatcher {
    /// The stream label.
    pub label: String,
    /// The operator.
    pub op: StreamOp,
    /// The value or (anchored) regex.
    pub value: String,
}

/// A stream filter operator, with Prometheus semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamOp {
    /// `=`
    Eq,
    /// `!=`
    Neq,
    /// `=~` (anchored)
    Re,
    /// `!~` (anchored)
    Nre,
}

/// A numeric comparison of a range filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RangeOp {
    /// `f:>v`
    Gt,
    /// `f:>=v`
    Ge,
    /// `f:<v`
    Lt,
    /// `f:<=v`
    Le,
    /// `f:range[v,v]`
    Eq,
}

impl Filter {
    /// This filter over other fields: every field name `n` read as
    /// `rename(n)`. `None` when it holds a stream filter, whose labels are
    /// not fields and cannot be renamed.
    pub(crate) fn renamed(&self, rename: &dyn Fn(&str) -> String) -> Option<Filter> {
        let each = |items: &[Filter]| -> Option<Vec<Filter>> {
            items.iter().map(|f| f.renamed(rename)).collect()
        };
        Some(match self {
            Filter::All => Filter::All,
            Filter::Nothing => Filter::Nothing,
            Filter::Stream(_) | Filter::StreamAny(_) => return None,
            Filter::Exact { field, value } => Filter::Exact {
                field: rename(field),
                value: value.clone(),
            },
            Filter::Empty(field) => Filter::Empty(rename(field)),
            Filter::NonEmpty(field) => Filter::NonEmpty(rename(field)),
            Filter::Regex { field, regex } => Filter::Regex {
                field: rename(field),
                regex: regex.clone(),
            },
            Filter::Phrase { field, phrase } => Filter::Phrase {
                field: rename(field),
                phrase: phrase.clone(),
            },
            Filter::Seq { field, phrases } => Filter::Seq {
                field: rename(field),
                phrases: phrases.clone(),
            },
            Filter::ExactPrefix { field, prefix } => Filter::ExactPrefix {
                field: rename(field),
                prefix: prefix.clone(),
            },
            Filter::Range { field, op, value } => Filter::Range {
                field: rename(field),
                op: *op,
                value: *value,
            },
            Filter::And(items) => Filter::And(each(items)?),
            Filter::Or(items) => Filter::Or(each(items)?),
            Filter::Not(inner) => Filter::Not(Box::new(inner.renamed(rename)?)),
        })
    }

    /// Conjunction that drops `*` operands and flattens nested `and`s.
    pub fn and(items: impl IntoIterator<Item = Filter>) -> Filter {
        let mut out = Vec::new();
        for f in items {
            match f {
                Filter::All => {}
                Filter::Nothing => return Filter::Nothing,
                Filter::And(inner) => out.extend(inner),
                f => out.push(f),
            }
        }
        match out.len() {
            0 => Filter::All,
            1 => out.pop().unwrap_or(Filter::All),
            _ => Filter::And(out),
        }
    }

    /// Disjunction that drops `!*` operands and flattens nested `or`s.
    pub fn or(items: impl IntoIterator<Item = Filter>) -> Filter {
        let mut out = Vec::new();
        for f in items {
            match f {
                Filter::Nothing => {}
                Filter::All => return Filter::All,
                Filter::Or(inner) => out.extend(inner),
                f => out.push(f),
            }
        }
        match out.len() {
            0 => Filter::Nothing,
            1 => out.pop().unwrap_or(Filter::Nothing),
            _ => Filter::Or(out),
        }
    }

    /// Streams matching any of `groups`, as one stream filter: no group is
    /// [`Filter::Nothing`], one is a plain [`Filter::Stream`], an empty group
    /// matches every stream.
    pub fn stream_any(mut groups: Vec<Vec<StreamMatcher>>) -> Filter {
        if groups.iter().any(Vec::is_empty) {
            return Filter::All;
        }
        match groups.len() {
            0 => Filter::Nothing,
            1 => Filter::Stream(groups.pop().unwrap_or_default()),
            _ => Filter::StreamAny(groups),
        }
    }

    /// Negation, simplifying `!*`, `!!*` and double negation.
    #[allow(clippy::should_implement_trait)]
    pub fn not(f: Filter) -> Filter {
        match f {
            Filter::All => Filter::Nothing,
            Filter::Nothing => Filter::All,
            Filter::Not(inner) => *inner,
            f => Filter::Not(Box::new(f)),
        }
    }

    fn is_compound(&self) -> bool {
        matches!(self, Filter::And(v) | Filter::Or(v) if v.len() > 1)
    }
}

fn write_operand(f: &mut fmt::Formatter<'_>, item: &Filter) -> fmt::Result {
    if item.is_compound() {
        write!(f, "({item})")
    } else {
        write!(f, "{item}")
    }
}

fn write_number(f: &mut fmt::Formatter<'_>, v: f64) -> fmt::Result {
    if v.is_infinite() {
        f.write_str(if v > 0.0 { "Inf" } else { "-Inf" })
    } else {
        write!(f, "{v}")
    }
}

/// `a="x", b=~"y"`: the matchers of one stream-filter group.
fn write_group(f: &mut fmt::Formatter<'_>, ms: &[StreamMatcher]) -> fmt::Result {
    for (i, m) in ms.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{m}")?;
    }
    Ok(())
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Filter::All => f.write_str("*"),
            Filter::Nothing => f.write_str("!*"),
            Filter::Stream(ms) if ms.is_empty() => f.write_str("*"),
            Filter::Stream(ms) => {
                f.write_str("{")?;
                write_group(f, ms)?;
                f.write_str("}")
            }
            Filter::StreamAny(groups) if groups.is_empty() => f.write_str("!*"),
            Filter::StreamAny(groups) if groups.iter().any(Vec::is_empty) => f.write_str("*"),
            Filter::StreamAny(groups) => {
                f.write_str("{")?;
                for (i, g) in groups.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" or ")?;
                    }
                    write_group(f, g)?;
                }
                f.write_str("}")
            }
            Filter::Exact { field, value } => {
                write_field(f, field)?;
                f.write_str(":=")?;
                write_quoted(f, value)
            }
            Filter::Empty(field) => {
                write_field(f, field)?;
                f.write_str(":\"\"")
            }
            Filter::NonEmpty(field) => {
                write_field(f, field)?;
                f.write_str(":*")
            }
            Filter::Regex { field, regex } => {
                write_field(f, field)?;
                f.write_str(":~")?;
                write_quoted(f, regex)
            }
            Filter::Phrase { field, phrase } => {
                write_field(f, field)?;
                f.write_str(":")?;
                write_quoted(f, phrase)
            }
            Filter::Seq { field, phrases } => {
                write_field(f, field)?;
                f.write_str(":seq(")?;
                for (i, p) in phrases.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write_quoted(f, p)?;
                }
                f.write_str(")")
            }
            Filter::ExactPrefix { field, prefix } => {
                write_field(f, field)?;
                f.write_str(":=")?;
                write_quoted(f, prefix)?;
                f.write_str("*")
            }
            Filter::Range { field, op, value } => {
                write_field(f, field)?;
                match op {
                    RangeOp::Gt => f.write_str(":>")?,
                    RangeOp::Ge => f.write_str(":>=")?,
                    RangeOp::Lt => f.write_str(":<")?,
                    RangeOp::Le => f.write_str(":<=")?,
                    RangeOp::Eq => {
                        f.write_str(":range[")?;
                        write_number(f, *value)?;
                        f.write_str(",")?;
                        write_number(f, *value)?;
                        return f.write_str("]");
                    }
                }
                write_number(f, *value)
            }
            Filter::And(items) | Filter::Or(items) if items.is_empty() => {
                f.write_str(if matches!(self, Filter::And(_)) {
                    "*"
                } else {
                    "!*"
                })
            }
            Filter::And(items) | Filter::Or(items) => {
                let sep = if matches!(self, Filter::And(_)) {
                    " and "
                } else {
                    " or "
                };
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(sep)?;
                    }
                    write_operand(f, item)?;
                }
                Ok(())
            }
            Filter::Not(inner) => {
                f.write_str("!")?;
                if matches!(**inner, Filter::Not(_)) {
                    write!(f, "({inner})")
                } else {
                    write_operand(f, inner)
                }
            }
        }
    }
}

impl fmt::Display for StreamMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ident =
            !self.label.is_empty()
                && self.label.chars().enumerate().all(|(i, c)| {
                    c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit())
                });
        if ident {
            f.write_str(&self.label)?;
        } else {
            write_quoted(f, &self.label)?;
        }
        f.write_str(match self.op {
            StreamOp::Eq => "=",
            StreamOp::Neq => "!=",
            StreamOp::Re => "=~",
            StreamOp::Nre => "!~",
        })?;
        write_quoted(f, &self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(field: &str, value: &str) -> Filter {
        Filter::Exact {
            field: field.into(),
            value: value.into(),
        }
    }

    #[test]
    fn prints_atoms() {
        assert_eq!(exact("a", "v\"").to_string(), r#""a":="v\"""#);
        assert_eq!(Filter::Empty("a".into()).to_string(), r#""a":"""#);
        assert_eq!(Filter::NonEmpty("a.b".into()).to_string(), r#""a.b":*"#);
        let re = Filter::Regex {
            field: "_msg".into(),
            regex: r"\[E\]".into(),
        };
        assert_eq!(re.to_string(), r#"_msg:~"\\[E\\]""#);
        let r = Filter::Range {
            field: "n".into(),
            op: RangeOp::Eq,
            value: 2.5,
        };
        assert_eq!(r.to_string(), r#""n":range[2.5,2.5]"#);
        let p = Filter::Phrase {
            field: "_msg".into(),
            phrase: "a b".into(),
        };
        assert_eq!(p.to_string(), r#"_msg:"a b""#);
        let q = Filter::Seq {
            field: "_msg".into(),
            phrases: vec!["x".into(), "y\"".into()],
        };
        assert_eq!(q.to_string(), r#"_msg:seq("x","y\"")"#);
        let e = Filter::ExactPrefix {
            field: "p.v".into(),
            prefix: "[".into(),
        };
        assert_eq!(e.to_string(), r#""p.v":="["*"#);
        let r = Filter::Range {
            field: "n".into(),
            op: RangeOp::Le,
            value: -1e-7,
        };
        assert_eq!(r.to_string(), r#""n":<=-0.0000001"#);
    }

    #[test]
    fn prints_stream_filter() {
        let s = Filter::Stream(vec![
            StreamMatcher {
                label: "app".into(),
                op: StreamOp::Eq,
                value: "a\"b".into(),
            },
            StreamMatcher {
                label: "env".into(),
                op: StreamOp::Nre,
                value: "p.*".into(),
            },
        ]);
        assert_eq!(s.to_string(), r#"{app="a\"b", env!~"p.*"}"#);
    }

    #[test]
    fn parenthesises_nested_boolean_operands() {
        let f = Filter::and([
            exact("a", "1"),
            Filter::or([
                exact("b", "2"),
                Filter::and([exact("c", "3"), exact("d", "4")]),
            ]),
            Filter::not(Filter::or([exact("e", "5"), exact("f", "6")])),
        ]);
        assert_eq!(
            f.to_string(),
            r#""a":="1" and ("b":="2" or ("c":="3" and "d":="4")) and !("e":="5" or "f":="6")"#
        );
    }

    #[test]
    fn constructors_simplify_constants() {
        assert_eq!(Filter::and([Filter::All, exact("a", "1")]), exact("a", "1"));
        assert_eq!(
            Filter::and([Filter::Nothing, exact("a", "1")]),
            Filter::Nothing
        );
        assert_eq!(
            Filter::or([Filter::Nothing, exact("a", "1")]),
            exact("a", "1")
        );
        assert_eq!(Filter::or([Filter::All, exact("a", "1")]), Filter::All);
        assert_eq!(Filter::not(Filter::not(exact("a", "1"))), exact("a", "1"));
        assert_eq!(Filter::and([]).to_string(), "*");
        assert_eq!(Filter::or([]).to_string(), "!*");
    }
}
