//! Loki's JSON parsers: `| json`, `| json a="b.c"` and `| unpack`.
//!
//! Loki reads JSON with a lenient streaming scanner (grafana/jsonparser), so
//! a malformed line can still yield the labels before the fault, trailing
//! text after the object is ignored, and the error text is the scanner's.
//! This module walks JSON the same way and reports the same messages.

use std::borrow::Cow;

use super::hints::Hints;
use super::labels::{Category, EXTRACTED, LabelsBuilder};

/// Internal: a hint filter failed, the line is dropped.
const DROP: &str = "\0drop";

/// The scanner's error messages, word for word.
pub(crate) const MALFORMED_JSON: &str = "Malformed JSON error";
const MALFORMED_STRING: &str = "Value is string, but can't find closing '\"' symbol";
const MALFORMED_ARRAY: &str = "Value is array, but can't find closing ']' symbol";
pub(crate) const MALFORMED_OBJECT: &str =
    "Value looks like object, but can't find closing '}' symbol";
const MALFORMED_VALUE: &str =
    "Value looks like Number/Boolean/None, but can't find its end: ',' or '}' symbol";
const UNKNOWN_VALUE_TYPE: &str = "Unknown value type";
const MALFORMED_ESCAPE: &str = "Encountered an invalid escape sequence in a string";

/// Loki's error label value for JSON failures.
pub const JSON_PARSER_ERR: &str = "JSONParserErr";

/// A JSON value kind as the scanner sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    String,
    Number,
    Boolean,
    Null,
    Array,
    Object,
}

/// One scanned value: its kind and its raw bytes (strings without quotes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Value<'a> {
    pub(crate) kind: Kind,
    pub(crate) raw: &'a str,
}

fn next_token(d: &[u8], from: usize) -> Option<usize> {
    d[from.min(d.len())..]
        .iter()
        .position(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
        .map(|p| from + p)
}

/// The end (one past the closing quote) of a string whose body starts at
/// `from`, and whether it holds a backslash. Jumps between quotes and
/// backslashes with `memchr2`; a backslash escapes the byte after it, which
/// is what counting the backslashes before a quote amounts to.
fn string_end(d: &[u8], from: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    let mut i = from;
    while i < d.len() {
        i += memchr::memchr2(b'"', b'\\', &d[i..])?;
        if d[i] == b'"' {
            return Some((i + 1, escaped));
        }
        escaped = true;
        i += 2;
    }
    None
}

/// The end (one past the closing bracket) of the block opening at `from`,
/// skipping strings; jumps between the interesting bytes with `memchr3`.
fn block_end(d: &[u8], from: usize, open: u8, close: u8) -> Option<usize> {
    let mut level = 0i32;
    let mut i = from;
    while i < d.len() {
        i += memchr::memchr3(b'"', open, close, &d[i..])?;
        match d[i] {
            b'"' => {
                let (e, _) = string_end(d, i + 1)?;
                i = e - 1;
            }
            c if c == open => level += 1,
            _ => {
                level -= 1;
                if level == 0 {
                    return Some(i + 1);
                }
            }
        }
        i += 1;
    }
    None
}

fn token_end(d: &[u8], from: usize) -> usize {
    d[from..]
        .iter()
        .position(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t' | b',' | b'}' | b']'))
        .map_or(d.len(), |p| from + p)
}

