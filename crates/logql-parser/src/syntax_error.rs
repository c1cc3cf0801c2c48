//! Maps a pest failure to the error Loki's goyacc parser would report.
//!
//! The failing token is found with [`crate::lexer`]; a lexer error at or
//! before it wins, as in Loki. goyacc lists expected tokens only when the
//! parser state has at most four; the states reachable here are recognised
//! from the preceding tokens.

use crate::error::ParseError;
use crate::lexer::{Token, tokenize};

pub(crate) fn syntax_error(input: &str, pos: usize) -> ParseError {
    let (toks, at) = locate(input, pos);
    let idx = match at {
        At::Lex(e) => {
            return ParseError::Syntax {
                line: e.line,
                col: e.col,
                msg: e.msg,
            };
        }
        At::Token(idx) => idx,
    };
    let Some(tok) = toks.get(idx) else {
        return ParseError::Syntax {
            line: 1,
            col: 1,
            msg: "syntax error".into(),
        };
    };
    let mut msg = format!("syntax error: unexpected {}", tok.name);
    if let Some(exp) = expecting(&toks[..idx]) {
        msg.push_str(", expecting ");
        msg.push_str(exp);
    }
    ParseError::Syntax {
        line: tok.line,
        col: tok.col,
        msg,
    }
}

/// Byte offset where the error [`syntax_error`] reports for `pos` starts:
/// the failing token, or the lexer error that comes first.
pub(crate) fn error_start(input: &str, pos: usize) -> usize {
    match locate(input, pos) {
        (_, At::Lex(e)) => e.start,
        (toks, At::Token(idx)) => toks.get(idx).map_or(0, |t| t.start),
    }
}

/// What Loki stops at: a lexer error, or the token at this index.
enum At {
    Lex(crate::lexer::LexError),
    Token(usize),
}

/// The tokens of `input` and what Loki fails on when pest fails at `pos`:
/// the token there, unless a lexer error comes at or before it.
fn locate(input: &str, pos: usize) -> (Vec<Token>, At) {
    let (toks, lex_err) = tokenize(input);
    let idx = toks
        .iter()
        .position(|t| t.end > pos || t.name == "$end")
        .unwrap_or(toks.len().saturating_sub(1));
    if let Some(e) = lex_err {
        let tok_start = toks.get(idx).map_or(usize::MAX, |t| t.start);
        if e.start <= tok_start || idx + 1 >= toks.len() {
            return (toks, At::Lex(e));
        }
    }
    (toks, At::Token(idx))
}

