//! Line filters (`|=`, `!=`, `|~`, `!~`) to `_msg` regex filters.

use logql_parser::{LineFilter, LineFilterOp, LineFilterValue};

use crate::error::LowerError;
use crate::filter::Filter;
use go::regexp::quote_meta;

/// Lowers one line filter with its `or` alternatives.
///
/// `|=` is a substring match, so each literal is regex-quoted (Go `QuoteMeta`).
/// Alternatives are wrapped in `(?:…)` so flags such as `(?i)` stay scoped.
/// As in Loki, an empty literal alternative is dropped from an `or` chain
/// unless every alternative is empty, in which case `|=`/`|~` keep every line
/// and `!=`/`!~` keep none.
pub(crate) fn lower(filter: &LineFilter) -> Result<Filter, LowerError> {
    let mut alternatives = Vec::with_capacity(filter.values.len());
    for v in &filter.values {
        match v {
            LineFilterValue::Literal(s) => alternatives.push(s.as_str()),
            LineFilterValue::Ip(_) => {
                return Err(LowerError::Unsupported("line filter with ip()".into()));
            }
        }
    }
    let (quote, negate) = match filter.op {
        LineFilterOp::Contains => (true, false),
        LineFilterOp::NotContains => (true, true),
        LineFilterOp::Regex => (false, false),
        LineFilterOp::NotRegex => (false, true),
        LineFilterOp::Pattern | LineFilterOp::NotPattern => {
            return Err(LowerError::Unsupported(
                "pattern line filter (|> / !>)".into(),
            ));
        }
    };
    let non_empty: Vec<&str> = alternatives.into_iter().filter(|s| !s.is_empty()).collect();
    let positive = if non_empty.is_empty() {
        Filter::All
    } else {
        let parts: Vec<String> = non_empty
            .iter()
            .map(|s| {
                if quote {
                    quote_meta(s)
                } else {
                    (*s).to_owned()
                }
            })
            .collect();
        let regex = if parts.len() == 1 {
            parts.into_iter().next().unwrap_or_default()
        } else {
            parts
                .iter()
                .map(|p| format!("(?:{p})"))
                .collect::<Vec<_>>()
                .join("|")
        };
        Filter::Regex {
            field: "_msg".into(),
            regex,
        }
    };
    Ok(if negate {
        Filter::not(positive)
    } else {
        positive
    })
}
