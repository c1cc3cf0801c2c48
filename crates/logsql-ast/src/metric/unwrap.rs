//! The unwrapped value: extraction, Loki's conversion rules as guards, and
//! post-unwrap error filters.

use std::fmt;

use logql_parser::{LabelFilter, MatchOp, UnwrapConversion};

use crate::filter::Filter;
use crate::quote::{write_field, write_quoted};

/// Scratch field holding the unwrapped label's text.
pub const VALUE_FIELD: &str = "__lokivl_v";
/// Scratch field holding the unwrapped number (VictoriaLogs' `math` parse of [`VALUE_FIELD`]).
pub const NUMBER_FIELD: &str = "__lokivl_n";
/// Scratch field holding the square of [`NUMBER_FIELD`] (for stddev/stdvar).
pub(crate) const SQUARE_FIELD: &str = "__lokivl_sq";

/// Loki's error label value for a failed unwrap conversion.
const SAMPLE_ERROR: &str = "SampleExtractionErr";

/// A pipe appended by the metric lowering after the log pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricPipe {
    /// `copy "label" as "__lokivl_v"`.
    Copy(String),
    /// `filter …`.
    Filter(Filter),
    /// `math "__lokivl_v" as "__lokivl_n"`: VictoriaLogs parses floats,
    /// durations (to nanoseconds) and byte sizes.
    Number,
    /// `math "__lokivl_n" * "__lokivl_n" as "__lokivl_sq"`.
    Square,
    /// `fields a, b`.
    Fields(Vec<String>),
    /// `replace ("us", "µs") at "__lokivl_v" | replace ("μs", "µs") at …`:
    /// Go accepts three spellings of microseconds, VictoriaLogs only `µs`.
    Micros,
}

impl fmt::Display for MetricPipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricPipe::Copy(label) => {
                f.write_str("copy ")?;
                write_field(f, label)?;
                f.write_str(" as ")?;
                write_field(f, VALUE_FIELD)
            }
            MetricPipe::Filter(filter) => write!(f, "filter {filter}"),
            MetricPipe::Number => {
                f.write_str("math ")?;
                write_field(f, VALUE_FIELD)?;
                f.write_str(" as ")?;
                write_field(f, NUMBER_FIELD)
            }
            MetricPipe::Square => {
                f.write_str("math ")?;
                write_field(f, NUMBER_FIELD)?;
                f.write_str(" * ")?;
                write_field(f, NUMBER_FIELD)?;
                f.write_str(" as ")?;
                write_field(f, SQUARE_FIELD)
            }
            MetricPipe::Micros => {
                for from in ["us", "\u{3bc}s"] {
                    if from != "us" {
                        f.write_str(" | ")?;
                    }
                    f.write_str("replace (")?;
                    write_quoted(f, from)?;
                    f.write_str(", ")?;
                    write_quoted(f, "\u{b5}s")?;
                    f.write_str(") at ")?;
                    write_field(f, VALUE_FIELD)?;
                }
                Ok(())
            }
            MetricPipe::Fields(names) => {
                f.write_str("fields ")?;
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_field(f, n)?;
                }
                Ok(())
            }
        }
    }
}

/// The anchored regex of values Loki's conversion accepts and VictoriaLogs
/// parses to the same number.
///
/// * plain: decimal floats (Go's `strconv.ParseFloat` without hex, `Inf`, `NaN`);
/// * `duration`/`duration_seconds`: Go durations (`1h30m`, `250ms`, `-1.5s`, `0`);
/// * `bytes`: an integer or decimal with an optional `B`, `KB`…`PB`, `KiB`…`PiB` unit.
pub fn guard_regex(conv: UnwrapConversion) -> &'static str {
    match conv {
        UnwrapConversion::Plain => r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$",
        UnwrapConversion::Duration | UnwrapConversion::DurationSeconds => {
            r"^[+-]?(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)$"
        }
        UnwrapConversion::Bytes => r"^[0-9]+(?:\.[0-9]+)?(?:[KMGTP]i?B|B)?$",
    }
}

