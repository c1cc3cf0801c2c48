//! Stream selectors and label matchers.

use pest::iterators::Pair;

use super::{Built, string};
use crate::ast::{MatchOp, Matcher, Selector};
use crate::error::ParseError;
use crate::grammar::Rule;

/// Builds `{a="b", …}`.
pub(crate) fn selector(input: &str, p: Pair<'_, Rule>) -> Built<Selector> {
    let matchers = p
        .into_inner()
        .map(|m| matcher(input, m))
        .collect::<Built<Vec<_>>>()?;
    Ok(Selector { matchers })
}

/// Builds `name op "value"`, checking regexes as Prometheus' `NewMatcher` does.
pub(crate) fn matcher(input: &str, p: Pair<'_, Rule>) -> Built<Matcher> {
    let mut it = p.into_inner();
    let (Some(name), Some(value)) = (it.next(), it.next()) else {
        return Err(ParseError::Semantic("malformed matcher".into()));
    };
    // `match_op` is silent: the operator is the text between the two pairs
    // (the grammar only skips spaces around it).
    let between = value
        .get_input()
        .get(name.as_span().end()..value.as_span().start())
        .unwrap_or_default()
        .trim_matches(' ');
    let op = match between {
        "=" => MatchOp::Eq,
        "!=" => MatchOp::Neq,
        "=~" => MatchOp::Re,
        _ => MatchOp::Nre,
    };
    let name = super::ident(&name)?;
    let value = string(input, &value)?;
    if matches!(op, MatchOp::Re | MatchOp::Nre) {
        // Syntax only (as RE2 sees it): compiling here cost more than the
        // rest of the parse.
        go::regexp::check(&value).map_err(|msg| ParseError::InvalidRegex { stage: None, msg })?;
    }
    Ok(Matcher { name, op, value })
}

/// Compiles `^(?:re)$`, with Go-style error text for the common mistakes.
pub(crate) fn anchored_regex(re: &str) -> Result<regex::Regex, String> {
    let full = format!("^(?:{re})$");
    regex::Regex::new(&full).map_err(|_| go_regex_error(&full))
}

/// Go's `regexp` error text, for the error kinds people actually hit.
fn go_regex_error(full: &str) -> String {
    use regex_syntax::ast::ErrorKind;
    let Err(e) = regex_syntax::ast::parse::Parser::new().parse(full) else {
        return "error parsing regexp: invalid or unsupported Perl syntax".into();
    };
    let span = e.span();
    let text = full
        .get(span.start.offset..span.end.offset)
        .unwrap_or_default();
    let (what, arg) = match e.kind() {
        ErrorKind::EscapeUnrecognized => ("invalid escape sequence", text.to_string()),
        ErrorKind::ClassUnclosed => ("missing closing ]", full[span.start.offset..].to_string()),
        ErrorKind::GroupUnclosed => ("missing closing )", full.to_string()),
        ErrorKind::GroupUnopened => ("unexpected )", full.to_string()),
        ErrorKind::RepetitionMissing => {
            ("missing argument to repetition operator", text.to_string())
        }
        _ => ("invalid or unsupported Perl syntax", text.to_string()),
    };
    format!("error parsing regexp: {what}: `{arg}`")
}

/// Whether the matcher accepts the empty string (Loki's "filter" matchers).
pub(crate) fn matches_empty(m: &Matcher) -> bool {
    // Grafana's `=~".+"` and `=~".*"` (Drilldown sends them on every
    // request) are answered without compiling a regex.
    match (m.op, m.value.as_str()) {
        (MatchOp::Re, ".+") | (MatchOp::Nre, ".*") => return false,
        (MatchOp::Re, ".*") | (MatchOp::Nre, ".+") => return true,
        _ => {}
    }
    match m.op {
        MatchOp::Eq => m.value.is_empty(),
        MatchOp::Neq => !m.value.is_empty(),
        MatchOp::Re => anchored_regex(&m.value).is_ok_and(|r| r.is_match("")),
        MatchOp::Nre => !anchored_regex(&m.value).is_ok_and(|r| r.is_match("")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(op: MatchOp, v: &str) -> Matcher {
        Matcher {
            name: "a".into(),
            op,
            value: v.into(),
        }
    }

    #[test]
    fn empty_compatibility_follows_prometheus() {
        assert!(matches_empty(&m(MatchOp::Re, ".*")));
        assert!(!matches_empty(&m(MatchOp::Re, ".+")));
        assert!(matches_empty(&m(MatchOp::Neq, "x")));
        assert!(!matches_empty(&m(MatchOp::Neq, "")));
        assert!(matches_empty(&m(MatchOp::Nre, "bar|baz")));
        assert!(!matches_empty(&m(MatchOp::Nre, ".*")));
        assert!(matches_empty(&m(MatchOp::Nre, ".+")));
        // The shortcuts agree with the regex path.
        for v in [".*", ".+"] {
            for op in [MatchOp::Re, MatchOp::Nre] {
                let slow = match op {
                    MatchOp::Re => anchored_regex(v).is_ok_and(|r| r.is_match("")),
                    _ => !anchored_regex(v).is_ok_and(|r| r.is_match("")),
                };
                assert_eq!(matches_empty(&m(op, v)), slow, "{op:?} {v}");
            }
        }
    }

    #[test]
    fn go_regex_messages() {
        assert_eq!(
            anchored_regex(r"^^^^x43\\\q").unwrap_err(),
            r"error parsing regexp: invalid escape sequence: `\q`"
        );
    }
}
