//! A token scanner that mirrors Loki's lexer closely enough to name the
//! token at a syntax error, report its position (including Loki's `line 0`
//! for tokens read character by character) and reproduce lexer errors.
//! Parsing itself is done by the pest grammar; this is only for errors.

use crate::grammar::{LEXER_ONLY_KEYWORDS, is_keyword};
use go::duration::Duration;
use go::humanize::parse_bytes;

/// A token as Loki's parser would name it in `unexpected …`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    /// Name used in messages: `IDENTIFIER`, `STRING`, `|=`, `$end`, …
    pub(crate) name: String,
    /// Byte offsets of the token.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Line Loki reports (0 for multi-character scans).
    pub(crate) line: usize,
    /// Column in characters, 1-based.
    pub(crate) col: usize,
}

/// A lexer error with Loki's message and position.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LexError {
    pub(crate) msg: String,
    pub(crate) start: usize,
    pub(crate) line: usize,
    pub(crate) col: usize,
}

pub(crate) const FUNCTIONS: [&str; 32] = [
    "rate",
    "rate_counter",
    "count_over_time",
    "bytes_rate",
    "bytes_over_time",
    "avg_over_time",
    "sum_over_time",
    "min_over_time",
    "max_over_time",
    "stdvar_over_time",
    "stddev_over_time",
    "quantile_over_time",
    "first_over_time",
    "last_over_time",
    "absent_over_time",
    "vector",
    "sum",
    "avg",
    "max",
    "min",
    "count",
    "stddev",
    "stdvar",
    "bottomk",
    "topk",
    "sort",
    "sort_desc",
    "approx_topk",
    "duration_seconds",
    "duration",
    "ip",
    "label_replace",
];

const TWO_CHAR: [&str; 11] = [
    "!=", "=~", "!~", "!>", "|=", "|~", "|>", "==", ">=", "<=", "!=",
];
const ONE_CHAR: &str = ",.{}=|()[]+-*/%^><";

struct Cursor<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
    col: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }
    fn peek_at(&self, n: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(n)
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
}

/// Scans `src` into tokens, stopping at the first lexer error.
pub(crate) fn tokenize(src: &str) -> (Vec<Token>, Option<LexError>) {
    let mut cur = Cursor {
        src,
        pos: 0,
        line: 1,
        col: 1,
    };
    let mut toks = Vec::new();
    loop {
        while let Some(c) = cur.peek() {
            if c == '#' {
                while cur.peek().is_some_and(|c| c != '\n') {
                    cur.bump();
                }
            } else if c.is_whitespace() {
                cur.bump();
            } else {
                break;
            }
        }
        let (start, line, col) = (cur.pos, cur.line, cur.col);
        let Some(c) = cur.peek() else {
            toks.push(Token {
                name: "$end".into(),
                start,
                end: start,
                line,
                col,
            });
            return (toks, None);
        };
        let err = |msg: &str, zero: bool| LexError {
            msg: msg.into(),
            start,
            line: if zero { 0 } else { line },
            col,
        };
        let mut tok = |name: &str, cur: &Cursor<'_>, zero: bool| {
            toks.push(Token {
                name: name.into(),
                start,
                end: cur.pos,
                line: if zero { 0 } else { line },
                col,
            });
        };
        if c == '"' || c == '`' {
            cur.bump();
            let mut closed = false;
            while let Some(ch) = cur.peek() {
                if c == '"' && ch == '\n' {
                    break;
                }
                cur.bump();
                if ch == c {
                    closed = true;
                    break;
                }
                if c == '"' && ch == '\\' {
                    cur.bump();
                }
            }
            if !closed {
                return (toks, Some(err("literal not terminated", false)));
            }
            tok("STRING", &cur, false);
            continue;
        }
        if c == '[' {
            cur.bump();
            let body_start = cur.pos;
            while cur.peek().is_some_and(|c| c != ']') {
                cur.bump();
            }
            if cur.peek().is_none() {
                return (toks, Some(err("missing closing ']' in duration", true)));
            }
            let body = &src[body_start..cur.pos];
            cur.bump();
            if let Err(e) = Duration::parse_prometheus(body) {
                return (toks, Some(err(&e.to_string(), true)));
            }
            tok("RANGE", &cur, true);
            continue;
        }
        let starts_number =
            c.is_ascii_digit() || (c == '.' && cur.peek_at(1).is_some_and(|d| d.is_ascii_digit()));
        if starts_number
            || (c == '-'
                && cur
                    .peek_at(1)
                    .is_some_and(|d| d.is_ascii_digit() || d == '.'))
        {
            // A '-' only starts a token here if a duration follows it.
            let num_start = cur.pos;
            let mut probe = Cursor {
                src,
                pos: cur.pos,
                line: cur.line,
                col: cur.col,
            };
            if c == '-' {
                probe.bump();
            }
            let n_end = scan_number(&mut probe);
            let tail_start = probe.pos;
            let tail_dur = take_while(&probe, |r| {
                r.is_numeric() || r == '.' || "nuµmshdwy".contains(r)
            });
            if !tail_dur.is_empty()
                && Duration::parse_logql(&src[num_start..tail_start + tail_dur.len()]).is_ok()
            {
                while cur.pos < tail_start + tail_dur.len() {
                    cur.bump();
                }
                tok("DURATION", &cur, true);
                continue;
            }
            if c == '-' {
                cur.bump();
                tok("-", &cur, false);
                continue;
            }
            let tail_b = take_while(&probe, |r| {
                r.is_numeric() || r == '.' || "BikKMGTP".contains(r)
            });
            if !tail_b.is_empty()
                && parse_bytes(&src[num_start..tail_start + tail_b.len()]).is_some()
            {
                while cur.pos < tail_start + tail_b.len() {
                    cur.bump();
                }
                tok("BYTES", &cur, true);
                continue;
            }
            while cur.pos < n_end {
                cur.bump();
            }
            tok("NUMBER", &cur, false);
            continue;
        }
        if c == '-' && cur.peek_at(1) == Some('-') {
            let rest = &src[cur.pos..];
            for flag in ["--strict", "--keep-empty"] {
                if rest.starts_with(flag)
                    && !rest[flag.len()..].starts_with(|r: char| r.is_alphabetic() || r == '-')
                {
                    for _ in 0..flag.chars().count() {
                        cur.bump();
                    }
                    tok("PARSER_FLAG", &cur, true);
                    break;
                }
            }
            if cur.pos != start {
                continue;
            }
        }
        if c.is_alphabetic() || c == '_' {
            while cur.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                cur.bump();
            }
            let word = src[start..cur.pos].to_ascii_lowercase();
            let name = if FUNCTIONS.contains(&word.as_str()) && is_function(&src[cur.pos..]) {
                match word.as_str() {
                    "duration" => "DURATION_CONV".to_string(),
                    "duration_seconds" => "DURATION_SECONDS_CONV".to_string(),
                    "ip" | "label_replace" => word.clone(),
                    w => w.to_ascii_uppercase(),
                }
            } else if word == "bytes" && is_function(&src[cur.pos..]) {
                "BYTES_CONV".to_string()
            } else if is_keyword(&word) || LEXER_ONLY_KEYWORDS.contains(&word.as_str()) {
                word
            } else {
                "IDENTIFIER".to_string()
            };
            tok(&name, &cur, false);
            continue;
        }
        let two: String = src[cur.pos..].chars().take(2).collect();
        if TWO_CHAR.contains(&two.as_str()) {
            cur.bump();
            cur.bump();
            tok(&two, &cur, true);
            continue;
        }
        cur.bump();
        let name = if ONE_CHAR.contains(c) {
            c.to_string()
        } else {
            "IDENTIFIER".to_string()
        };
        tok(&name, &cur, false);
    }
}

