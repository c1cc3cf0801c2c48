//! Label filters (`| x="v"`, `| status >= 500`) over Loki's label set.
//!
//! A Loki label can come from several VictoriaLogs fields: the stored field
//! (stream label or structured metadata) and, after a parser, the parsed field
//! under [`PARSED_PREFIX`]. Loki gives the stored one precedence (a colliding
//! parsed label is renamed `x_extracted`), and a missing label equals `""`.
//! Loki also writes `_` where VictoriaLogs keeps dots (OTel attributes,
//! flattened JSON keys), so `a_b` may live in `a.b` too. The value of a label is
//! therefore the first non-empty candidate field, and every comparison becomes
//! a chain: `P(f1) or (f1:"" and (P(f2) or (f2:"" and …)))`.

use logql_parser::{CmpOp, LabelFilter, MatchOp, Matcher};

use crate::error::LowerError;
use crate::filter::{Filter, RangeOp};
use crate::plan::PARSED_PREFIX;

/// VictoriaLogs' own fields; no Loki label maps onto them.
const BUILTIN_FIELDS: [&str; 4] = ["_msg", "_time", "_stream", "_stream_id"];

/// The most `_` separators for which every dotted spelling is tried (2^n names).
const MAX_SPLIT_SEPARATORS: usize = 3;

/// Lowers a label filter; `parsed` says whether a parser ran before it.
pub(crate) fn lower(filter: &LabelFilter, parsed: bool) -> Result<Filter, LowerError> {
    Ok(match filter {
        LabelFilter::And(a, b) => Filter::and([lower(a, parsed)?, lower(b, parsed)?]),
        LabelFilter::Or(a, b) => Filter::or([lower(a, parsed)?, lower(b, parsed)?]),
        LabelFilter::Paren(inner) => lower(inner, parsed)?,
        LabelFilter::Matcher(m) => resolve(&m.name, parsed, &|fields| matcher(m, fields))?,
        LabelFilter::Number { name, op, value } => {
            resolve(name, parsed, &|fields| Ok(compare(fields, *op, *value)))?
        }
        LabelFilter::Duration { name, op, value } => resolve(name, parsed, &|fields| {
            Ok(compare(fields, *op, value.as_nanos() as f64))
        })?,
        LabelFilter::Bytes { name, op, value } => resolve(name, parsed, &|fields| {
            Ok(compare(fields, *op, *value as f64))
        })?,
        LabelFilter::Ip { .. } => {
            return Err(LowerError::Unsupported("label filter with ip()".into()));
        }
    })
}

/// Applies `pred` (a predicate on "the value of the first non-empty field")
/// to the fields that hold Loki label `name`.
///
/// After a parser, Loki names a parsed label `x_extracted` when a stream label
/// `x` exists; so `x_extracted` reads parsed `x` while stored `x` is non-empty,
/// and an ordinary label named `x_extracted` otherwise.
fn resolve(
    name: &str,
    parsed: bool,
    pred: &dyn Fn(&[String]) -> Result<Filter, LowerError>,
) -> Result<Filter, LowerError> {
    let plain = pred(&candidates(name, parsed)?)?;
    let Some(base) = name
        .strip_suffix("_extracted")
        .filter(|b| parsed && !b.is_empty())
    else {
        return Ok(plain);
    };
    let stored: Vec<String> = candidates(base, false)?
        .into_iter()
        .filter(|f| !f.starts_with(PARSED_PREFIX))
        .collect();
    if stored.is_empty() {
        return Ok(plain);
    }
    let renamed: Vec<String> = spellings(base)
        .iter()
        .map(|s| format!("{PARSED_PREFIX}{s}"))
        .collect();
    Ok(Filter::or([
        Filter::and([
            Filter::or(stored.iter().map(|f| Filter::NonEmpty(f.clone()))),
            pred(&renamed)?,
        ]),
        Filter::and(
            stored
                .iter()
                .map(|f| Filter::Empty(f.clone()))
                .chain([plain]),
        ),
    ]))
}

/// The VictoriaLogs fields that can hold Loki label `name`, by precedence.
pub(crate) fn candidates(name: &str, parsed: bool) -> Result<Vec<String>, LowerError> {
    if name == "__error__" || name == "__error_details__" {
        return Err(LowerError::Unsupported(format!(
            "label filter on {name}: VictoriaLogs does not report parser errors"
        )));
    }
    // An OTel index label has one dotted spelling, the attribute itself;
    // other names may be any attribute sanitized, so every spelling is tried.
    let spellings = match crate::otel::index_attribute(name) {
        Some(attribute) => vec![name.to_owned(), attribute.to_owned()],
        None => spellings(name),
    };
    let mut out: Vec<String> = spellings
        .iter()
        .filter(|s| !BUILTIN_FIELDS.contains(&s.as_str()))
        .cloned()
        .collect();
    if parsed {
        out.extend(spellings.iter().map(|s| format!("{PARSED_PREFIX}{s}")));
    }
    Ok(out)
}