fn expecting(before: &[Token]) -> Option<&'static str> {
    let name = |back: usize| {
        before
            .len()
            .checked_sub(back + 1)
            .map(|i| before[i].name.as_str())
    };
    let prev = name(0)?;
    let prev2 = name(1);
    // Inside a selector when the last unmatched brace is `{`.
    let mut depth = 0i32;
    for t in before {
        match t.name.as_str() {
            "{" => depth += 1,
            "}" => depth -= 1,
            _ => {}
        }
    }
    let in_selector = depth > 0;
    let grouping = in_grouping(before);
    let stage = stage(before);
    let line_filter_op = |i: usize| match name(i) {
        Some("|=" | "|~" | "|>" | "!>") => true,
        // `!=`/`!~` after a name compare a label, else they filter lines.
        Some("!=" | "!~") => name(i + 1) != Some("IDENTIFIER"),
        _ => false,
    };
    // A label filter ends at token `i` (`name op value`, the value maybe negative).
    let label_filter_value = |i: usize| {
        let op = if name(i + 1) == Some("-") {
            i + 2
        } else {
            i + 1
        };
        matches!(name(i), Some("STRING" | "NUMBER" | "DURATION" | "BYTES"))
            && matches!(
                name(op),
                Some("=" | "!=" | "=~" | "!~" | ">" | ">=" | "<" | "<=" | "==")
            )
            && name(op + 1) == Some("IDENTIFIER")
            && !stage.is_some_and(is_extraction_stage)
    };
    match prev {
        "{" => Some("IDENTIFIER or }"),
        "," if in_selector => Some("IDENTIFIER"),
        "STRING" if in_selector => Some("} or ,"),
        "IDENTIFIER" if in_selector => Some("= or =~ or !~ or !="),
        "=" | "!=" | "=~" | "!~" if in_selector => Some("STRING"),
        "regexp" | "pattern" | "line_format" => Some("STRING"),
        "unwrap" => Some("IDENTIFIER or BYTES_CONV or DURATION_CONV or DURATION_SECONDS_CONV"),
        "IDENTIFIER" if prev2 == Some("unwrap") => Some("RANGE or |"),
        "(" if prev2 == Some("VECTOR") || prev2 == Some("ip") => Some(if prev2 == Some("ip") {
            "STRING"
        } else {
            "NUMBER"
        }),
        "(" if prev2.is_some_and(is_grouping_keyword) => Some("IDENTIFIER or )"),
        "(" if prev2.is_some_and(|p| {
            p.ends_with("_OVER_TIME") || p.starts_with("RATE") || p.starts_with("BYTES_")
        }) =>
        {
            Some("NUMBER or { or (")
        }
        "," if prev2 == Some("NUMBER")
            && name(2) == Some("(")
            && name(3) == Some("QUANTILE_OVER_TIME") =>
        {
            Some("{ or (")
        }
        "by" | "without" | "on" | "ignoring" => Some("("),
        "IDENTIFIER" if grouping => Some(", or )"),
        "," if grouping => Some("IDENTIFIER"),
        "offset" => Some("DURATION"),
        "RANGE" => Some(")"),
        ")" if closes_prefix_grouping(before) => Some("("),
        ")" if prev2 == Some("IDENTIFIER") && name(2) == Some("(") && name(4) == Some("unwrap") => {
            Some("RANGE or |")
        }
        "IDENTIFIER"
            if stage == Some("label_format")
                && (prev2 == Some("label_format") || prev2 == Some(",")) =>
        {
            Some("=")
        }
        _ if line_filter_op(0) => Some("STRING or ip"),
        "or" if prev2 == Some("STRING") && line_filter_op(2) => Some("STRING or ip"),
        "or" | "and" | "," if label_filter_value(1) => Some("IDENTIFIER or ("),
        "|" if stage_before_last(before) == Some("unwrap") => Some("IDENTIFIER or ("),
        "=" if prev2 == Some("IDENTIFIER") => match stage {
            Some("label_format") => Some("IDENTIFIER or STRING"),
            Some("json" | "logfmt") => Some("STRING"),
            _ => None,
        },
        "," if stage.is_some_and(is_extraction_stage) => Some("IDENTIFIER"),
        "keep" | "drop" | "label_format" if prev2 == Some("|") => Some("IDENTIFIER"),
        "-" | "+" if prev2.is_none() || prev2 == Some("(") || prev2 == Some(",") => Some("NUMBER"),
        _ => None,
    }
}

/// The stage before a trailing `|`.
fn stage_before_last(before: &[Token]) -> Option<&str> {
    stage(before.get(..before.len().checked_sub(1)?)?)
}

/// Stages that take a list of names (and not label filters).
fn is_extraction_stage(name: &str) -> bool {
    matches!(name, "json" | "logfmt" | "label_format" | "drop" | "keep")
}

/// Whether the last token closes the `by (…)`/`without (…)` written
/// between a vector aggregation and its `(`: `sum by (x)`.
fn closes_prefix_grouping(before: &[Token]) -> bool {
    let Some(open) = before.iter().rposition(|t| t.name == "(") else {
        return false;
    };
    open >= 2
        && matches!(before[open - 1].name.as_str(), "by" | "without")
        && is_vector_aggregation(&before[open - 2].name)
        && before[open + 1..before.len() - 1]
            .iter()
            .all(|t| t.name == "IDENTIFIER" || t.name == ",")
}

