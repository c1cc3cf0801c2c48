//! Label filters with Loki's conversion rules and error behaviour
//! (grafana/loki `pkg/logql/log/label_filter.go`):
//!
//! * string matchers read `""` for a missing label and the error for
//!   `__error__`; `=~`/`!~` match the whole value (`.` matches newlines);
//! * numeric, duration and bytes comparisons drop an entry whose label is
//!   missing, keep an entry whose value fails to convert and tag it
//!   `__error__=LabelFilterErr` with the conversion error in
//!   `__error_details__` (unless an error is already set);
//! * `ip()` comparisons keep every entry that already has an error;
//! * `and` evaluates both sides, `or` stops at a true left side.

use logql_parser::{CmpOp, LabelFilter, MatchOp, Matcher};
use regex::Regex;

use super::ip::{self, IpMatcher};
use super::labels::LabelsBuilder;

/// Loki's error label value for failed conversions.
pub const LABEL_FILTER_ERR: &str = "LabelFilterErr";

/// A compiled string matcher (also used by `drop`/`keep`).
#[derive(Debug, Clone)]
pub struct StrMatcher {
    /// The label name.
    pub name: String,
    op: MatchOp,
    value: String,
    re: Option<Pattern>,
}

/// A compiled regex, or the two patterns Grafana sends all the time
/// (`=~".+"`, `=~".*"`) answered without building a regex per request.
#[derive(Debug, Clone)]
enum Pattern {
    /// `.*`: every value.
    Any,
    /// `.+`: every non-empty value.
    NonEmpty,
    /// Anything else, anchored.
    Regex(Regex),
}

impl Pattern {
    fn new(re: &str) -> Result<Self, String> {
        Ok(match re {
            ".*" => Pattern::Any,
            ".+" => Pattern::NonEmpty,
            _ => Pattern::Regex(
                Regex::new(&format!("^(?s:{re})$"))
                    .map_err(|e| format!("error parsing regexp: {e}"))?,
            ),
        })
    }

    fn is_match(&self, v: &str) -> bool {
        match self {
            Pattern::Any => true,
            Pattern::NonEmpty => !v.is_empty(),
            Pattern::Regex(r) => r.is_match(v),
        }
    }
}

impl StrMatcher {
    /// Compiles a matcher; regexes are anchored as Prometheus anchors them.
    ///
    /// # Errors
    /// The regex compile error.
    pub fn new(m: &Matcher) -> Result<Self, String> {
        let re = match m.op {
            MatchOp::Re | MatchOp::Nre => Some(Pattern::new(&m.value)?),
            _ => None,
        };
        Ok(Self {
            name: m.name.clone(),
            op: m.op,
            value: m.value.clone(),
            re,
        })
    }

