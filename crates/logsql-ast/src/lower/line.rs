//! Line filters (`|=`, `!=`, `|~`, `!~`) to `_msg` regex filters.

use logql_parser::{LineFilter, LineFilterOp, LineFilterValue};

use super::needle;
use crate::error::LowerError;
use crate::filter::Filter;
use go::regexp::quote_meta;

/// Lowers one line filter with its `or` alternatives.
///
/// `|=` is a substring match, so each literal is regex-quoted (Go `QuoteMeta`).
/// As in Loki, an empty literal alternative is dropped from an `or` chain
/// unless every alternative is empty, in which case `|=`/`|~` keep every line
/// and `!=`/`!~` keep none.
///
/// Several alternatives become one regex, each wrapped in `(?:…)` so flags
/// such as `(?i)` stay scoped, except a positive filter whose alternatives
/// are all literals with an interior token ([`needle`], and
/// [`literal_alternatives`] for `|~`): that one becomes an `or` of one
/// literal regex filter per alternative. Both keep the same lines (a regex
/// `A|B` matches a line exactly when `A` or `B` does), but VictoriaLogs
/// skips a block by its Bloom filter only for a regex that is a literal (or
/// a concatenation with literals), never for an alternation; with one
/// literal per filter, a block is read only for the alternatives whose
/// tokens it holds.
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
        let msg = |regex: String| Filter::Regex {
            field: "_msg".into(),
            regex,
        };
        let split = if negate {
            None
        } else {
            literal_alternatives(&non_empty, quote)
                .filter(|ls| ls.len() > 1 && ls.iter().all(|l| needle::has_interior_token(l)))
        };
        if let Some(literals) = split {
            Filter::or(literals.into_iter().map(|l| msg(quote_meta(l))))
        } else if parts.len() == 1 {
            msg(parts.into_iter().next().unwrap_or_default())
        } else {
            msg(parts
                .iter()
                .map(|p| format!("(?:{p})"))
                .collect::<Vec<_>>()
                .join("|"))
        }
    };
    Ok(if negate {
        Filter::not(positive)
    } else {
        positive
    })
}