/// Reads the value starting at the first token at or after `from`; returns it
/// and the offset just past it.
pub(crate) fn get_value(s: &str, from: usize) -> Result<(Value<'_>, usize), &'static str> {
    let d = s.as_bytes();
    let off = next_token(d, from).ok_or(MALFORMED_JSON)?;
    let (kind, end) = match d[off] {
        b'"' => (
            Kind::String,
            string_end(d, off + 1).ok_or(MALFORMED_STRING)?.0,
        ),
        b'[' => (
            Kind::Array,
            block_end(d, off, b'[', b']').ok_or(MALFORMED_ARRAY)?,
        ),
        b'{' => (
            Kind::Object,
            block_end(d, off, b'{', b'}').ok_or(MALFORMED_OBJECT)?,
        ),
        c => {
            let end = token_end(d, off);
            let v = &s[off..end];
            let kind = match c {
                b't' | b'f' if v == "true" || v == "false" => Kind::Boolean,
                b'u' | b'n' if v == "null" => Kind::Null,
                b'0'..=b'9' | b'-' => Kind::Number,
                _ => return Err(UNKNOWN_VALUE_TYPE),
            };
            if end == off {
                return Err(MALFORMED_VALUE);
            }
            (kind, end)
        }
    };
    let raw = if kind == Kind::String {
        &s[off + 1..end - 1]
    } else {
        &s[off..end]
    };
    Ok((Value { kind, raw }, end))
}

/// Calls `f(key, value)` for each member of the object in `s`, like
/// jsonparser's `ObjectEach`: stops at the first fault or callback error.
pub(crate) fn object_each<'a>(
    s: &'a str,
    f: &mut dyn FnMut(Cow<'a, str>, Value<'a>) -> Result<(), &'static str>,
) -> Result<(), &'static str> {
    object_scan(s, None, f)
}

/// [`object_each`], or with `wanted` set, jsonparser's `EachKey` leniency:
/// a fault in the structure, or in the value of a member `wanted` rejects,
/// ends the scan quietly; only a wanted member's bad value is an error.
fn object_scan<'a>(
    s: &'a str,
    wanted: Option<&dyn Fn(&str) -> bool>,
    f: &mut dyn FnMut(Cow<'a, str>, Value<'a>) -> Result<(), &'static str>,
) -> Result<(), &'static str> {
    match object_scan_inner(s, wanted, f) {
        Ok(()) => Ok(()),
        Err(Fault::Callback(e) | Fault::WantedValue(e)) => Err(e),
        Err(Fault::Scan(_)) if wanted.is_some() => Ok(()),
        Err(Fault::Scan(e)) => Err(e),
    }
}

