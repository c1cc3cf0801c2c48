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
mod tests;
