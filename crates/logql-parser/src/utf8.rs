//! Loki's answer to a query whose bytes are not UTF-8.
//!
//! A client gets such bytes into LogQL by percent-encoding them
//! (`query=%7Bapp%3D%22%FF%22%7D`, in any endpoint that parses a selector);
//! a Go escape such as `"\xff"` is valid UTF-8 text and Loki accepts it.
//! Loki's scanner reports `invalid UTF-8 encoding` when it decodes the
//! first bad byte, at the position its token fields hold at that moment:
//! the token being scanned, or, when the byte follows whitespace, line 0
//! and the column of the previous token. That position is reproduced here
//! from the valid prefix. A syntax error on a token before the bad byte is
//! reported first, as Loki's parser stops there.

use crate::error::ParseError;
use crate::lexer::tokenize;

/// Loki's message for the first byte that is not UTF-8.
const MSG: &str = "invalid UTF-8 encoding";

/// Loki's parse error for LogQL bytes that are not valid UTF-8, or `None`
/// when they are (then [`crate::parse`] decides).
///
/// Callers that decode request parameters lossily keep the raw bytes of a
/// value that was not UTF-8 and ask this before parsing it, since the
/// replacement characters would otherwise parse.
pub fn invalid_utf8_error(raw: &[u8]) -> Option<ParseError> {
    let bad = std::str::from_utf8(raw).err()?.valid_up_to();
    if raw.len() >= crate::MAX_QUERY_LENGTH {
        return Some(ParseError::Semantic(format!(
            "input size too long ({} > {})",
            raw.len(),
            crate::MAX_QUERY_LENGTH
        )));
    }
    let lossy = String::from_utf8_lossy(raw);
    if let Err(e) = crate::limits::check_nesting(&lossy) {
        return Some(e);
    }
    // The prefix before the first bad byte is the same in `raw` and `lossy`.
    let at = scanner_position(&lossy[..bad]);
    if crate::syntax_error_start(&lossy).is_some_and(|start| start < at.before)
        && let Err(e @ ParseError::Syntax { .. }) = crate::parse_unvalidated(&lossy)
    {
        return Some(e);
    }
    Some(if at.line == 0 && at.col == 0 {
        // Loki prints a position of line 0, col 0 as none.
        ParseError::Semantic(MSG.into())
    } else {
        ParseError::Syntax {
            line: at.line,
            col: at.col,
            msg: MSG.into(),
        }
    })
}

/// Where Loki reports the bad byte, and the offset before which a syntax
/// error would have stopped Loki's parser first.
struct Position {
    before: usize,
    line: usize,
    col: usize,
}

/// Tokens whose last character Loki's lexer reads after the scanner set
/// the token's position (its `Next` clears the line to 0).
fn read_by_next(name: &str) -> bool {
    name == "RANGE" || (name.len() == 2 && !name.chars().any(char::is_alphanumeric))
}

/// The 1-based line of byte `offset`.
fn real_line(src: &str, offset: usize) -> usize {
    1 + src[..offset].bytes().filter(|&b| b == b'\n').count()
}

/// The 1-based column, in characters, of byte `offset`.
fn column(src: &str, offset: usize) -> usize {
    let line_start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
    1 + src[line_start..offset].chars().count()
}

/// Whether Loki's lexer treats `word` as a possible function name.
fn is_function_name(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower == "bytes" || crate::lexer::FUNCTIONS.contains(&lower.as_str())
}

/// Whether the look-ahead Loki's lexer makes after a function name
/// (`isFunction`: spaces, then `(`, or `by`/`without`, spaces and one
/// character; anything else is read to the end) decodes the character
/// after `rest`.
fn lookahead_reaches_end(rest: &str) -> bool {
    let t = rest.trim_start();
    if t.starts_with('(') {
        return t.len() == 1;
    }
    let lower = t.to_ascii_lowercase();
    for kw in ["by", "without"] {
        if let Some(after) = lower.strip_prefix(kw) {
            return after.trim_start().chars().count() <= 1;
        }
    }
    true
}

