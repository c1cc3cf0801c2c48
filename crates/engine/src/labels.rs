//! Label sets: parsing VictoriaLogs `_stream` values, Loki label-name rules,
//! and Loki's label-set string.
//!
//! Loki sorts the streams of a log answer by the label-set string that
//! Prometheus' `labels.Labels.String()` prints: labels sorted by name, joined
//! by `", "`, each `name="value"` with the value quoted like Go's
//! `strconv.Quote`, e.g. `{app="api", env="prod"}`. [`write_label_string`]
//! prints exactly that so the proxy's order matches Loki's byte for byte.

use std::borrow::Cow;

use go::strconv::append_quote;

/// Why a `_stream` value could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid _stream value: {0}")]
pub struct StreamParseError(pub String);

/// One `(name, value)` pair of a parsed `_stream`.
pub type LabelPair<'a> = (Cow<'a, str>, Cow<'a, str>);

/// Parses a VictoriaLogs `_stream` value such as `{app="api",env="prod"}` into label pairs.
///
/// Names are returned as VictoriaLogs spells them (possibly dotted, see
/// [`sanitize_label_name`]); values are unescaped (`\"`, `\\`, `\n`, `\t`,
/// `\r`, `\uXXXX` …) and borrowed when they contain no escape. Pairs keep the
/// order of the input; VictoriaLogs already sorts them by name.
///
/// # Errors
/// [`StreamParseError`] when the value is not a label set.
pub fn parse_stream(s: &str) -> Result<Vec<LabelPair<'_>>, StreamParseError> {
    let mut out = Vec::new();
    let mut p = StreamParser { s, pos: 0 };
    p.skip_ws();
    p.expect(b'{')?;
    p.skip_ws();
    if p.eat(b'}') {
        return p.finish(out);
    }
    loop {
        p.skip_ws();
        let name = p.name()?;
        p.skip_ws();
        p.expect(b'=')?;
        p.skip_ws();
        let value = p.quoted()?;
        out.push((name, value));
        p.skip_ws();
        if p.eat(b',') {
            continue;
        }
        p.expect(b'}')?;
        return p.finish(out);
    }
}

struct StreamParser<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> StreamParser<'a> {
    fn err(&self, what: &str) -> StreamParseError {
        StreamParseError(format!("{what} at offset {} in {:?}", self.pos, self.s))
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), StreamParseError> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", b as char)))
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn finish<T>(mut self, v: T) -> Result<T, StreamParseError> {
        self.skip_ws();
        if self.pos == self.s.len() {
            Ok(v)
        } else {
            Err(self.err("trailing data"))
        }
    }

    /// A label name: anything up to `=` (VictoriaLogs allows dots, slashes …),
    /// or a quoted name.
    fn name(&mut self) -> Result<Cow<'a, str>, StreamParseError> {
        if self.peek() == Some(b'"') {
            return self.quoted();
        }
        let start = self.pos;
        while let Some(b) = self.peek() {
            if matches!(
                b,
                b'=' | b',' | b'}' | b'{' | b'"' | b' ' | b'\t' | b'\n' | b'\r'
            ) {
                break;
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.err("expected a label name"));
        }
        Ok(Cow::Borrowed(&self.s[start..self.pos]))
    }

    /// A double-quoted string with JSON/Go-style escapes.
    fn quoted(&mut self) -> Result<Cow<'a, str>, StreamParseError> {
        self.expect(b'"')?;
        let start = self.pos;
        let bytes = self.s.as_bytes();
        // Fast path: no backslash before the closing quote.
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b'"' => {
                    let v = &self.s[start..self.pos];
                    self.pos += 1;
                    return Ok(Cow::Borrowed(v));
                }
                b'\\' => break,
                _ => self.pos += 1,
            }
        }
        let mut owned = String::with_capacity(self.pos - start + 8);
        owned.push_str(&self.s[start..self.pos]);
        loop {
            let Some(&b) = bytes.get(self.pos) else {
                return Err(self.err("unterminated string"));
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    return Ok(Cow::Owned(owned));
                }
                b'\\' => {
                    self.pos += 1;
                    let Some(&e) = bytes.get(self.pos) else {
                        return Err(self.err("unterminated escape"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => owned.push('"'),
                        b'\\' => owned.push('\\'),
                        b'/' => owned.push('/'),
                        b'\'' => owned.push('\''),
                        b'n' => owned.push('\n'),
                        b't' => owned.push('\t'),
                        b'r' => owned.push('\r'),
                        b'b' => owned.push('\u{8}'),
                        b'f' => owned.push('\u{c}'),
                        b'a' => owned.push('\u{7}'),
                        b'v' => owned.push('\u{b}'),
                        b'u' => {
                            let c = self.unicode_escape()?;
                            owned.push(c);
                        }
                        _ => return Err(self.err("unknown escape")),
                    }
                }
                _ => {
                    // Copy a run of plain characters at once (keeps UTF-8 intact).
                    let run_start = self.pos;
                    while let Some(&c) = bytes.get(self.pos) {
                        if c == b'"' || c == b'\\' {
                            break;
                        }
                        self.pos += 1;
                    }
                    owned.push_str(&self.s[run_start..self.pos]);
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, StreamParseError> {
        let Some(h) = self.s.get(self.pos..self.pos + 4) else {
            return Err(self.err("short \\u escape"));
        };
        let v = u32::from_str_radix(h, 16).map_err(|_| self.err("bad \\u escape"))?;
        self.pos += 4;
        Ok(v)
    }

    fn unicode_escape(&mut self) -> Result<char, StreamParseError> {
        let hi = self.hex4()?;
        if (0xD800..0xDC00).contains(&hi) {
            // A surrogate pair: `\uD83D\uDE00`.
            if self.s.as_bytes().get(self.pos..self.pos + 2) == Some(b"\\u") {
                self.pos += 2;
                let lo = self.hex4()?;
                if (0xDC00..0xE000).contains(&lo) {
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return char::from_u32(c).ok_or_else(|| self.err("bad surrogate pair"));
                }
            }
            return Ok(char::REPLACEMENT_CHARACTER);
        }
        Ok(char::from_u32(hi).unwrap_or(char::REPLACEMENT_CHARACTER))
    }
}

/// Reports whether `name` is a valid Loki label name (`[a-zA-Z_][a-zA-Z0-9_]*`).
///
/// Grafana builds LogQL from the names it is shown, so every name the proxy
/// reports must be expressible in LogQL.
pub fn is_valid_label_name(name: &str) -> bool {
    let b = name.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
        _ => return false,
    }
    b[1..]
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// Turns a VictoriaLogs field name into the Loki label name Loki would report.
///
/// Loki stores OTLP attributes and parser output with every character outside
/// `[a-zA-Z0-9_]` replaced by `_` (`k8s.pod.name` → `k8s_pod_name`), and a name
/// starting with a digit gets a leading `_`. Borrowed when already valid.
pub fn sanitize_label_name(name: &str) -> Cow<'_, str> {
    if is_valid_label_name(name) {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 1);
    push_sanitized(&mut out, name);
    Cow::Owned(out)
}

/// Appends the sanitized form of `name` (see [`sanitize_label_name`]) to `out`.
pub fn push_sanitized(out: &mut String, name: &str) {
    if name.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        out.push('_');
    }
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.push('_');
        }
    }
}

