//! Loki's JSON parsers: `| json`, `| json a="b.c"` and `| unpack`.
//!
//! Loki reads JSON with a lenient streaming scanner (grafana/jsonparser), so
//! a malformed line can still yield the labels before the fault, trailing
//! text after the object is ignored, and the error text is the scanner's.
//! This module walks JSON the same way and reports the same messages.

pub(crate) mod walk;

use std::borrow::Cow;

pub(crate) use self::walk::object_each;
use self::walk::{
    Blocks, Member, Members, REMEMBER_DEPTH, TOO_COSTLY, Visitor, Walker, get_value_in, object_scan,
};
use super::hints::Hints;
pub(crate) use super::json_scan::{Kind, Value, append_sanitized, string_value, unescape};
use super::json_scan::{MALFORMED_ESCAPE, next_token, scalar_value};
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
    walker: Walker,
}

impl JsonParser {
    /// Parses `line` into `lbs`; on a fault sets `__error__=JSONParserErr`
    /// with the scanner's message (labels found before it stay). Returns
    /// `false` when a hint filter drops the line.
    ///
    /// Nesting has no depth limit, as in Loki; the walk is iterative and its
    /// work bounded by the line's length (see [`walk`]).
    pub fn process(&mut self, line: &str, lbs: &mut LabelsBuilder, hints: &Hints) -> bool {
        if hints.skip(lbs) {
            return true;
        }
        let walked = if hints.requires() {
            let mut v = LabelVisitor::<true> { lbs, hints };
            self.walker.walk(line, &mut self.key, &mut v)
        } else {
            let mut v = LabelVisitor::<false> { lbs, hints };
            self.walker.walk(line, &mut self.key, &mut v)
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

/// Sets each scalar member as a label, as Loki's `parseObject` does.
/// `REQUIRED`: the hints name required labels (a grouped metric query);
/// without them the per-member checks compile away.
struct LabelVisitor<'l, const REQUIRED: bool> {
    lbs: &'l mut LabelsBuilder,
    hints: &'l Hints,
}

impl<const REQUIRED: bool> Visitor<'_> for LabelVisitor<'_, REQUIRED> {
    fn member(
        &mut self,
        key: &mut String,
        _depth: usize,
        _k: &str,
        v: Value<'_>,
    ) -> Result<bool, &'static str> {
        let (lbs, hints) = (&mut *self.lbs, self.hints);
        match v.kind {
            Kind::Object => Ok(!REQUIRED || hints.extract_prefix(key)),
            Kind::String | Kind::Number | Kind::Boolean if !key.is_empty() => {
                if lbs.collides(key) {
                    key.push_str(EXTRACTED);
                }
                if lbs.extracted(key) || (REQUIRED && !hints.extract(key)) {
                    return Ok(false);
                }
                let value = scalar_value(v);
                lbs.set(Category::Parsed, key, &value);
                if hints.keep(key, lbs) {
                    Ok(false)
                } else {
                    Err(DROP)
                }
            }
            _ => Ok(false),
        }
    }

    fn after(&mut self) -> Result<(), &'static str> {
        if REQUIRED && self.hints.all_extracted(self.lbs) {
            Err(DONE)
        } else {
            Ok(())
        }
    }
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
fn lookup<'a>(
    s: &'a str,
    path: &[PathStep],
    blocks: &mut Blocks,
) -> Result<Option<Value<'a>>, &'static str> {
    match get_value_in(s, 0, Some(blocks)) {
        Ok((cur, _)) => lookup_value(cur, path, blocks),
        Err(TOO_COSTLY) => Err(TOO_COSTLY),
        Err(_) => Ok(None),
    }
}

