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
    let prev = before.last()?.name.as_str();
    let prev2 = before.len().checked_sub(2).map(|i| before[i].name.as_str());
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
    match prev {
        "{" => Some("IDENTIFIER or }"),
        "," if in_selector => Some("IDENTIFIER"),
        "STRING" if in_selector => Some("} or ,"),
        "IDENTIFIER" if in_selector => Some("= or =~ or !~ or !="),
        "=" | "!=" | "=~" | "!~" if in_selector => Some("STRING"),
        "regexp" | "pattern" | "line_format" => Some("STRING"),
        "unwrap" => Some("IDENTIFIER or BYTES_CONV or DURATION_CONV or DURATION_SECONDS_CONV"),
        "(" if prev2 == Some("VECTOR") => Some("NUMBER"),
        "(" if prev2.is_some_and(|p| {
            p.ends_with("_OVER_TIME") || p.starts_with("RATE") || p.starts_with("BYTES_")
        }) =>
        {
            Some("NUMBER or { or (")
        }
        "-" | "+" if prev2.is_none() || prev2 == Some("(") || prev2 == Some(",") => Some("NUMBER"),
        _ => None,
    }
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