/// Loki's error position for a bad byte right after `prefix` (valid UTF-8).
fn scanner_position(prefix: &str) -> Position {
    let end = prefix.len();
    let (toks, lex_err) = tokenize(prefix);
    // A function name makes Loki's lexer look ahead on a copy of its
    // scanner; the copy decodes the bad byte first when it reaches it.
    if let Some(t) = toks.iter().find(|t| {
        is_function_name(&prefix[t.start..t.end]) && lookahead_reaches_end(&prefix[t.end..])
    }) {
        return Position {
            before: t.start,
            line: real_line(prefix, t.start),
            col: t.col,
        };
    }
    if let Some(e) = lex_err {
        let open = &prefix[e.start..];
        if e.msg == "literal not terminated" && !(open.starts_with('"') && open.contains('\n')) {
            // Inside a string literal: the scanner reads it whole.
            return Position {
                before: e.start,
                line: real_line(prefix, e.start),
                col: e.col,
            };
        }
        if e.msg.starts_with("missing closing ']'") {
            // Inside a range: Loki's lexer reads its body with `Next`,
            // except the character right after `[`.
            let line = if end == e.start + 1 {
                real_line(prefix, e.start)
            } else {
                0
            };
            return Position {
                before: e.start,
                line,
                col: e.col,
            };
        }
        // A real lexer error comes first; the parse reports it.
        return Position {
            before: end,
            line: 0,
            col: 0,
        };
    }
    let last = toks.iter().rev().find(|t| t.name != "$end");
    let tail_start = last.map_or(0, |t| t.end);
    // Comments in the tail: Loki's lexer sees `#` as a token, then reads
    // the rest of the line with `Next`.
    let mut hash = None;
    let mut open_comment = false;
    let mut i = tail_start;
    while i < end {
        let c = prefix[i..].chars().next().unwrap_or(' ');
        if c == '#' {
            hash = Some(i);
            let line_end = prefix[i..].find('\n').map_or(end, |n| i + n);
            open_comment = line_end == end;
            i = line_end;
        } else {
            i += c.len_utf8();
        }
    }
    match (hash, last) {
        (Some(h), _) if open_comment => Position {
            before: end,
            line: if h + 1 == end {
                real_line(prefix, h)
            } else {
                0
            },
            col: column(prefix, h),
        },
        (Some(h), _) => Position {
            before: end,
            line: 0,
            col: column(prefix, h),
        },
        (None, Some(t)) if t.end < end => Position {
            before: end,
            line: 0,
            col: t.col,
        },
        (None, Some(t)) => Position {
            before: t.start,
            line: if read_by_next(&t.name) {
                0
            } else {
                real_line(prefix, t.start)
            },
            col: t.col,
        },
        // Nothing scanned yet: Loki reports its scanner's previous column,
        // which for a fresh scanner is none.
        (None, None) => Position {
            before: end,
            line: 0,
            col: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::invalid_utf8_error;

    /// The error for `q` with each `Ø` standing for the byte 0xFF.
    fn err(q: &str) -> String {
        let bytes = q.split('Ø').collect::<Vec<_>>().join("\u{0}").into_bytes();
        let bytes: Vec<u8> = bytes
            .into_iter()
            .map(|b| if b == 0 { 0xFF } else { b })
            .collect();
        invalid_utf8_error(&bytes).map_or_else(|| "valid".into(), |e| e.to_string())
    }

    /// Answers of Loki 3.7.8 to these queries, sent percent-encoded.
    #[test]
    fn positions_as_loki_reports_them() {
        for (q, want) in [
            (r#"{app="Ø"}"#, "line 1, col 6"),
            (r#"{app="aØb"}"#, "line 1, col 6"),
            ("{app=`Ø`}", "line 1, col 6"),
            (r#"{app=~"Ø"}"#, "line 1, col 7"),
            (r#"{app="a"}Ø"#, "line 1, col 9"),
            (r#"{app="a"} Ø"#, "line 0, col 9"),
            (r#"{Ø="a"}"#, "line 1, col 1"),
            (r#"{aØ="a"}"#, "line 1, col 2"),
            (r#"{app="a", bØ="c"}"#, "line 1, col 11"),
            (r#"{app="a", Ø"#, "line 0, col 9"),
            (r#"{app="a", b=Ø"#, "line 1, col 12"),
            (r#"{app="a", b="c"Ø"#, "line 1, col 13"),
            (r#"{app="a"} |= "Ø""#, "line 1, col 14"),
            (r#"{app="a"} | json | x="Ø""#, "line 1, col 22"),
            (r#"{app="a"} | line_format "Ø""#, "line 1, col 25"),
            (r#"{app="a"} # Ø"#, "line 0, col 11"),
            (r#"{app="a"} #Ø"#, "line 1, col 11"),
            (r#"{app="a"} # x Ø"#, "line 0, col 11"),
            (r#"rate({app="Ø"}[1m])"#, "line 1, col 11"),
            (r#"rate({app="a"}[1Øm])"#, "line 0, col 15"),
            (r#"rate({app="a"}[Ø1m])"#, "line 1, col 15"),
            (r#"rate({app="a"}[1m]Ø)"#, "line 0, col 15"),
            (r#"rate({app="a"}[1m] Ø)"#, "line 0, col 15"),
            (r#"sum(rate({app="a"}[1m])) by (Ø)"#, "line 1, col 29"),
            (r#"sum(rate({app="a"}[1m])) by Ø (x)"#, "line 0, col 26"),
            (r#"sum Ø(rate({app="a"}[1m]))"#, "line 1, col 1"),
            (r#"sum(Ø"#, "line 1, col 1"),
            (r#"sum by Ø"#, "line 1, col 1"),
            (r#"sum by (Ø"#, "line 1, col 1"),
            (r#"sum by (x, Ø"#, "line 0, col 10"),
            (r#"rate(Ø"#, "line 1, col 1"),
            (
                r#"count_over_time({app="a"}[1m]) by (x, "Ø""#,
                "line 1, col 39",
            ),
            (r#"{app="a"} | json | sum "Ø""#, "line 1, col 20"),
            (r#"{app="a"} | json | sum = "x" "Ø""#, "line 1, col 20"),
            (r#"{app="a"} |= "x" | json | x > 5mØ"#, "line 1, col 31"),
            (r#"{app="a"} |= "x" | json | x > 5m Ø"#, "line 0, col 31"),
            (r#"{app="a"} |= "x" | json | x > 5MBØ"#, "line 1, col 31"),
            (r#"{app="a"} |= "x" | json | x > 5Ø"#, "line 1, col 31"),
            (r#"{app="a"} |=Ø "x""#, "line 0, col 11"),
            (r#"{app="a"} |= Ø "x""#, "line 0, col 11"),
            (r#"{app="a"} | json Ø"#, "line 0, col 13"),
            (r#"{app="a"} | jsonØ"#, "line 1, col 13"),
            (r#"{app="a"} | json --strictØ"#, "line 1, col 18"),
            (r#"{app="a"} | logfmt --strict Ø"#, "line 0, col 20"),
            (r#"{app="a"} | json | x = -5mØ"#, "line 1, col 24"),
            (r#"{app="a"} -Ø"#, "line 1, col 11"),
            (r#"{app="a"} |Ø"#, "line 1, col 11"),
            (r#"{app="a"} != ip("Ø")"#, "line 1, col 17"),
            (r#"sum(rate({app="a"}[1m])) > 1Ø"#, "line 1, col 28"),
        ] {
            assert_eq!(
                err(q),
                format!("parse error at {want}: invalid UTF-8 encoding"),
                "{q}"
            );
        }
    }

    #[test]
    fn a_syntax_error_before_the_byte_comes_first() {
        assert_eq!(
            err(r#"{app="a"}}"Ø""#),
            "parse error at line 1, col 10: syntax error: unexpected }"
        );
        assert_eq!(
            err(r#"{app="a"}} "Ø""#),
            "parse error at line 1, col 10: syntax error: unexpected }"
        );
    }

    #[test]
    fn utf8_text_is_left_to_the_parser() {
        assert_eq!(err(r#"{app="\xff"}"#), "valid");
        assert_eq!(err(r#"{app="�"}"#), "valid");
    }
}