/// `name` itself, then the spellings with some `_` turned into `.`.
///
/// Only `_` between two other characters is a candidate separator (so `__x`
/// and `a__b` keep their underscores); above [`MAX_SPLIT_SEPARATORS`]
/// separators only the all-dots spelling is tried.
fn spellings(name: &str) -> Vec<String> {
    let bytes = name.as_bytes();
    let seps: Vec<usize> = (1..bytes.len().saturating_sub(1))
        .filter(|&i| bytes[i] == b'_' && bytes[i - 1] != b'_' && bytes[i + 1] != b'_')
        .collect();
    let mut out = vec![name.to_owned()];
    if seps.is_empty() {
        return out;
    }
    let masks: Vec<u32> = if seps.len() <= MAX_SPLIT_SEPARATORS {
        (1..(1u32 << seps.len())).collect()
    } else {
        vec![u32::MAX]
    };
    for mask in masks {
        let mut b = bytes.to_vec();
        for (k, &i) in seps.iter().enumerate() {
            if k >= 32 || mask & (1 << k) != 0 {
                b[i] = b'.';
            }
        }
        out.push(String::from_utf8_lossy(&b).into_owned());
    }
    out
}

/// `P(first non-empty field)`, with `P("")` given by `on_empty`.
fn chain(fields: &[String], on_empty: bool, pred: &dyn Fn(&str) -> Filter) -> Filter {
    let Some((first, rest)) = fields.split_first() else {
        return if on_empty {
            Filter::All
        } else {
            Filter::Nothing
        };
    };
    // When P("") holds, P(f) alone would also accept an empty f whose value
    // must come from a later field, so guard it with f:*.
    let here = if on_empty {
        Filter::and([Filter::NonEmpty(first.clone()), pred(first)])
    } else {
        pred(first)
    };
    let later = Filter::and([Filter::Empty(first.clone()), chain(rest, on_empty, pred)]);
    Filter::or([here, later])
}

fn matcher(m: &Matcher, fields: &[String]) -> Result<Filter, LowerError> {
    let positive = |op: MatchOp| -> Result<Filter, LowerError> {
        Ok(match op {
            MatchOp::Eq | MatchOp::Neq if m.value.is_empty() => {
                Filter::and(fields.iter().map(|f| Filter::Empty(f.clone())))
            }
            MatchOp::Eq | MatchOp::Neq => chain(fields, false, &|f| Filter::Exact {
                field: f.to_owned(),
                value: m.value.clone(),
            }),
            MatchOp::Re | MatchOp::Nre => {
                let anchored = format!("^(?:{})$", m.value);
                let on_empty = regex::Regex::new(&anchored)
                    .map_err(|e| {
                        LowerError::Unsupported(format!("label regex {:?}: {e}", m.value))
                    })?
                    .is_match("");
                chain(fields, on_empty, &|f| Filter::Regex {
                    field: f.to_owned(),
                    regex: anchored.clone(),
                })
            }
        })
    };
    Ok(match m.op {
        MatchOp::Eq | MatchOp::Re => positive(m.op)?,
        MatchOp::Neq | MatchOp::Nre => Filter::not(positive(m.op)?),
    })
}

/// Numeric, duration and bytes comparisons.
///
/// Loki drops entries where the label is missing or empty, which the chain
/// does (`P("")` is false). VictoriaLogs parses numbers, durations (to ns) and
/// sizes in field values, so `f:>v` compares like Loki for well-formed values.
///
/// Known deviation, on error paths only: Loki keeps entries whose value fails
/// to convert, and every entry an earlier parser failed on (a non-JSON line
/// after `| json`), tagging them `__error__`; VictoriaLogs reports no parser
/// errors, so the plan drops them. Unit spellings also differ at the edges
/// (Go durations accept `us`, VictoriaLogs `d`/`w`/`y`; humanize sizes are
/// case-insensitive and allow a space, VictoriaLogs' are not).
fn compare(fields: &[String], op: CmpOp, value: f64) -> Filter {
    chain(fields, false, &|f| {
        let range = |op| Filter::Range {
            field: f.to_owned(),
            op,
            value,
        };
        match op {
            CmpOp::Eq => range(RangeOp::Eq),
            CmpOp::Neq => Filter::or([range(RangeOp::Lt), range(RangeOp::Gt)]),
            CmpOp::Gt => range(RangeOp::Gt),
            CmpOp::Ge => range(RangeOp::Ge),
            CmpOp::Lt => range(RangeOp::Lt),
            CmpOp::Le => range(RangeOp::Le),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_cover_dotted_names() {
        assert_eq!(spellings("app"), vec!["app"]);
        assert_eq!(spellings("a_b"), vec!["a_b", "a.b"]);
        assert_eq!(spellings("a_b_c"), vec!["a_b_c", "a.b_c", "a_b.c", "a.b.c"]);
        assert_eq!(spellings("__x_"), vec!["__x_"]);
        assert_eq!(spellings("a_b_c_d_e"), vec!["a_b_c_d_e", "a.b.c.d.e"]);
    }

    #[test]
    fn builtin_fields_are_not_stored_candidates() {
        assert_eq!(
            candidates("_msg", true).unwrap(),
            vec![format!("{PARSED_PREFIX}_msg")]
        );
        assert!(candidates("__error__", true).is_err());
    }
}
