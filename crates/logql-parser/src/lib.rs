//! LogQL parser: a pest grammar to a typed AST, with Loki's error messages
//! and Loki's canonical printing.
//!
//! ```
//! let expr = logql_parser::parse(r#"{app="api"} |= "error""#).unwrap();
//! assert!(matches!(expr, logql_parser::Expr::Log(_)));
//! assert_eq!(expr.to_string(), r#"{app="api"} |= "error""#);
//! ```

// pest is built without `std` (no per-call stack probe, see the root
// Cargo.toml), and its derived parsers then name `::alloc::boxed::Box`.
extern crate alloc;

mod ast;
mod build;
mod error;
mod grammar;
mod lexer;
mod limits;
mod names;
mod normalize;
mod pattern;
mod pretty;
mod print;
mod regex_simplify;
mod syntax_error;
mod utf8;
mod validate;

pub use ast::*;
pub use error::ParseError;
pub use go::duration::Duration;
pub use limits::{MAX_NESTING_DEPTH, MAX_OPERATORS};
pub use pattern::{PatternNode, parse_pattern};
pub use pretty::prettify;
pub use utf8::invalid_utf8_error;
pub use validate::EMPTY_MATCHERS;

use pest::Parser as _;

/// Longest query accepted, in bytes; Loki's own limit (`maxInputSize`).
pub const MAX_QUERY_LENGTH: usize = 131_072;

/// Upper bound on pest rule calls per parse, so hostile input cannot make the
/// backtracking parser run for long.
const CALL_LIMIT: usize = 2_000_000;

/// Parses a LogQL query the way Loki does, including its validation.
///
/// # Errors
/// Returns Loki's error for any query Loki rejects.
pub fn parse(input: &str) -> Result<Expr, ParseError> {
    let expr = parse_unvalidated(input)?;
    validate::validate(&expr)?;
    Ok(expr)
}

/// Parses a query to run (query_range, query, tail): [`parse`], then the
/// checks Loki makes when it builds the query's pipelines, which reject
/// an invalid line filter regex (`{app="a"} |~ "("`) with
/// `parse error : stage '|~ "("' : error parsing regexp: missing closing ): `(``.
/// `/format_query` uses [`parse`], as Loki formats such a query.
///
/// # Errors
/// Returns Loki's error for any query Loki refuses to run.
pub fn parse_query(input: &str) -> Result<Expr, ParseError> {
    let expr = parse(input)?;
    validate::pipelines(&expr)?;
    Ok(expr)
}

/// Parses without Loki's post-parse validation, for endpoints that accept
/// empty-compatible selectors (`/series` takes `{}`-like matchers).
///
/// # Errors
/// Returns Loki's syntax and construction errors.
pub fn parse_unvalidated(input: &str) -> Result<Expr, ParseError> {
    if input.len() >= MAX_QUERY_LENGTH {
        // Loki builds this error at line 0, col 0, which prints without a position.
        return Err(ParseError::Semantic(format!(
            "input size too long ({} > {MAX_QUERY_LENGTH})",
            input.len()
        )));
    }
    if input.is_empty() {
        // Loki reports end of input at line 0, col 0, which prints without a position.
        return Err(ParseError::Semantic("syntax error: unexpected $end".into()));
    }
    limits::check_nesting(input)?;
    let text = normalize::spaced(input);
    let text = text.as_ref();
    pest::set_call_limit(std::num::NonZeroUsize::new(CALL_LIMIT));
    // Fast path: the lax grammar without attempt tracking (see grammar.rs).
    pest::set_error_detail(false);
    let Ok(mut pairs) = grammar::LogqlParser::parse(grammar::Rule::root, text) else {
        return Err(strict_error(input, text, None));
    };
    let all = pairs.clone();
    let root = pairs
        .next()
        .ok_or_else(|| ParseError::Semantic("empty query".into()))?;
    match limits::check_operators(input, &all).and_then(|()| build::build_root(input, root)) {
        Ok(e) => Ok(e),
        // A keyword where Loki wants a name: Loki fails on it, and that
        // syntax error comes before any check made while building.
        Err(e) if build::is_keyword_identifier(&e) || first_keyword_identifier(&all).is_some() => {
            Err(strict_error(input, text, Some(&all)))
        }
        Err(e) => Err(e),
    }
}

/// Loki's syntax error for a query the strict grammar rejects, located at
/// the farthest token any alternative reached (run again with pest's
/// attempt tracking, which only a failing query pays for).
fn strict_error(
    input: &str,
    text: &str,
    lax: Option<&pest::iterators::Pairs<'_, grammar::Rule>>,
) -> ParseError {
    match strict_failure(text) {
        Some(farthest) => syntax_error::syntax_error(input, farthest),
        // Not expected (the grammars differ only where a keyword stands for
        // a name); name the keyword.
        None => match lax.and_then(first_keyword_identifier) {
            Some(pos) => syntax_error::syntax_error(input, pos),
            None => ParseError::Semantic("syntax error".into()),
        },
    }
}

/// The farthest position the strict grammar reached in `text` when it
/// rejects it, or `None` when it accepts it.
fn strict_failure(text: &str) -> Option<usize> {
    pest::set_call_limit(std::num::NonZeroUsize::new(CALL_LIMIT));
    pest::set_error_detail(true);
    let res = grammar::strict::LogqlParser::parse(grammar::strict::Rule::root, text).map(|_| ());
    pest::set_error_detail(false);
    let e = res.err()?;
    let pos = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    Some(e.parse_attempts().map_or(pos, |a| a.max_position.max(pos)))
}

/// Where Loki's syntax or lexer error for `input` starts (byte offset), or
/// `None` when Loki's grammar accepts it.
pub(crate) fn syntax_error_start(input: &str) -> Option<usize> {
    let text = normalize::spaced(input);
    let farthest = strict_failure(text.as_ref())?;
    Some(syntax_error::error_start(input, farthest))
}

/// Where the first identifier that is a keyword starts, if any.
fn first_keyword_identifier(pairs: &pest::iterators::Pairs<'_, grammar::Rule>) -> Option<usize> {
    pairs
        .clone()
        .flatten()
        .find(|p| p.as_rule() == grammar::Rule::identifier && grammar::is_keyword(p.as_str()))
        .map(|p| p.as_span().start())
}
