//! Loki's `| logfmt` parser (grafana/loki `pkg/logql/log/logfmt`): bare keys
//! are kept, an empty value is skipped unless `--keep-empty`, `--strict`
//! stops at the first syntax error and tags the entry `LogfmtParserErr`.

use std::borrow::Cow;

use super::hints::Hints;
use super::json::{append_sanitized, unescape};
use super::labels::{Category, EXTRACTED, LabelsBuilder};

/// Loki's error label value for logfmt failures.
pub const LOGFMT_PARSER_ERR: &str = "LogfmtParserErr";

/// A logfmt scanner with go-logfmt's rules and error positions.
struct Decoder<'a> {
    line: &'a str,
    pos: usize,
    key: &'a str,
    value: Option<Cow<'a, str>>,
    err: Option<String>,
}

impl<'a> Decoder<'a> {
    fn new(line: &'a str) -> Self {
        Self {
            line,
            pos: 0,
            key: "",
            value: None,
            err: None,
        }
    }

    fn eol(&self) -> bool {
        self.pos >= self.line.len()
    }

    fn syntax(&mut self, msg: String) {
        self.err = Some(format!(
            "logfmt syntax error at pos {} : {msg}",
            self.pos + 1
        ));
    }

    fn unexpected(&mut self, c: u8) {
        let q = if c == b'"' {
            "'\"'".to_owned()
        } else {
            format!("'{}'", c as char)
        };
        self.syntax(format!("unexpected {q}"));
    }

    fn skip_value(&mut self) -> bool {
        let b = self.line.as_bytes();
        match b[self.pos..].iter().position(|&c| c <= b' ') {
            Some(p) => self.pos += p,
            None => self.pos = b.len(),
        }
        false
    }

    /// Scans the next key/value; `false` when it is invalid (or none is left).
    fn scan(&mut self) -> bool {
        self.key = "";
        self.value = None;
        let line = self.line;
        let b = line.as_bytes();
        match b[self.pos..].iter().position(|&c| c > b' ') {
            Some(p) => self.pos += p,
            None => {
                self.pos = b.len();
                return false;
            }
        }
        // key
        let start = self.pos;
        let mut i = self.pos;
        loop {
            if i >= b.len() {
                self.pos = b.len();
                self.key = &line[start..];
                return true;
            }
            let c = b[i];
            if c == b'=' {
                self.pos = i;
                if i > start {
                    self.key = &line[start..i];
                } else {
                    self.unexpected(c);
                    return self.skip_value();
                }
                break;
            } else if c == b'"' {
                self.pos = i;
                self.unexpected(c);
                return self.skip_value();
            } else if c <= b' ' {
                self.pos = i;
                self.key = &line[start..i];
                return true;
            }
            i += 1;
        }
        // equal
        self.pos += 1;
        if self.pos >= b.len() {
            return true;
        }
        match b[self.pos] {
            c if c <= b' ' => return true,
            b'"' => return self.quoted(),
            _ => {}
        }
        let start = self.pos;
        let mut i = self.pos;
        while i < b.len() {
            let c = b[i];
            if c == b'=' || c == b'"' {
                self.pos = i;
                self.unexpected(c);
                return self.skip_value();
            }
            if c <= b' ' {
                break;
            }
            i += 1;
        }
        self.pos = i;
        if i > start {
            self.value = Some(Cow::Borrowed(&line[start..i]));
        }
        true
    }

    fn quoted(&mut self) -> bool {
        let line = self.line;
        let b = line.as_bytes();
        let start = self.pos;
        let (mut has_esc, mut esc) = (false, false);
        let mut i = self.pos + 1;
        while i < b.len() {
            let c = b[i];
            if esc {
                esc = false;
            } else if c == b'\\' {
                has_esc = true;
                esc = true;
            } else if c == b'"' {
                self.pos = i + 1;
                let body = &line[start + 1..i];
                if has_esc {
                    match unescape(body) {
                        Some(v) => self.value = Some(Cow::Owned(v)),
                        None => {
                            self.syntax("invalid quoted value".into());
                            return false;
                        }
                    }
                } else if !body.is_empty() {
                    self.value = Some(Cow::Borrowed(body));
                }
                return true;
            }
            i += 1;
        }
        self.pos = b.len();
        self.syntax("unterminated quoted value".into());
        false
    }
}

/// `| logfmt` with its flags and optional field expressions.
#[derive(Debug, Default)]
pub struct LogfmtParser {
    /// `--strict`
    pub strict: bool,
    /// `--keep-empty`
    pub keep_empty: bool,
    /// `(label, key)` field expressions; empty means every key.
    pub exprs: Vec<(String, String)>,
    key: String,
}

impl LogfmtParser {
    /// Creates the parser.
    pub fn new(strict: bool, keep_empty: bool, exprs: Vec<(String, String)>) -> Self {
        Self {
            strict,
            keep_empty,
            exprs,
            key: String::new(),
        }
    }