/// Token names of Loki's vector aggregations.
fn is_vector_aggregation(name: &str) -> bool {
    matches!(
        name,
        "SUM"
            | "AVG"
            | "COUNT"
            | "MAX"
            | "MIN"
            | "STDDEV"
            | "STDVAR"
            | "TOPK"
            | "BOTTOMK"
            | "SORT"
            | "SORT_DESC"
            | "APPROX_TOPK"
    )
}

/// Keywords followed by a parenthesised list of label names.
fn is_grouping_keyword(name: &str) -> bool {
    matches!(
        name,
        "by" | "without" | "on" | "ignoring" | "group_left" | "group_right"
    )
}

/// Whether the innermost unclosed `(` opens a list of label names.
fn in_grouping(before: &[Token]) -> bool {
    let mut depth = 0usize;
    for (i, t) in before.iter().enumerate().rev() {
        match t.name.as_str() {
            ")" => depth += 1,
            "(" if depth == 0 => {
                return i
                    .checked_sub(1)
                    .is_some_and(|j| is_grouping_keyword(&before[j].name));
            }
            "(" => depth -= 1,
            _ => {}
        }
    }
    false
}

/// The keyword of the pipeline stage the tokens end in: the token after
/// the last `|`.
fn stage(before: &[Token]) -> Option<&str> {
    let bar = before.iter().rposition(|t| t.name == "|")?;
    before.get(bar + 1).map(|t| t.name.as_str())
}

