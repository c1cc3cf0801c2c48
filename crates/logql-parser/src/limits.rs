//! Limits that keep hostile input cheap: bracket nesting is checked before
//! the (recursive) grammar runs, operator chains before the tree is built,
//! so no input can exhaust the stack or build a pathologically deep tree.

use pest::iterators::Pairs;

use crate::error::ParseError;
use crate::grammar::Rule;

/// Deepest bracket nesting accepted (`(`, `[`, `{` outside strings).
/// Loki has no such limit; real queries stay far below it. At this depth the
/// most stack-hungry shape (nested aggregations) still fits a 2 MiB thread
/// stack in a debug build (it overflows near 190), so tokio workers are safe.
pub const MAX_NESTING_DEPTH: usize = 128;

/// Most binary operators plus label-filter terms accepted in one query; a
/// chain of them is one tree level per operator.
pub const MAX_OPERATORS: usize = 1024;

/// Rejects input nested deeper than [`MAX_NESTING_DEPTH`], in one linear scan.
///
/// Every level is one bracket byte, so an input no longer than the limit
/// cannot exceed it and is not scanned.
pub(crate) fn check_nesting(input: &str) -> Result<(), ParseError> {
    if input.len() <= MAX_NESTING_DEPTH {
        return Ok(());
    }
    let b = input.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'`' => {
                i += 1;
                while i < b.len() && b[i] != b'`' {
                    i += 1;
                }
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING_DEPTH {
                    return Err(ParseError::Semantic(format!(
                        "query nesting too deep: more than {MAX_NESTING_DEPTH} levels of brackets"
                    )));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Rejects a parse with more than [`MAX_OPERATORS`] operators (iterative walk).
///
/// Every counted node spans bytes of its own, so an input no longer than the
/// limit cannot exceed it and is not walked.
pub(crate) fn check_operators(input: &str, pairs: &Pairs<'_, Rule>) -> Result<(), ParseError> {
    if input.len() <= MAX_OPERATORS {
        return Ok(());
    }
    let n = pairs
        .clone()
        .flatten()
        .filter(|p| {
            matches!(
                p.as_rule(),
                Rule::infix
                    | Rule::lf_paren
                    | Rule::ip_filter
                    | Rule::duration_filter
                    | Rule::bytes_filter
                    | Rule::number_filter
                    | Rule::string_filter
            )
        })
        .count();
    if n > MAX_OPERATORS {
        return Err(ParseError::Semantic(format!(
            "query too complex: more than {MAX_OPERATORS} operators"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_limit_counts_brackets_outside_strings() {
        let ok = format!(
            "{}1{}",
            "(".repeat(MAX_NESTING_DEPTH),
            ")".repeat(MAX_NESTING_DEPTH)
        );
        assert_eq!(crate::parse(&ok).map(|e| e.to_string()), Ok("1".into()));
        let deep = format!("({ok})");
        assert_eq!(
            crate::parse(&deep).map_err(|e| e.to_string()),
            Err("parse error : query nesting too deep: more than 128 levels of brackets".into())
        );
        // Brackets inside strings, raw strings and comments do not count.
        let quoted = format!(
            "{{a=\"{}\"}} |= `{}` # {}",
            "(".repeat(999),
            "[".repeat(999),
            "{".repeat(999)
        );
        assert!(crate::parse(&quoted).is_ok());
    }

    #[test]
    fn deepest_accepted_nesting_fits_the_stack() {
        // Runs on a test thread (2 MiB stack, debug build): the limit must keep
        // every kind of recursion well inside it.
        let d = MAX_NESTING_DEPTH - 3;
        let sums = format!("{}rate({{a=\"b\"}}[5m]){}", "sum(".repeat(d), ")".repeat(d));
        assert!(crate::parse(&sums).is_ok());
        let filters = format!("{{a=\"b\"}} | {}x=1{}", "(".repeat(d), ")".repeat(d));
        assert!(crate::parse(&filters).is_ok());
        let ranges = format!(
            "count_over_time({}{{a=\"b\"}} | json{}[5m])",
            "(".repeat(d),
            ")".repeat(d)
        );
        let _ = crate::parse(&ranges);
        let replaces = format!(
            "{}rate({{a=\"b\"}}[5m]){}",
            "label_replace(".repeat(d),
            ",\"a\",\"b\",\"c\",\"d\")".repeat(d)
        );
        assert!(crate::parse(&replaces).is_ok());
        let pretty = crate::parse(&sums).map(|e| crate::prettify(&e));
        assert!(pretty.is_ok_and(|p| p.lines().count() > d));
    }

    #[test]
    fn operator_limit() {
        let chain = |n: usize| vec!["vector(1)"; n + 1].join(" + ");
        assert!(crate::parse(&chain(MAX_OPERATORS)).is_ok());
        assert_eq!(
            crate::parse(&chain(MAX_OPERATORS + 1)).map_err(|e| e.to_string()),
            Err("parse error : query too complex: more than 1024 operators".into())
        );
        let filters = |n: usize| format!("{{a=\"b\"}} | {}", vec!["x=1"; n].join(" and "));
        assert!(crate::parse(&filters(MAX_OPERATORS)).is_ok());
        assert!(crate::parse(&filters(MAX_OPERATORS + 1)).is_err());
    }
}