/// Scans a Go number literal from the cursor; returns its end offset.
fn scan_number(c: &mut Cursor<'_>) -> usize {
    let rest = &c.src[c.pos..];
    let mut n = 0;
    let b = rest.as_bytes();
    if rest.starts_with("0x") || rest.starts_with("0X") {
        n = 2;
        while n < b.len() && (b[n].is_ascii_hexdigit() || b[n] == b'_') {
            n += 1;
        }
    } else {
        while n < b.len() && (b[n].is_ascii_digit() || b[n] == b'_') {
            n += 1;
        }
        if n < b.len() && b[n] == b'.' {
            n += 1;
            while n < b.len() && b[n].is_ascii_digit() {
                n += 1;
            }
        }
        if n < b.len() && (b[n] == b'e' || b[n] == b'E') {
            let mut m = n + 1;
            if m < b.len() && (b[m] == b'+' || b[m] == b'-') {
                m += 1;
            }
            if m < b.len() && b[m].is_ascii_digit() {
                while m < b.len() && b[m].is_ascii_digit() {
                    m += 1;
                }
                n = m;
            }
        }
    }
    c.pos += n;
    c.col += n;
    c.pos
}

fn take_while<'a>(c: &Cursor<'a>, f: impl Fn(char) -> bool) -> &'a str {
    let rest = &c.src[c.pos..];
    let end = rest
        .char_indices()
        .find(|&(_, r)| r.is_whitespace() || !f(r))
        .map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

/// Loki treats a function name as a function only before `(` or `by (`/`without (`.
fn is_function(rest: &str) -> bool {
    let t = rest.trim_start();
    if t.starts_with('(') {
        return true;
    }
    let lower = t.to_ascii_lowercase();
    for kw in ["by", "without"] {
        if let Some(after) = lower.strip_prefix(kw) {
            return after.trim_start().starts_with('(');
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &str) -> Vec<String> {
        tokenize(s).0.into_iter().map(|t| t.name).collect()
    }

    #[test]
    fn names_tokens_as_loki() {
        assert_eq!(
            names(r#"{a="b"} |= "x""#),
            [
                "{",
                "IDENTIFIER",
                "=",
                "STRING",
                "}",
                "|=",
                "STRING",
                "$end"
            ]
        );
        assert_eq!(
            names("rate(x[5m])"),
            ["RATE", "(", "IDENTIFIER", "RANGE", ")", "$end"]
        );
        assert_eq!(names("2w3y"), ["NUMBER", "IDENTIFIER", "$end"]);
        assert_eq!(names("-20.5MB"), ["-", "BYTES", "$end"]);
        assert_eq!(names("-2.5h"), ["DURATION", "$end"]);
    }

    #[test]
    fn reports_lexer_errors_with_positions() {
        let (_, e) = tokenize(r#"{foo="bar}"#);
        let e = e.unwrap();
        assert_eq!(
            (e.msg.as_str(), e.line, e.col),
            ("literal not terminated", 1, 6)
        );
        let (toks, _) = tokenize("a |= b");
        assert_eq!((toks[1].line, toks[1].col), (0, 3));
    }
}