#[cfg(test)]
mod tests {
    fn err(q: &str) -> String {
        crate::parse(q)
            .map(|e| e.to_string())
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn loki_wording_and_positions() {
        assert_eq!(
            err(r#"{foo="bar""#),
            "parse error at line 1, col 11: syntax error: unexpected $end, expecting } or ,"
        );
        assert_eq!(
            err(r#"{foo="bar}"#),
            "parse error at line 1, col 6: literal not terminated"
        );
        assert_eq!(
            err(r#"{a="b"} | regexp"#),
            "parse error at line 1, col 17: syntax error: unexpected $end, expecting STRING"
        );
        assert_eq!(
            err(r#"{app="x" |= "y""#),
            "parse error at line 0, col 10: syntax error: unexpected |=, expecting } or ,"
        );
        assert_eq!(
            err("vector(abc)"),
            "parse error at line 1, col 8: syntax error: unexpected IDENTIFIER, expecting NUMBER"
        );
        assert_eq!(
            err(r#"{a="b"} | json | x > 5mh"#),
            "parse error at line 1, col 23: syntax error: unexpected IDENTIFIER"
        );
    }
}

#[cfg(test)]
mod expecting_tails {
    use super::tests_support::err;

    /// Loki 3.7.8's answers, one per class of parser state.
    #[test]
    fn tails_as_loki_lists_them() {
        for (q, want) in [
            // Grouping lists.
            (
                r#"sum without ( (rate({a="b"}[1m]))"#,
                "1, col 15: syntax error: unexpected (, expecting IDENTIFIER or )",
            ),
            (
                r#"sum(rate({a="b"}[1m])) / on("#,
                "1, col 29: syntax error: unexpected $end, expecting IDENTIFIER or )",
            ),
            (
                r#"sum(rate({a="b"}[1m])) / on"#,
                "1, col 28: syntax error: unexpected $end, expecting (",
            ),
            (
                r#"sum(rate({a="b"}[1m])) by"#,
                "1, col 26: syntax error: unexpected $end, expecting (",
            ),
            (
                "sum by (x,",
                "1, col 11: syntax error: unexpected $end, expecting IDENTIFIER",
            ),
            (
                "sum by (x",
                "1, col 10: syntax error: unexpected $end, expecting , or )",
            ),
            (
                "sum by (job) | (",
                "1, col 14: syntax error: unexpected |, expecting (",
            ),
            // Line filters.
            (
                r#"{a="b"} |> )"#,
                "1, col 12: syntax error: unexpected ), expecting STRING or ip",
            ),
            (
                r#"{a="b"} |= "x" or"#,
                "1, col 18: syntax error: unexpected $end, expecting STRING or ip",
            ),
            (
                r#"{a="b"} |= ip("#,
                "1, col 15: syntax error: unexpected $end, expecting STRING",
            ),
            // Label filters.
            (
                r#"{a="b"} | json | x="1" or"#,
                "1, col 26: syntax error: unexpected $end, expecting IDENTIFIER or (",
            ),
            (
                r#"{a="b"} | logfmt | c>=-1 , |"#,
                "1, col 28: syntax error: unexpected |, expecting IDENTIFIER or (",
            ),
            (
                r#"{a="b"} | json | x = ip("#,
                "1, col 25: syntax error: unexpected $end, expecting STRING",
            ),
            // Stages with name lists.
            (
                r#"{a="b"} | label_format x="#,
                "1, col 26: syntax error: unexpected $end, expecting IDENTIFIER or STRING",
            ),
            (
                r#"{a="b"} | label_format x"#,
                "1, col 25: syntax error: unexpected $end, expecting =",
            ),
            (
                r#"{a="b"} | drop x,"#,
                "1, col 18: syntax error: unexpected $end, expecting IDENTIFIER",
            ),
            (
                r#"{a="b"} | json x="#,
                "1, col 18: syntax error: unexpected $end, expecting STRING",
            ),
            (
                r#"{a="b"} | json x="a","#,
                "1, col 22: syntax error: unexpected $end, expecting IDENTIFIER",
            ),
            (
                r#"{a="b"} | keep"#,
                "1, col 15: syntax error: unexpected $end, expecting IDENTIFIER",
            ),
            // Range aggregations.
            (
                r#"rate({a="b"}[1m]"#,
                "1, col 17: syntax error: unexpected $end, expecting )",
            ),
            (
                r#"rate({a="b"}[1m] offset"#,
                "1, col 24: syntax error: unexpected $end, expecting DURATION",
            ),
            (
                "quantile_over_time(0.99,",
                "1, col 25: syntax error: unexpected $end, expecting { or (",
            ),
            (
                r#"sum_over_time({a="b"} | unwrap bytes(x) ( [5m])"#,
                "1, col 41: syntax error: unexpected (, expecting RANGE or |",
            ),
            (
                r#"rate({a="b"} | unwrap x | , y > 1 [1m])"#,
                "1, col 27: syntax error: unexpected ,, expecting IDENTIFIER or (",
            ),
            // No tail where Loki's state has more than four tokens.
            (
                r#"sum(rate({a="b"}[1m])) +"#,
                "1, col 25: syntax error: unexpected $end",
            ),
            ("topk(5,", "1, col 8: syntax error: unexpected $end"),
            (r#"{a="b"} |"#, "1, col 10: syntax error: unexpected $end"),
        ] {
            assert_eq!(err(q), format!("parse error at line {want}"), "{q}");
        }
    }
}

#[cfg(test)]
mod tests_support {
    pub(super) fn err(q: &str) -> String {
        crate::parse(q)
            .map(|e| e.to_string())
            .unwrap_or_else(|e| e.to_string())
    }
}

#[cfg(test)]
mod hostile {
    #[test]
    fn hostile_input_errors_without_panicking() {
        let deep = format!("{}1{}", "(".repeat(120), ")".repeat(120));
        assert_eq!(
            crate::parse(&deep).map(|e| e.to_string()).ok().as_deref(),
            Some("1")
        );
        let unclosed = "(".repeat(2000);
        assert!(crate::parse(&unclosed).is_err());
        assert!(crate::parse(&"a".repeat(6000)).is_err());
        for q in [
            "{é=\"x\"",
            "{a=\"é\"} |= \"ü\" | x > 5µq",
            "sum(",
            "{a=\"b\"} | json | x > -",
            "\u{0}",
        ] {
            assert!(crate::parse(q).is_err(), "{q}");
        }
    }
}
