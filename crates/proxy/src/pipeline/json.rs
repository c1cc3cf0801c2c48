//! Loki's JSON parsers: `| json`, `| json a="b.c"` and `| unpack`.
//!
//! Loki reads JSON with a lenient streaming scanner (grafana/jsonparser), so
//! a malformed line can still yield the labels before the fault, trailing
//! text after the object is ignored, and the error text is the scanner's.
//! This module walks JSON the same way and reports the same messages.

use std::borrow::Cow;

use super::hints::Hints;
pub(crate) use super::json_scan::{
    Kind, Value, append_sanitized, get_value, object_each, string_value, unescape,
};
use super::json_scan::{MALFORMED_ESCAPE, next_token, object_scan, scalar_value};
use super::labels::{Category, EXTRACTED, LabelsBuilder};

/// Internal: a hint filter failed, the line is dropped.
const DROP: &str = "\0drop";
/// Internal: every required label is extracted, the rest is not read.
const DONE: &str = "\0done";

/// Loki's error label value for JSON failures.
pub const JSON_PARSER_ERR: &str = "JSONParserErr";

/// `| json` without field expressions: every scalar becomes a label, nested
/// keys joined with `_`, arrays and `null` skipped.
#[derive(Debug, Default)]
pub struct JsonParser {
    key: String,
}

impl JsonParser {
    /// Parses `line` into `lbs`; on a fault sets `__error__=JSONParserErr`
    /// with the scanner's message (labels found before it stay). Returns
    /// `false` when a hint filter drops the line.
    pub fn process(&mut self, line: &str, lbs: &mut LabelsBuilder, hints: &Hints) -> bool {
        if hints.skip(lbs) {
            return true;
        }
        self.key.clear();
        let key = &mut self.key;
        let walked = if hints.requires() {
            walk::<true>(line, key, lbs, hints)
        } else {
            walk::<false>(line, key, lbs, hints)
        };
        match walked {
            Ok(()) | Err(DONE) => true,
            Err(DROP) => false,
            Err(e) => {
                lbs.set_err(JSON_PARSER_ERR, Some(e));
                hints.mark_error(lbs);
                true
            }
        }
    }
}

/// `REQUIRED`: the hints name required labels (a grouped metric query);
/// without them the per-member checks compile away.
fn walk<const REQUIRED: bool>(
    obj: &str,
    key: &mut String,
    lbs: &mut LabelsBuilder,
    hints: &Hints,
) -> Result<(), &'static str> {
    object_each(obj, &mut |k, v| {
        let len = key.len();
        // `k.trim()` is non-empty when the first byte is visible ASCII.
        let visible = k
            .as_bytes()
            .first()
            .is_some_and(|&c| c.is_ascii() && !char::from(c).is_whitespace());
        if visible || !k.trim().is_empty() {
            if !key.is_empty() {
                key.push('_');
            }
            append_sanitized(key, &k);
        }
        let r = match v.kind {
            Kind::Object if !REQUIRED || hints.extract_prefix(key) => {
                walk::<REQUIRED>(v.raw, key, lbs, hints)
            }
            Kind::String | Kind::Number | Kind::Boolean if !key.is_empty() => {
                if lbs.collides(key) {
                    key.push_str(EXTRACTED);
                }
                if lbs.extracted(key) || (REQUIRED && !hints.extract(key)) {
                    Ok(())
                } else {
                    let value = scalar_value(v);
                    lbs.set(Category::Parsed, key, &value);
                    if hints.keep(key, lbs) {
                        Ok(())
                    } else {
                        Err(DROP)
                    }
                }
            }
            _ => Ok(()),
        };
        key.truncate(len);
        match r {
            Ok(()) if REQUIRED && hints.all_extracted(lbs) => Err(DONE),
            r => r,
        }
    })
}

