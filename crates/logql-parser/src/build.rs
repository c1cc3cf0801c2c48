//! Turns pest pairs into the typed AST, applying Loki's construction-time
//! checks (binary operand types, parameters, unwrap rules) as it goes.

mod label_filter;
mod metric;
mod pipeline;
mod selector;

use pest::iterators::Pair;

use crate::error::ParseError;
use crate::grammar::Rule;
use crate::lexer::tokenize;
use go::strconv::unquote;

pub(crate) use metric::build_root;
pub(crate) use selector::matches_empty as selector_matches_empty;

/// The result of building one node.
pub(crate) type Built<T> = Result<T, ParseError>;

/// Unquotes a `string` pair; a bad escape is reported at the literal as Loki's scanner does.
pub(crate) fn string(input: &str, p: &Pair<'_, Rule>) -> Built<String> {
    unquote(p.as_str()).map_err(|msg| {
        let (line, col) = line_col(input, p.as_span().start());
        ParseError::Syntax {
            line,
            col,
            msg: msg.to_string(),
        }
    })
}

/// The name an `identifier` pair spells.
///
/// The lax grammar takes keywords as identifiers (see `grammar.rs`); one
/// fails here with [`keyword_identifier`], and the caller lets the strict
/// grammar report the query.
pub(crate) fn ident(p: &Pair<'_, Rule>) -> Built<String> {
    let s = p.as_str();
    if crate::grammar::is_keyword(s) {
        return Err(keyword_identifier());
    }
    Ok(s.to_string())
}

/// Never shown: `parse_unvalidated` replaces it with the strict grammar's error.
const KEYWORD_IDENTIFIER: &str = "\u{0}keyword as identifier";

/// The marker error for a keyword in an identifier's place.
pub(crate) fn keyword_identifier() -> ParseError {
    ParseError::Semantic(KEYWORD_IDENTIFIER.into())
}

/// Whether `e` is [`keyword_identifier`].
pub(crate) fn is_keyword_identifier(e: &ParseError) -> bool {
    matches!(e, ParseError::Semantic(m) if m == KEYWORD_IDENTIFIER)
}

/// The 1-based line and character column of a byte offset.
pub(crate) fn line_col(input: &str, pos: usize) -> (usize, usize) {
    let before = &input[..pos.min(input.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// A syntax error naming the Loki token found at byte offset `pos`.
pub(crate) fn unexpected_at(input: &str, pos: usize) -> ParseError {
    let (toks, _) = tokenize(input);
    match toks.iter().find(|t| t.end > pos || t.name == "$end") {
        Some(t) => ParseError::Syntax {
            line: t.line,
            col: t.col,
            msg: format!("syntax error: unexpected {}", t.name),
        },
        None => ParseError::Syntax {
            line: 1,
            col: 1,
            msg: "syntax error".into(),
        },
    }
}