/// Classifies a post-unwrap filter on `__error__`: `Some(true)` when it drops
/// conversion errors (`__error__=""`, `__error__!="SampleExtractionErr"`),
/// `Some(false)` when it keeps only errors, `None` for any other filter.
pub(crate) fn error_filter(f: &LabelFilter) -> Option<bool> {
    let LabelFilter::Matcher(m) = f else {
        return None;
    };
    if m.name != "__error__" {
        return None;
    }
    let matches = |v: &str| match m.op {
        MatchOp::Eq | MatchOp::Neq => m.value == v,
        MatchOp::Re | MatchOp::Nre => regex::Regex::new(&format!("^(?:{})$", m.value))
            .map(|re| re.is_match(v))
            .unwrap_or(false),
    };
    let (keeps_ok, keeps_err) = match m.op {
        MatchOp::Eq | MatchOp::Re => (matches(""), matches(SAMPLE_ERROR)),
        MatchOp::Neq | MatchOp::Nre => (!matches(""), !matches(SAMPLE_ERROR)),
    };
    match (keeps_ok, keeps_err) {
        (true, false) => Some(true),
        (true, true) => None,
        (false, _) => Some(false),
    }
}

#[cfg(test)]
mod tests {
    use logql_parser::Matcher;

    use super::*;

    fn err(op: MatchOp, v: &str) -> LabelFilter {
        LabelFilter::Matcher(Matcher {
            name: "__error__".into(),
            op,
            value: v.into(),
        })
    }

    #[test]
    fn error_filters() {
        assert_eq!(error_filter(&err(MatchOp::Eq, "")), Some(true));
        assert_eq!(error_filter(&err(MatchOp::Neq, SAMPLE_ERROR)), Some(true));
        assert_eq!(error_filter(&err(MatchOp::Nre, ".+")), Some(true));
        assert_eq!(error_filter(&err(MatchOp::Neq, "")), Some(false));
        assert_eq!(error_filter(&err(MatchOp::Eq, SAMPLE_ERROR)), Some(false));
        assert_eq!(error_filter(&err(MatchOp::Neq, "JSONParserErr")), None);
    }

    #[test]
    fn guards_follow_go_parsers() {
        let ok = |c, v: &str| regex::Regex::new(guard_regex(c)).unwrap().is_match(v);
        assert!(ok(UnwrapConversion::Plain, "-1.5e3"));
        assert!(ok(UnwrapConversion::Plain, ".5"));
        assert!(!ok(UnwrapConversion::Plain, "250ms"));
        assert!(!ok(UnwrapConversion::Plain, "1_000"));
        assert!(ok(UnwrapConversion::Duration, "1h30m"));
        assert!(ok(UnwrapConversion::Duration, "0"));
        assert!(!ok(UnwrapConversion::Duration, "5"));
        assert!(!ok(UnwrapConversion::Duration, "1d"));
        assert!(ok(UnwrapConversion::Bytes, "10KiB"));
        assert!(ok(UnwrapConversion::Bytes, "42"));
        assert!(!ok(UnwrapConversion::Bytes, "ten"));
    }

    #[test]
    fn pipes_print() {
        assert_eq!(
            MetricPipe::Copy("latency".into()).to_string(),
            r#"copy "latency" as "__lokivl_v""#
        );
        assert_eq!(
            MetricPipe::Micros.to_string(),
            "replace (\"us\", \"\u{b5}s\") at \"__lokivl_v\" | replace (\"\u{3bc}s\", \"\u{b5}s\") at \"__lokivl_v\""
        );
        assert_eq!(
            MetricPipe::Square.to_string(),
            r#"math "__lokivl_n" * "__lokivl_n" as "__lokivl_sq""#
        );
        assert_eq!(
            MetricPipe::Fields(vec!["_time".into(), "a.b".into()]).to_string(),
            r#"fields _time, "a.b""#
        );
    }
}