/// One step of a JSON path expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// Parses Loki's JSON path syntax: `a.b`, `a["b c"]`, `a[0].b`, `["a"]`.
///
/// # Errors
/// A message naming the expression when it is not a valid path.
pub fn parse_path(expr: &str) -> Result<Vec<PathStep>, String> {
    let bad = || format!("cannot parse expression [{expr}]");
    let mut steps = Vec::new();
    let b = expr.as_bytes();
    let mut i = 0;
    let mut expect_key = true;
    while i < b.len() {
        match b[i] {
            b'[' => {
                let close = expr[i..].find(']').ok_or_else(bad)? + i;
                let inner = expr[i + 1..close].trim();
                if let Some(q) = inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                    steps.push(PathStep::Key(q.to_owned()));
                } else {
                    steps.push(PathStep::Index(inner.parse().map_err(|_| bad())?));
                }
                i = close + 1;
                expect_key = false;
            }
            b'.' => {
                if expect_key {
                    return Err(bad());
                }
                i += 1;
                expect_key = true;
            }
            _ => {
                let end = expr[i..].find(['.', '[']).map_or(b.len(), |p| p + i);
                steps.push(PathStep::Key(expr[i..end].to_owned()));
                i = end;
                expect_key = false;
            }
        }
    }
    if steps.is_empty() || expect_key {
        return Err(bad());
    }
    Ok(steps)
}

/// The value at `path` in `s`, if every step exists.
fn lookup<'a>(s: &'a str, path: &[PathStep]) -> Option<Value<'a>> {
    let (cur, _) = get_value(s, 0).ok()?;
    lookup_value(cur, path)
}