    /// Whether `v` matches.
    pub fn matches(&self, v: &str) -> bool {
        match (self.op, &self.re) {
            (MatchOp::Eq, _) => v == self.value,
            (MatchOp::Neq, _) => v != self.value,
            (MatchOp::Re, Some(r)) => r.is_match(v),
            (MatchOp::Nre, Some(r)) => !r.is_match(v),
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conv {
    Number,
    Duration,
    Bytes,
}

/// A compiled label filter.
#[derive(Debug, Clone)]
pub enum LabelPred {
    /// Both sides (both evaluated, as Loki does).
    And(Box<LabelPred>, Box<LabelPred>),
    /// Either side.
    Or(Box<LabelPred>, Box<LabelPred>),
    /// A string matcher.
    Str(StrMatcher),
    /// A converted comparison.
    Cmp {
        /// The label.
        name: String,
        /// The comparison.
        op: CmpOp,
        /// The right side (ns for durations, bytes for sizes).
        value: f64,
        /// How the label value converts.
        conv: ConvKind,
    },
    /// `x = ip(…)` / `x != ip(…)`.
    Ip {
        /// The label.
        name: String,
        /// `!=`
        negate: bool,
        /// The addresses.
        matcher: IpMatcher,
    },
}

/// How a comparison converts the label value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvKind(Conv);

impl LabelPred {
    /// Compiles a filter.
    ///
    /// # Errors
    /// An invalid regex or `ip()` pattern.
    pub fn new(f: &LabelFilter) -> Result<Self, String> {
        Ok(match f {
            LabelFilter::And(a, b) => Self::And(Box::new(Self::new(a)?), Box::new(Self::new(b)?)),
            LabelFilter::Or(a, b) => Self::Or(Box::new(Self::new(a)?), Box::new(Self::new(b)?)),
            LabelFilter::Paren(inner) => Self::new(inner)?,
            LabelFilter::Matcher(m) => Self::Str(StrMatcher::new(m)?),
            LabelFilter::Number { name, op, value } => Self::Cmp {
                name: name.clone(),
                op: *op,
                value: *value,
                conv: ConvKind(Conv::Number),
            },
            LabelFilter::Duration { name, op, value } => Self::Cmp {
                name: name.clone(),
                op: *op,
                value: value.as_nanos() as f64,
                conv: ConvKind(Conv::Duration),
            },
            LabelFilter::Bytes { name, op, value } => Self::Cmp {
                name: name.clone(),
                op: *op,
                value: go::humanize::effective_bytes(*value) as f64,
                conv: ConvKind(Conv::Bytes),
            },
            LabelFilter::Ip { name, op, value } => Self::Ip {
                name: name.clone(),
                negate: *op == MatchOp::Neq,
                matcher: ip::parse(value)?,
            },
        })
    }

    /// Evaluates the filter; may set the error labels.
    pub fn eval(&self, lbs: &mut LabelsBuilder) -> bool {
        match self {
            Self::And(a, b) => {
                let l = a.eval(lbs);
                let r = b.eval(lbs);
                l && r
            }
            Self::Or(a, b) => a.eval(lbs) || b.eval(lbs),
            Self::Str(m) => m.matches(lbs.value(&m.name)),
            Self::Cmp {
                name,
                op,
                value,
                conv,
            } => {
                let Some(v) = lbs.get(name) else {
                    return false;
                };
                match convert(v, conv.0) {
                    Ok(x) => compare(x, *op, *value),
                    Err(e) => {
                        if !lbs.has_err() {
                            lbs.set_err(LABEL_FILTER_ERR, Some(&e));
                        }
                        true
                    }
                }
            }
            Self::Ip {
                name,
                negate,
                matcher,
            } => {
                if lbs.has_err() {
                    return true;
                }
                let Some(v) = lbs.get(name) else {
                    return false;
                };
                matcher.matches_in(v) != *negate
            }
        }
    }
}

fn compare(x: f64, op: CmpOp, v: f64) -> bool {
    match op {
        CmpOp::Eq => x == v,
        CmpOp::Neq => x != v,
        CmpOp::Gt => x > v,
        CmpOp::Ge => x >= v,
        CmpOp::Lt => x < v,
        CmpOp::Le => x <= v,
    }
}

fn convert(v: &str, conv: Conv) -> Result<f64, String> {
    match conv {
        Conv::Number => go::strconv::parse_float(v).map_err(|e| e.to_string()),
        Conv::Duration => logql_parser::Duration::parse_go(v)
            .map(|d| d.as_nanos() as f64)
            .map_err(|e| e.to_string()),
        Conv::Bytes => go::humanize::try_parse_bytes(v)
            .map(|b| b as f64)
            .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::labels::{Category, ERROR, ERROR_DETAILS};

    fn builder(pairs: &[(&str, &str)]) -> LabelsBuilder {
        let mut b = LabelsBuilder::new();
        b.reset([("app", "api")]);
        for (k, v) in pairs {
            b.set(Category::Parsed, k, v);
        }
        b
    }

    fn num(name: &str, op: CmpOp, value: f64) -> LabelPred {
        LabelPred::new(&LabelFilter::Number {
            name: name.into(),
            op,
            value,
        })
        .unwrap()
    }

    #[test]
    fn match_all_patterns_agree_with_the_regex() {
        let values = ["", "a", "\n", "multi\nline", "é"];
        for (pattern, op) in [
            (".*", MatchOp::Re),
            (".+", MatchOp::Re),
            (".*", MatchOp::Nre),
            (".+", MatchOp::Nre),
        ] {
            let fast = StrMatcher::new(&Matcher {
                name: "x".into(),
                op,
                value: pattern.into(),
            })
            .unwrap();
            // The same pattern spelled so that it takes the regex path.
            let slow = StrMatcher::new(&Matcher {
                name: "x".into(),
                op,
                value: format!("(?:{pattern})"),
            })
            .unwrap();
            for v in values {
                assert_eq!(
                    fast.matches(v),
                    slow.matches(v),
                    "{op:?} {pattern} on {v:?}"
                );
            }
        }
    }

    #[test]
    fn numbers_and_conversion_errors() {
        let mut b = builder(&[("status", "500"), ("bad", "abc")]);
        assert!(num("status", CmpOp::Ge, 500.0).eval(&mut b));
        assert!(!num("status", CmpOp::Lt, 500.0).eval(&mut b));
        assert!(
            !num("missing", CmpOp::Gt, 0.0).eval(&mut b),
            "missing drops"
        );
        assert!(
            num("bad", CmpOp::Gt, 0.0).eval(&mut b),
            "failed conversion keeps"
        );
        assert_eq!(b.value(ERROR), LABEL_FILTER_ERR);
        assert_eq!(
            b.err_details(),
            r#"strconv.ParseFloat: parsing "abc": invalid syntax"#
        );
        let _ = ERROR_DETAILS;
    }

    #[test]
    fn durations_and_bytes() {
        let mut b = builder(&[("lat", "1h30m"), ("size", "5MiB"), ("d", "10x")]);
        let dur = LabelPred::new(&LabelFilter::Duration {
            name: "lat".into(),
            op: CmpOp::Gt,
            value: logql_parser::Duration::parse_go("1h").unwrap(),
        })
        .unwrap();
        assert!(dur.eval(&mut b));
        let bytes = LabelPred::new(&LabelFilter::Bytes {
            name: "size".into(),
            op: CmpOp::Eq,
            value: 5 << 20,
        })
        .unwrap();
        // Loki's queriers see `size==5.2MB` (the frontend prints the
        // filter with go-humanize), so a 5MiB value is not equal to it.
        assert!(!bytes.eval(&mut b));
        let bytes = LabelPred::new(&LabelFilter::Bytes {
            name: "size".into(),
            op: CmpOp::Gt,
            value: 5 << 20,
        })
        .unwrap();
        assert!(bytes.eval(&mut b));
        let bad = LabelPred::new(&LabelFilter::Duration {
            name: "d".into(),
            op: CmpOp::Gt,
            value: logql_parser::Duration(0),
        })
        .unwrap();
        assert!(bad.eval(&mut b));
        assert_eq!(
            b.err_details(),
            r#"time: unknown unit "x" in duration "10x""#
        );
    }

    #[test]
    fn string_matchers_are_anchored_and_read_errors() {
        let mut b = builder(&[("level", "error")]);
        let m = |op, v: &str| {
            LabelPred::new(&LabelFilter::Matcher(Matcher {
                name: "level".into(),
                op,
                value: v.into(),
            }))
            .unwrap()
        };
        assert!(!m(MatchOp::Re, "rr").eval(&mut b));
        assert!(m(MatchOp::Re, "err.*").eval(&mut b));
        assert!(m(MatchOp::Nre, "rr").eval(&mut b));
        b.set_err("JSONParserErr", None);
        let e = LabelPred::new(&LabelFilter::Matcher(Matcher {
            name: ERROR.into(),
            op: MatchOp::Eq,
            value: String::new(),
        }))
        .unwrap();
        assert!(!e.eval(&mut b));
    }
}