/// The literals whose `or` the alternatives mean, when each is one: a `|=`
/// literal, or a `|~` regex without metacharacters, or one that is only
/// literals joined by `|` (`|~ "a-b|c-d"` is `|= "a-b" or "c-d"`). `None`
/// when any alternative is another regex.
fn literal_alternatives<'a>(alternatives: &[&'a str], quoted: bool) -> Option<Vec<&'a str>> {
    if quoted {
        return Some(alternatives.to_vec());
    }
    let plain = |s: &str| !s.is_empty() && quote_meta(s) == s;
    let mut out = Vec::with_capacity(alternatives.len());
    for a in alternatives {
        let parts: Vec<&str> = a.split('|').collect();
        if !parts.iter().all(|p| plain(p)) {
            return None;
        }
        out.extend(parts);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use logql_parser::{Expr, LineFilter, LineFilterOp, LineFilterValue};

    use crate::lower::{Discovery, lower_log};

    /// The LogsQL lokivl sends for a LogQL log query.
    fn logsql(q: &str) -> String {
        let Ok(Expr::Log(e)) = logql_parser::parse(q) else {
            panic!("not a log query: {q}");
        };
        lower_log(&e, &Discovery::default())
            .unwrap()
            .query
            .to_string()
    }

    #[test]
    fn one_needle_is_one_literal_regex_whatever_its_tokens() {
        // VictoriaLogs derives the interior tokens (e29b, 41d4, a716) from
        // the literal regex itself; a bare id has none and scans every block.
        assert_eq!(
            logsql(r#"{ns="prod"} |= "requestId=550e8400-e29b-41d4-a716-446655440000""#),
            r#"{ns="prod"} and _msg:~"requestId=550e8400-e29b-41d4-a716-446655440000""#
        );
        assert_eq!(
            logsql(r#"{ns="prod"} |= "4bf92f3577b34da6a3ce929d0e0e4736""#),
            r#"{ns="prod"} and _msg:~"4bf92f3577b34da6a3ce929d0e0e4736""#
        );
    }

    #[test]
    fn or_of_needles_with_interior_tokens_is_an_or_of_literal_regexes() {
        assert_eq!(
            logsql(r#"{ns="prod"} |= "id=a-b1-c" or "[x] y.z""#),
            r#"{ns="prod"} and (_msg:~"id=a-b1-c" or _msg:~"\\[x\\] y\\.z")"#
        );
        // Backticks and escapes give the same literal.
        assert_eq!(
            logsql(r#"{ns="prod"} |= `"GET /a" 5` or "\"GET /b\" 5""#),
            r#"{ns="prod"} and (_msg:~"\"GET /a\" 5" or _msg:~"\"GET /b\" 5")"#
        );
        // Unicode letters are token characters: `—შეცდომა—` bounds one.
        assert_eq!(
            logsql(r#"{ns="prod"} |= "x—შეცდომა—y" or "é-b-é""#),
            r#"{ns="prod"} and (_msg:~"x—შეცდომა—y" or _msg:~"é-b-é")"#
        );
        // Chained filters stay separate `and` operands.
        assert_eq!(
            logsql(r#"{ns="prod"} |= "a-b-c" or "d-e-f" |= "g""#),
            r#"{ns="prod"} and (_msg:~"a-b-c" or _msg:~"d-e-f") and _msg:~"g""#
        );
    }

    #[test]
    fn or_with_a_needle_without_interior_token_stays_one_alternation() {
        // `4bf9…` has no interior token: VictoriaLogs would read every block
        // for it anyway, so the one-pass alternation is kept.
        assert_eq!(
            logsql(r#"{ns="prod"} |= "a-b-c" or "4bf92f35""#),
            r#"{ns="prod"} and _msg:~"(?:a-b-c)|(?:4bf92f35)""#
        );
        assert_eq!(
            logsql(r#"{ns="prod"} |= "é-b" or "a-b-c""#),
            r#"{ns="prod"} and _msg:~"(?:é-b)|(?:a-b-c)""#
        );
    }

    #[test]
    fn regex_alternatives_split_only_when_literal() {
        assert_eq!(
            logsql(r#"{ns="prod"} |~ "a-b-c" or "d e f""#),
            r#"{ns="prod"} and (_msg:~"a-b-c" or _msg:~"d e f")"#
        );
        // A metacharacter (here a flag group) leaves VictoriaLogs no literal.
        assert_eq!(
            logsql(r#"{ns="prod"} |~ "(?i)a-b-c" or "d e f""#),
            r#"{ns="prod"} and _msg:~"(?:(?i)a-b-c)|(?:d e f)""#
        );
        // Literals joined by `|` in one regex are the same `or`.
        assert_eq!(
            logsql(r#"{ns="prod"} |~ "req=a-1-b|req=c-2-d" or "x y z""#),
            r#"{ns="prod"} and (_msg:~"req=a-1-b" or _msg:~"req=c-2-d" or _msg:~"x y z")"#
        );
        // Sent as written: an empty branch (matches every line), a literal
        // without interior token, another metacharacter, a negation.
        for re in [
            "req=a-1-b|",
            "req=a-1-b|error",
            "req=a-1-b|c.d-e-f",
            "(req=a-1-b|req=c-2-d)",
        ] {
            assert_eq!(
                logsql(&format!(r#"{{ns="prod"}} |~ "{re}""#)),
                format!(r#"{{ns="prod"}} and _msg:~"{re}""#),
            );
        }
        assert_eq!(
            logsql(r#"{ns="prod"} !~ "req=a-1-b|req=c-2-d""#),
            r#"{ns="prod"} and !_msg:~"req=a-1-b|req=c-2-d""#
        );
    }

    #[test]
    fn negative_filters_never_split() {
        // A negation cannot skip a block: it keeps the one alternation.
        for op in [LineFilterOp::NotContains, LineFilterOp::NotRegex] {
            let lf = LineFilter {
                op,
                values: vec![
                    LineFilterValue::Literal("a-b-c".into()),
                    LineFilterValue::Literal("d-e-f".into()),
                ],
            };
            assert_eq!(
                super::lower(&lf).unwrap().to_string(),
                r#"!_msg:~"(?:a-b-c)|(?:d-e-f)""#
            );
        }
        // The parser reads `!= "a" or "b"` as two filters (neither a nor b).
        assert_eq!(
            logsql(r#"{ns="prod"} != "a-b-c" or "d-e-f""#),
            r#"{ns="prod"} and !_msg:~"a-b-c" and !_msg:~"d-e-f""#
        );
    }

    #[test]
    fn empty_alternatives_are_dropped_before_splitting() {
        assert_eq!(
            logsql(r#"{ns="prod"} |= "" or "a-b-c""#),
            r#"{ns="prod"} and _msg:~"a-b-c""#
        );
        assert_eq!(
            logsql(r#"{ns="prod"} |= "a-b-c" or "" or "d-e-f""#),
            r#"{ns="prod"} and (_msg:~"a-b-c" or _msg:~"d-e-f")"#
        );
    }
}