/// The value at `path` below `cur`.
fn lookup_value<'a>(mut cur: Value<'a>, path: &[PathStep]) -> Option<Value<'a>> {
    for step in path {
        cur = match (step, cur.kind) {
            (PathStep::Key(k), Kind::Object) => {
                let mut found = None;
                let _ = object_each(cur.raw, &mut |key, v| {
                    if found.is_none() && key == k.as_str() {
                        found = Some(v);
                    }
                    Ok(())
                });
                found?
            }
            (PathStep::Index(n), Kind::Array) => array_get(cur.raw, *n)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn array_get(s: &str, n: usize) -> Option<Value<'_>> {
    let d = s.as_bytes();
    let mut off = next_token(d, 1)?;
    let mut i = 0;
    while off < d.len() && d[off] != b']' {
        let (v, end) = get_value(s, off).ok()?;
        if i == n {
            return Some(v);
        }
        i += 1;
        off = next_token(d, end)?;
        if d[off] == b',' {
            off = next_token(d, off + 1)?;
        }
    }
    None
}

/// `| json a="b.c", d`: only the named paths, each to its label.
#[derive(Debug)]
pub struct JsonExpressionParser {
    exprs: Vec<(String, Vec<PathStep>)>,
    key: String,
}

impl JsonExpressionParser {
    /// Builds the parser from `(label, path)` pairs.
    pub fn new(exprs: Vec<(String, Vec<PathStep>)>) -> Self {
        Self {
            exprs,
            key: String::new(),
        }
    }

    /// Extracts every path of `line` into `lbs`; a missing path yields `""`.
    ///
    /// Like jsonparser's `EachKey`, the object is scanned only until every
    /// path is found, so a line cut short after the wanted keys still yields
    /// them without an error; a fault met earlier sets `JSONParserErr`.
    pub fn process(&mut self, line: &str, lbs: &mut LabelsBuilder) {
        if line.is_empty() {
            return;
        }
        if !matches!(line.as_bytes()[0], b'"' | b'{' | b'[') {
            lbs.set_err(JSON_PARSER_ERR, None);
            return;
        }
        let mut found: Vec<Option<Value<'_>>> = vec![None; self.exprs.len()];
        if line.as_bytes()[0] == b'{' {
            let exprs = &self.exprs;
            let wanted = |k: &str| {
                exprs
                    .iter()
                    .any(|(_, p)| matches!(&p[0], PathStep::Key(x) if x == k))
            };
            let r = object_scan(line, Some(&wanted), &mut |k, v| {
                for (i, (_, path)) in exprs.iter().enumerate() {
                    if found[i].is_some() || !matches!(&path[0], PathStep::Key(p) if *p == k) {
                        continue;
                    }
                    found[i] = if path.len() == 1 {
                        Some(v)
                    } else {
                        lookup_value(v, &path[1..])
                    };
                }
                if found.iter().all(Option::is_some) {
                    Err(DROP)
                } else {
                    Ok(())
                }
            });
            match r {
                Ok(()) | Err(DROP) => {}
                Err(e) => lbs.set_err(JSON_PARSER_ERR, Some(e)),
            }
        } else {
            for (i, (_, path)) in self.exprs.iter().enumerate() {
                found[i] = lookup(line, path);
            }
        }
        for ((id, _), v) in self.exprs.iter().zip(found) {
            let Some(v) = v else {
                if lbs.get(id).is_none() {
                    lbs.set(Category::Parsed, id, "");
                }
                continue;
            };
            self.key.clear();
            self.key.push_str(id);
            if lbs.collides(id) {
                self.key.push_str(EXTRACTED);
            }
            let value = match v.kind {
                Kind::Null => Cow::Borrowed(""),
                Kind::Object | Kind::Array => Cow::Borrowed(v.raw),
                _ => string_value(v.raw),
            };
            lbs.set(Category::Parsed, &self.key, &value);
        }
    }
}

/// `| unpack`: string members become labels and `_entry` replaces the line.
///
/// Returns the new line when the object holds `_entry`.
pub fn unpack(
    line: &str,
    lbs: &mut LabelsBuilder,
    hints: &Hints,
    drop: &mut bool,
) -> Option<String> {
    *drop = false;
    if line.is_empty() || hints.skip(lbs) {
        return None;
    }
    if line.as_bytes()[0] != b'{' {
        lbs.set_err(
            JSON_PARSER_ERR,
            Some("expecting json object(6), but it is not"),
        );
        hints.mark_error(lbs);
        return None;
    }
    let mut entry: Option<String> = None;
    let mut pairs: Vec<(String, String)> = Vec::new();
    let r = object_each(line, &mut |k, v| {
        if v.kind != Kind::String {
            return Ok(());
        }
        if k == "_entry" {
            entry = Some(if v.raw.contains('\\') {
                unescape(v.raw).ok_or(MALFORMED_ESCAPE)?
            } else {
                v.raw.to_owned()
            });
            return Ok(());
        }
        let mut key = k.into_owned();
        if lbs.collides(&key) {
            key.push_str(EXTRACTED);
        }
        if lbs.extracted(&key) || !hints.extract(&key) {
            return Ok(());
        }
        let mut name = String::with_capacity(key.len() + 1);
        append_sanitized(&mut name, &key);
        pairs.push((name, string_value(v.raw).into_owned()));
        Ok(())
    });
    if let Err(e) = r {
        lbs.set_err(JSON_PARSER_ERR, Some(e));
        hints.mark_error(lbs);
        return None;
    }
    let entry = entry?;
    for (k, v) in &pairs {
        lbs.set(Category::Parsed, k, v);
        if !hints.keep(k, lbs) {
            *drop = true;
            return Some(entry);
        }
    }
    Some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::json_scan::*;

    fn parse(line: &str, stream: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut b = LabelsBuilder::new();
        b.reset(stream.iter().copied());
        JsonParser::default().process(line, &mut b, &Hints::default());
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
    fn flattens_sanitises_and_skips_arrays_and_null() {
        let got = parse(
            r#"{"a":{"b":"c","d e":1.50},"1x":true,"arr":[1,2],"n":null,"s":"q\"\u00e9","app":"x"}"#,
            &[("app", "api")],
        );
        assert_eq!(
            got,
            pairs(&[
                ("a_b", "c"),
                ("a_d_e", "1.50"),
                ("_1x", "true"),
                ("s", "q\"é"),
                ("app_extracted", "x"),
            ])
        );
    }

    #[test]
    fn string_and_block_ends_honour_backslash_runs() {
        // `\\"` ends the string (escaped backslash), `\"` does not.
        assert_eq!(string_end(br#"ab\\"x"#, 0), Some((5, true)));
        assert_eq!(string_end(br#"a\"b"c"#, 0), Some((5, true)));
        assert_eq!(string_end(br#"plain"tail"#, 0), Some((6, false)));
        assert_eq!(string_end(br#"no end\"#, 0), None);
        assert_eq!(string_end(br#"odd\\\""#, 0), None);
        // Brackets inside strings do not count.
        let d = br#"{"a":"}{\"}","b":{"c":"]"}} rest"#;
        assert_eq!(block_end(d, 0, b'{', b'}'), Some(d.len() - 5));
        assert_eq!(block_end(br#"[1,"]",[2]]"#, 0, b'[', b']'), Some(11));
        assert_eq!(block_end(br#"{"a":"}"#, 0, b'{', b'}'), None);
        let got = parse(r#"{"k":"a\\","m":{"n":"}\"x"},"z":"\u00e9\ufffd"}"#, &[]);
        assert_eq!(got, pairs(&[("k", "a\\"), ("m_n", "}\"x"), ("z", "é ")]));
    }

    #[test]
    fn reused_builder_gives_each_line_its_own_labels() {
        // The builder keeps slot names across lines; a line with other keys
        // in the same positions must not see the previous line's names.
        let mut b = LabelsBuilder::new();
        let mut p = JsonParser::default();
        let hints = Hints::default();
        let mut seen = Vec::new();
        for line in [
            r#"{"a":"1","b":"2"}"#,
            r#"{"b":"3","c":"4"}"#,
            r#"{"a":"5"}"#,
        ] {
            b.reset([("app", "api")]);
            p.process(line, &mut b, &hints);
            let mut v = Vec::new();
            b.for_each(|n, val, _| v.push(format!("{n}={val}")));
            v.sort();
            seen.push(v.join(","));
        }
        assert_eq!(seen, ["a=1,app=api,b=2", "app=api,b=3,c=4", "a=5,app=api"]);
    }

    #[test]
    fn errors_keep_earlier_labels_and_use_the_scanner_text() {
        assert_eq!(
            parse("plain text", &[]),
            pairs(&[
                ("__error__", "JSONParserErr"),
                ("__error_details__", MALFORMED_OBJECT)
            ])
        );
        assert_eq!(
            parse(r#"{"a":"b","c":nope}"#, &[]),
            pairs(&[
                ("a", "b"),
                ("__error__", "JSONParserErr"),
                ("__error_details__", UNKNOWN_VALUE_TYPE)
            ])
        );
        assert_eq!(parse(r#"{"a":"b"} trailing"#, &[]), pairs(&[("a", "b")]));
        assert_eq!(parse("{}", &[]), vec![]);
    }

    #[test]
    fn paths() {
        assert_eq!(
            parse_path(r#"a["b c"][0].d"#).unwrap(),
            vec![
                PathStep::Key("a".into()),
                PathStep::Key("b c".into()),
                PathStep::Index(0),
                PathStep::Key("d".into())
            ]
        );
        assert!(parse_path("a.").is_err());
        let mut b = LabelsBuilder::new();
        b.reset([]);
        let mut p = JsonExpressionParser::new(vec![
            ("m".into(), parse_path("req.method").unwrap()),
            ("f".into(), parse_path("list[1]").unwrap()),
            ("o".into(), parse_path("req").unwrap()),
            ("x".into(), parse_path("missing").unwrap()),
        ]);
        p.process(r#"{"req":{"method":"GET"},"list":["a","b"]}"#, &mut b);
        // Found before the fault: no error (jsonparser's EachKey stops early).
        let mut b = LabelsBuilder::new();
        b.reset([]);
        let mut one = JsonExpressionParser::new(vec![("l".into(), parse_path("level").unwrap())]);
        one.process(r#"{"level":"warn","msg":"cut"#, &mut b);
        assert_eq!((b.get("l"), b.err()), (Some("warn"), ""));
        let mut two = JsonExpressionParser::new(vec![
            ("l".into(), parse_path("level").unwrap()),
            ("m".into(), parse_path("msg").unwrap()),
        ]);
        let mut b = LabelsBuilder::new();
        b.reset([]);
        two.process(r#"{"level":"warn","msg":"cut"#, &mut b);
        assert_eq!(
            (b.get("l"), b.get("m"), b.err_details()),
            (Some("warn"), Some(""), MALFORMED_STRING)
        );
        let mut b = LabelsBuilder::new();
        b.reset([]);
        p.process(r#"{"req":{"method":"GET"},"list":["a","b"]}"#, &mut b);
        assert_eq!(b.get("m"), Some("GET"));
        assert_eq!(b.get("f"), Some("b"));
        assert_eq!(b.get("o"), Some(r#"{"method":"GET"}"#));
        assert_eq!(b.get("x"), Some(""));
    }

    #[test]
    fn unpack_replaces_the_line() {
        let mut b = LabelsBuilder::new();
        b.reset([("app", "api")]);
        let mut drop = false;
        let h = Hints::default();
        let line = unpack(
            r#"{"_entry":"hello \"x\"","app":"a","n":1,"k":"v"}"#,
            &mut b,
            &h,
            &mut drop,
        );
        assert_eq!(line.as_deref(), Some("hello \"x\""));
        assert_eq!(b.get("app_extracted"), Some("a"));
        assert_eq!(b.get("k"), Some("v"));
        assert_eq!(b.get("n"), None);
        let mut b = LabelsBuilder::new();
        b.reset([]);
        assert_eq!(unpack(r#"{"k":"v"}"#, &mut b, &h, &mut drop), None);
        assert_eq!(b.get("k"), None, "labels only when _entry exists");
    }
}