/// Writes the Loki/Prometheus label-set string for `labels`, which must be
/// sorted by name: `{a="1", b="2"}`, values quoted like Go's `strconv.Quote`.
///
/// Names that are not valid label names are quoted too, as Prometheus does.
pub fn write_label_string<'n, I>(out: &mut Vec<u8>, labels: I)
where
    I: IntoIterator<Item = (&'n str, &'n str)>,
{
    out.push(b'{');
    for (i, (name, value)) in labels.into_iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        if is_valid_label_name(name) {
            out.extend_from_slice(name.as_bytes());
        } else {
            append_quote(out, name);
        }
        out.push(b'=');
        append_quote(out, value);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(s: &str) -> Vec<(String, String)> {
        parse_stream(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.to_owned(), v.to_owned())
    }

    #[test]
    fn parses_simple_and_empty_sets() {
        assert_eq!(
            pairs(r#"{app="api",env="prod"}"#),
            vec![p("app", "api"), p("env", "prod")]
        );
        assert_eq!(pairs("{}"), vec![]);
        assert_eq!(pairs(" { } "), vec![]);
        assert_eq!(
            pairs(r#"{ app = "api" , env="" }"#),
            vec![p("app", "api"), p("env", "")]
        );
    }

    #[test]
    fn parses_dotted_names_and_escaped_values() {
        assert_eq!(
            pairs(r#"{k8s.pod.name="a\"b",x="c\\d\ne\u00e9\ud83d\ude00"}"#),
            vec![p("k8s.pod.name", "a\"b"), p("x", "c\\d\neé😀")]
        );
        assert_eq!(pairs(r#"{"odd name"="v"}"#), vec![p("odd name", "v")]);
        assert_eq!(
            pairs(r#"{a="héllo, {world}"}"#),
            vec![p("a", "héllo, {world}")]
        );
    }

    #[test]
    fn borrows_unescaped_values() {
        let v = parse_stream(r#"{app="api"}"#).unwrap_or_default();
        assert!(matches!(v[0].1, Cow::Borrowed("api")));
    }

    #[test]
    fn rejects_malformed_sets() {
        for bad in [
            "",
            "app=\"api\"",
            "{app=\"api\"",
            "{app=\"api}",
            "{app=api}",
            "{=\"x\"}",
            "{app=\"a\",}",
            "{app=\"a\"} x",
            "{app=\"\\q\"}",
            "{app=\"\\u12\"}",
            "{app=\"a\\",
        ] {
            assert!(parse_stream(bad).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn validates_and_sanitizes_names() {
        assert!(is_valid_label_name("app"));
        assert!(is_valid_label_name("_x9"));
        assert!(!is_valid_label_name("9x"));
        assert!(!is_valid_label_name(""));
        assert!(!is_valid_label_name("k8s.pod.name"));
        assert_eq!(sanitize_label_name("k8s.pod.name"), "k8s_pod_name");
        assert_eq!(sanitize_label_name("service-name"), "service_name");
        assert_eq!(sanitize_label_name("1st"), "_1st");
        assert_eq!(sanitize_label_name("é.x"), "__x");
        assert!(matches!(sanitize_label_name("ok"), Cow::Borrowed("ok")));
    }

    #[test]
    fn label_string_matches_prometheus_format() {
        let mut out = Vec::new();
        write_label_string(&mut out, [("app", "api"), ("env", "prod")]);
        assert_eq!(out, br#"{app="api", env="prod"}"#);
        out.clear();
        write_label_string(&mut out, std::iter::empty());
        assert_eq!(out, b"{}");
        out.clear();
        write_label_string(&mut out, [("a", "q\"b\\c\nd\u{1}é\u{7f}\u{85}")]);
        assert_eq!(out, "{a=\"q\\\"b\\\\c\\nd\\x01é\\x7f\\u0085\"}".as_bytes());
        out.clear();
        write_label_string(&mut out, [("k8s.pod", "x")]);
        assert_eq!(out, br#"{"k8s.pod"="x"}"#);
    }
}