/// The value at `path` below `cur`, if every step exists. Iterative, and
/// past [`REMEMBER_DEPTH`] steps `blocks` remembers block ends (across
/// expressions too), so a long path into a deep line costs a few scans of
/// the line, not one per step.
///
/// # Errors
/// [`TOO_COSTLY`] past the work budget.
fn lookup_value<'a>(
    mut cur: Value<'a>,
    path: &[PathStep],
    blocks: &mut Blocks,
) -> Result<Option<Value<'a>>, &'static str> {
    for (depth, step) in path.iter().enumerate() {
        if depth >= REMEMBER_DEPTH {
            blocks.remember();
        }
        let next = match (step, cur.kind) {
            (PathStep::Key(k), Kind::Object) => {
                // `ObjectEach` keeping the first match: a fault after it
                // does not matter, one before it finds nothing.
                let mut members = Members::new(cur.raw);
                loop {
                    match members.next(Some(blocks)) {
                        Member::Item(key, v) if key == k.as_str() => break Some(v),
                        Member::Item(..) => {}
                        Member::BadValue(_, TOO_COSTLY) => return Err(TOO_COSTLY),
                        _ => break None,
                    }
                }
            }
            (PathStep::Index(n), Kind::Array) => array_get(cur.raw, *n, blocks)?,
            _ => None,
        };
        match next {
            Some(v) => cur = v,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

fn array_get<'a>(
    s: &'a str,
    n: usize,
    blocks: &mut Blocks,
) -> Result<Option<Value<'a>>, &'static str> {
    let d = s.as_bytes();
    let Some(mut off) = next_token(d, 1) else {
        return Ok(None);
    };
    let mut i = 0;
    while off < d.len() && d[off] != b']' {
        let (v, end) = match get_value_in(s, off, Some(blocks)) {
            Ok(found) => found,
            Err(TOO_COSTLY) => return Err(TOO_COSTLY),
            Err(_) => return Ok(None),
        };
        if i == n {
            return Ok(Some(v));
        }
        i += 1;
        let Some(next) = next_token(d, end) else {
            return Ok(None);
        };
        off = next;
        if d[off] == b',' {
            let Some(next) = next_token(d, off + 1) else {
                return Ok(None);
            };
            off = next;
        }
    }
    Ok(None)
}

/// `| json a="b.c", d`: only the named paths, each to its label.
#[derive(Debug)]
pub struct JsonExpressionParser {
    exprs: Vec<(String, Vec<PathStep>)>,
    key: String,
    blocks: Blocks,
}

impl JsonExpressionParser {
    /// Builds the parser from `(label, path)` pairs.
    pub fn new(exprs: Vec<(String, Vec<PathStep>)>) -> Self {
        Self {
            exprs,
            key: String::new(),
            blocks: Blocks::default(),
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
        let blocks = &mut self.blocks;
        blocks.start(line);
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
                        lookup_value(v, &path[1..], blocks)?
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
                match lookup(line, path, blocks) {
                    Ok(v) => found[i] = v,
                    Err(e) => {
                        lbs.set_err(JSON_PARSER_ERR, Some(e));
                        break;
                    }
                }
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

    /// `n` nested `{"a":` levels around `inner`, closed when `close`.
    fn deep(n: usize, inner: &str, close: bool) -> String {
        let mut s = "{\"a\":".repeat(n);
        s.push_str(inner);
        if close {
            s.push_str(&"}".repeat(n));
        }
        s
    }

    /// The label name of `n` nested `a` keys.
    fn deep_name(n: usize) -> String {
        vec!["a"; n].join("_")
    }

    #[test]
    fn a_deeply_nested_line_is_parsed_to_the_end_as_loki_does() {
        // Loki has no depth limit (its recursion runs on Go's growable
        // stack); the recursive walk this replaced overflowed the thread's
        // stack here and aborted the process.
        let n = 100_000;
        assert_eq!(
            parse(&deep(n, r#"{"b":"x","c":1}"#, true), &[]),
            vec![
                (format!("{}_b", deep_name(n)), "x".to_owned()),
                (format!("{}_c", deep_name(n)), "1".to_owned())
            ]
        );
        // Unclosed: the outermost value has no end, Loki's first fault.
        assert_eq!(
            parse(&deep(n, r#""x""#, false), &[]),
            pairs(&[
                ("__error__", "JSONParserErr"),
                ("__error_details__", MALFORMED_OBJECT)
            ])
        );
        // A fault at the bottom ends the walk with its text, from any depth.
        assert_eq!(
            parse(&deep(n, r#"{"b":nope}"#, true), &[]),
            pairs(&[
                ("__error__", "JSONParserErr"),
                ("__error_details__", UNKNOWN_VALUE_TYPE)
            ])
        );
        // Deep arrays are skipped whole, as by Loki.
        let arrays = format!(
            r#"{{"k":"v","a":{}{},"z":2}}"#,
            "[".repeat(n),
            "]".repeat(n)
        );
        assert_eq!(parse(&arrays, &[]), pairs(&[("k", "v"), ("z", "2")]));
    }

    #[test]
    fn a_line_whose_names_would_repeat_a_long_key_quadratically_is_refused() {
        // 20,000 labels each named after a 100 kB key would take 2 GB;
        // past the budget the line gets lokivl's error, labels before it stay.
        let long = "k".repeat(100_000);
        let members: Vec<String> = (0..20_000).map(|i| format!(r#""m{i}":1"#)).collect();
        let line = format!(r#"{{"first":"1","{long}":{{{}}}}}"#, members.join(","));
        let mut b = LabelsBuilder::new();
        b.reset([]);
        JsonParser::default().process(&line, &mut b, &Hints::default());
        assert_eq!(b.get("first"), Some("1"));
        assert_eq!((b.err(), b.err_details()), (JSON_PARSER_ERR, TOO_COSTLY));
        let mut n = 0;
        b.for_each(|_, _, _| n += 1);
        assert!(n < 200, "{n} labels set before the bound");
    }

    #[test]
    fn expressions_reach_the_bottom_of_a_deep_line() {
        let n = 100_000;
        let line = deep(n, r#"{"b":"x"}"#, true);
        let mut path = vec!["a"; n].join(".");
        path.push_str(".b");
        let mut p = JsonExpressionParser::new(vec![
            ("x".into(), parse_path(&path).unwrap()),
            ("top".into(), parse_path("a.a").unwrap()),
            ("none".into(), parse_path("a.b").unwrap()),
        ]);
        let mut b = LabelsBuilder::new();
        b.reset([]);
        p.process(&line, &mut b);
        assert_eq!(
            (b.get("x"), b.get("none"), b.err()),
            (Some("x"), Some(""), "")
        );
        assert_eq!(b.get("top").map(str::len), Some(line.len() - 12));
    }

    /// The recursive walk `JsonParser` had before it became iterative,
    /// without hints: the reference the iterative walk must agree with.
    fn recursive(obj: &str, key: &mut String, lbs: &mut LabelsBuilder) -> Result<(), &'static str> {
        object_each(obj, &mut |k, v| {
            let len = key.len();
            if !k.trim().is_empty() {
                if !key.is_empty() {
                    key.push('_');
                }
                append_sanitized(key, &k);
            }
            let r = match v.kind {
                Kind::Object => recursive(v.raw, key, lbs),
                Kind::String | Kind::Number | Kind::Boolean if !key.is_empty() => {
                    if lbs.collides(key) {
                        key.push_str(EXTRACTED);
                    }
                    if !lbs.extracted(key) {
                        lbs.set(Category::Parsed, key, &scalar_value(v));
                    }
                    Ok(())
                }
                _ => Ok(()),
            };
            key.truncate(len);
            r
        })
    }

    #[test]
    fn the_iterative_walk_agrees_with_the_recursive_one() {
        use super::walk::tests::{Rng, jsonish};
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut line, mut p) = (String::new(), JsonParser::default());
        let labels = |b: &LabelsBuilder| {
            let mut v = Vec::new();
            b.for_each(|n, val, _| v.push(format!("{n}={val}")));
            v
        };
        for _ in 0..20_000 {
            line.clear();
            jsonish(&mut rng, 14, &mut line);
            let mut want = LabelsBuilder::new();
            want.reset([("a", "s")]);
            if let Err(e) = recursive(&line, &mut String::new(), &mut want) {
                want.set_err(JSON_PARSER_ERR, Some(e));
            }
            let mut got = LabelsBuilder::new();
            got.reset([("a", "s")]);
            p.process(&line, &mut got, &Hints::default());
            assert_eq!(labels(&got), labels(&want), "{line:?}");
        }
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