/// Where a scan stopped.
enum Fault {
    /// The callback asked to stop.
    Callback(&'static str),
    /// A wanted member's value is malformed.
    WantedValue(&'static str),
    /// Any other malformed JSON.
    Scan(&'static str),
}

impl From<&'static str> for Fault {
    fn from(e: &'static str) -> Self {
        Fault::Scan(e)
    }
}

fn object_scan_inner<'a>(
    s: &'a str,
    wanted: Option<&dyn Fn(&str) -> bool>,
    f: &mut dyn FnMut(Cow<'a, str>, Value<'a>) -> Result<(), &'static str>,
) -> Result<(), Fault> {
    let d = s.as_bytes();
    let mut off = next_token(d, 0).ok_or(MALFORMED_OBJECT)?;
    if d[off] != b'{' {
        return Err(Fault::Scan(MALFORMED_OBJECT));
    }
    off = next_token(d, off + 1).ok_or(MALFORMED_JSON)?;
    if d[off] == b'}' {
        return Ok(());
    }
    while off < d.len() {
        match d[off] {
            b'"' => off += 1,
            b'}' => return Ok(()),
            _ => return Err(Fault::Scan(MALFORMED_OBJECT)),
        }
        let (end, escaped) = string_end(d, off).ok_or(MALFORMED_JSON)?;
        let raw_key = &s[off..end - 1];
        off = end;
        let key = if escaped {
            Cow::Owned(unescape(raw_key).ok_or(MALFORMED_ESCAPE)?)
        } else {
            Cow::Borrowed(raw_key)
        };
        off = next_token(d, off).ok_or(MALFORMED_JSON)?;
        if d[off] != b':' {
            return Err(Fault::Scan(MALFORMED_JSON));
        }
        off += 1;
        let (value, end) = match get_value(s, off) {
            Ok(v) => v,
            Err(e) if wanted.is_some_and(|w| w(&key)) => return Err(Fault::WantedValue(e)),
            Err(e) => return Err(Fault::Scan(e)),
        };
        f(key, value).map_err(Fault::Callback)?;
        off = end;
        off = next_token(d, off).ok_or(MALFORMED_ARRAY)?;
        match d[off] {
            b'}' => return Ok(()),
            b',' => off += 1,
            _ => return Err(Fault::Scan(MALFORMED_OBJECT)),
        }
        off = next_token(d, off).ok_or(MALFORMED_ARRAY)?;
    }
    Err(Fault::Scan(MALFORMED_OBJECT))
}

/// Unescapes a JSON string body; `None` on an invalid escape.
pub(crate) fn unescape(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            '/' => out.push('/'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'u' => {
                let hi = hex4(&mut chars)?;
                if (0xD800..0xDC00).contains(&hi) {
                    let rest = chars.as_str();
                    if let Some(after) = rest.strip_prefix("\\u") {
                        let mut it = after.chars();
                        if let Some(lo) = hex4(&mut it).filter(|lo| (0xDC00..0xE000).contains(lo)) {
                            chars = it;
                            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                            continue;
                        }
                    }
                    out.push('\u{FFFD}');
                } else {
                    out.push(char::from_u32(hi).unwrap_or('\u{FFFD}'));
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let mut v = 0;
    for _ in 0..4 {
        v = v * 16 + chars.next()?.to_digit(16)?;
    }
    Some(v)
}

/// A string value as Loki reads it: unescaped (`""` on a bad escape), with
/// U+FFFD replaced by a space.
pub(crate) fn string_value(raw: &str) -> Cow<'_, str> {
    let b = raw.as_bytes();
    // The common case: no escape, and ASCII so no U+FFFD either.
    if b.is_ascii() && memchr::memchr(b'\\', b).is_none() {
        return Cow::Borrowed(raw);
    }
    let s = if memchr::memchr(b'\\', b).is_some() {
        Cow::Owned(unescape(raw).unwrap_or_default())
    } else {
        Cow::Borrowed(raw)
    };
    if s.contains('\u{FFFD}') {
        Cow::Owned(s.replace('\u{FFFD}', " "))
    } else {
        s
    }
}

fn scalar_value(v: Value<'_>) -> Cow<'_, str> {
    match v.kind {
        Kind::String => string_value(v.raw),
        Kind::Null => Cow::Borrowed(""),
        _ => Cow::Borrowed(v.raw),
    }
}

/// Which bytes are `[A-Za-z0-9_]` (a table beats the range tests per byte).
static WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric() || c == b'_';
        i += 1;
    }
    t
};

/// Appends `key` sanitised the way Loki's `appendSanitized` does: trimmed,
/// `_` before a leading digit when `out` is empty, `_` for every character
/// outside `[A-Za-z0-9_]`.
pub(crate) fn append_sanitized(out: &mut String, key: &str) {
    // Fast path: a key of `[A-Za-z0-9_]` only needs no trimming or mapping.
    let b = key.as_bytes();
    if !b.is_empty() && b.iter().all(|&c| WORD[usize::from(c)]) {
        if out.is_empty() && b[0].is_ascii_digit() {
            out.push('_');
        }
        out.push_str(key);
        return;
    }
    let key = key.trim();
    if key.is_empty() {
        return;
    }
    if out.is_empty() && key.as_bytes()[0].is_ascii_digit() {
        out.push('_');
    }
    for c in key.chars() {
        out.push(if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        });
    }
}

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
        self.key.clear();
        let key = &mut self.key;
        match walk(line, key, lbs, hints) {
            Ok(()) => true,
            Err(DROP) => false,
            Err(e) => {
                lbs.set_err(JSON_PARSER_ERR, Some(e));
                true
            }
        }
    }
}

fn walk(
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
            Kind::Object => walk(v.raw, key, lbs, hints),
            Kind::String | Kind::Number | Kind::Boolean if !key.is_empty() => {
                if lbs.collides(key) {
                    key.push_str(EXTRACTED);
                }
                if lbs.extracted(key) {
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
        r
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
    if line.is_empty() {
        return None;
    }
    if line.as_bytes()[0] != b'{' {
        lbs.set_err(
            JSON_PARSER_ERR,
            Some("expecting json object(6), but it is not"),
        );
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
        if lbs.extracted(&key) {
            return Ok(());
        }
        let mut name = String::with_capacity(key.len() + 1);
        append_sanitized(&mut name, &key);
        pairs.push((name, string_value(v.raw).into_owned()));
        Ok(())
    });
    if let Err(e) = r {
        lbs.set_err(JSON_PARSER_ERR, Some(e));
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