    /// Parses `line` into `lbs`; `false` when a hint filter drops the line.
    pub fn process(&mut self, line: &str, lbs: &mut LabelsBuilder, hints: &Hints) -> bool {
        if hints.skip(lbs) {
            return true;
        }
        if !self.exprs.is_empty() {
            self.process_exprs(line, lbs, hints);
            return true;
        }
        let mut dec = Decoder::new(line);
        while !dec.eol() {
            if !dec.scan() {
                if self.strict {
                    break;
                }
                continue;
            }
            self.key.clear();
            append_sanitized(&mut self.key, dec.key);
            if self.key.is_empty() {
                continue;
            }
            if lbs.collides(&self.key) {
                self.key.push_str(EXTRACTED);
            }
            if lbs.extracted(&self.key) || !hints.extract(&self.key) {
                continue;
            }
            let v = dec.value.as_deref().unwrap_or("");
            if !self.keep_empty && v.is_empty() {
                continue;
            }
            let v = fix_utf8(v);
            lbs.set(Category::Parsed, &self.key, &v);
            if !hints.keep(&self.key, lbs) {
                return false;
            }
            if hints.all_extracted(lbs) {
                break;
            }
        }
        if self.strict
            && let Some(e) = dec.err
        {
            lbs.set_err(LOGFMT_PARSER_ERR, Some(&e));
            hints.mark_error(lbs);
            return hints.keep(super::labels::ERROR, lbs);
        }
        true
    }

    fn process_exprs(&mut self, line: &str, lbs: &mut LabelsBuilder, hints: &Hints) {
        for (id, _) in &self.exprs {
            if !lbs.collides(id) {
                lbs.set(Category::Parsed, id, "");
            }
        }
        let mut dec = Decoder::new(line);
        while !dec.eol() {
            if !dec.scan() {
                if self.strict {
                    break;
                }
                continue;
            }
            self.key.clear();
            append_sanitized(&mut self.key, dec.key);
            let Some((id, _)) = self.exprs.iter().find(|(_, k)| *k == self.key) else {
                continue;
            };
            let v = dec.value.as_deref().unwrap_or("");
            let v = if v.contains('\u{FFFD}') { "" } else { v };
            if lbs.collides(id) {
                let mut k = id.clone();
                k.push_str(EXTRACTED);
                lbs.set(Category::Parsed, &k, v);
            } else {
                lbs.set(Category::Parsed, id, v);
            }
        }
        if self.strict
            && let Some(e) = dec.err
        {
            lbs.set_err(LOGFMT_PARSER_ERR, Some(&e));
            hints.mark_error(lbs);
        }
    }
}

fn fix_utf8(v: &str) -> Cow<'_, str> {
    if v.contains('\u{FFFD}') {
        Cow::Owned(v.replace('\u{FFFD}', " "))
    } else {
        Cow::Borrowed(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p: &mut LogfmtParser, line: &str) -> Vec<(String, String)> {
        let mut b = LabelsBuilder::new();
        b.reset([("app", "api")]);
        p.process(line, &mut b, &Hints::default());
        let mut v = Vec::new();
        b.for_each(|n, val, c| {
            if c == Category::Parsed {
                v.push((n.to_owned(), val.to_owned()));
            }
        });
        v
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter().map(|(a, b)| ((*a).into(), (*b).into())).collect()
    }

    #[test]
    fn keys_values_quotes_and_collisions() {
        let mut p = LogfmtParser::default();
        assert_eq!(
            run(
                &mut p,
                r#"level=info msg="a \"b\"" empty= bare app=x 1k=v a.b=c"#
            ),
            pairs(&[
                ("level", "info"),
                ("msg", "a \"b\""),
                ("app_extracted", "x"),
                ("_1k", "v"),
                ("a_b", "c"),
            ])
        );
        let mut p = LogfmtParser::new(false, true, vec![]);
        assert_eq!(
            run(&mut p, "a= b"),
            pairs(&[("a", ""), ("b", "")]),
            "--keep-empty keeps bare keys and empty values"
        );
    }

    #[test]
    fn strict_stops_with_the_decoder_error() {
        let mut p = LogfmtParser::new(true, false, vec![]);
        assert_eq!(
            run(&mut p, "a=1 b==2 c=3"),
            pairs(&[
                ("a", "1"),
                ("__error__", "LogfmtParserErr"),
                (
                    "__error_details__",
                    "logfmt syntax error at pos 7 : unexpected '='"
                ),
            ])
        );
        let mut p = LogfmtParser::default();
        assert_eq!(
            run(&mut p, "a=1 b==2 c=3"),
            pairs(&[("a", "1"), ("c", "3")])
        );
        let mut p = LogfmtParser::new(true, false, vec![]);
        assert_eq!(
            run(&mut p, r#"a="x"#),
            pairs(&[
                ("__error__", "LogfmtParserErr"),
                (
                    "__error_details__",
                    "logfmt syntax error at pos 5 : unterminated quoted value"
                ),
            ])
        );
    }

    #[test]
    fn expressions_default_to_empty() {
        let mut p = LogfmtParser::new(
            false,
            false,
            vec![
                ("lvl".into(), "level".into()),
                ("m".into(), "missing".into()),
            ],
        );
        assert_eq!(
            run(&mut p, "level=warn x=1"),
            pairs(&[("lvl", "warn"), ("m", "")])
        );
    }
}
