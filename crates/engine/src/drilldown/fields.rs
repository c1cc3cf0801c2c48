//! Detected fields and detected field values, computed as Loki's query
//! frontend does (grafana/loki `pkg/querier/queryrange/detected_fields.go`)
//! over the entries the service fetches returns.
//!
//! For every entry: each structured-metadata key is a field with `parsers`
//! `null`; the line is parsed again with `json`, else `logfmt`, and every key
//! (plus labels the query's own parsers set) is a field with that parser.
//! The type is re-detected from the first value of each entry, so the last
//! entry read decides it, as in Loki. Cardinality is the exact number of
//! distinct values (Loki estimates it with HyperLogLog, exact at these sizes).

use std::collections::{BTreeMap, BTreeSet};

use super::{Entry, Stream};
use crate::pipeline::hints::Hints;
use crate::pipeline::json::walk::{Visitor, Walker};
use crate::pipeline::json::{JsonParser, Kind, Value};
use crate::pipeline::labels::{Category, ERROR, ERROR_DETAILS, LabelsBuilder};
use crate::pipeline::logfmt::LogfmtParser;

/// Loki's `__preserve_error__` label, never a field.
const PRESERVE_ERROR: &str = "__preserve_error__";

/// A field's accumulated facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// `string`, `int`, `float`, `boolean`, `duration` or `bytes`.
    pub kind: &'static str,
    /// Distinct values seen.
    pub values: BTreeSet<String>,
    /// `None` for structured metadata, else the parsers that produced it.
    pub parsers: Option<Vec<String>>,
    /// The JSON path when the json parser produced it.
    pub json_path: Option<Vec<String>>,
}

/// Loki's `determineType`: int, float, boolean, Go duration, bytes, else string.
pub fn determine_type(v: &str) -> &'static str {
    if !may_be_numeric(v) {
        return if is_bool(v) { "boolean" } else { "string" };
    }
    if v.parse::<i64>().is_ok() && !v.starts_with('+') {
        "int"
    } else if go::strconv::parse_float(v).is_ok() {
        "float"
    } else if is_bool(v) {
        "boolean"
    } else if logql_parser::Duration::parse_go(v).is_ok() {
        "duration"
    } else if go::humanize::parse_bytes(v).is_some() {
        "bytes"
    } else {
        "string"
    }
}

/// Go's `strconv.ParseBool` spellings.
fn is_bool(v: &str) -> bool {
    matches!(
        v,
        "1" | "t" | "T" | "TRUE" | "true" | "True" | "0" | "f" | "F" | "FALSE" | "false" | "False"
    )
}

/// Whether `v` can be an int, float, duration or byte size: each of those
/// starts (after a sign, or spaces for sizes) with a digit, `.` or `,`, or
/// is `inf`/`infinity`/`nan`. Anything else skips their parsers, whose
/// failures format an error message; a non-ASCII first byte (a Unicode
/// space may be trimmed) takes the full path.
fn may_be_numeric(v: &str) -> bool {
    v.as_bytes().first().is_none_or(|&c| {
        c.is_ascii_digit()
            || c.is_ascii_whitespace()
            || !c.is_ascii()
            || matches!(c, b'+' | b'-' | b'.' | b',' | b'i' | b'I' | b'n' | b'N')
    })
}

/// Labels, the parser that produced them, and JSON paths by label.
pub type Reparsed = (
    Vec<(String, String)>,
    Option<&'static str>,
    BTreeMap<String, Vec<String>>,
);

/// Values by field, the parser, and JSON paths by field.
type EntryFields = (
    BTreeMap<String, Vec<String>>,
    Option<&'static str>,
    BTreeMap<String, Vec<String>>,
);

/// The labels parsing `line` again yields (Loki's `parseEntry`): json if the
/// line is a JSON object that parses cleanly, else logfmt, else nothing.
/// Returns the labels, the parser name and JSON paths by label.
pub fn reparse(stream: &[(String, String)], line: &str) -> Reparsed {
    Reparser::default().reparse(stream.iter().map(|(k, v)| (k.as_str(), v.as_str())), line)
}

/// [`reparse`] with its label builder and parsers kept across entries, so
/// that a detected-fields run does not allocate them once per entry.
#[derive(Debug)]
struct Reparser {
    lbs: LabelsBuilder,
    json: JsonParser,
    logfmt: LogfmtParser,
    hints: Hints,
    paths: Walker,
}

impl Default for Reparser {
    fn default() -> Self {
        Self {
            lbs: LabelsBuilder::new(),
            json: JsonParser::default(),
            logfmt: LogfmtParser::new(false, false, Vec::new()),
            hints: Hints::default(),
            paths: Walker::default(),
        }
    }
}

impl Reparser {
    /// [`reparse`] over `stream` pairs given as an iterator.
    fn reparse<'s>(
        &mut self,
        stream: impl Iterator<Item = (&'s str, &'s str)> + Clone,
        line: &str,
    ) -> Reparsed {
        let lbs = &mut self.lbs;
        lbs.reset(stream.clone());
        self.json.process(line, lbs, &self.hints);
        let mut parser = "json";
        if lbs.has_err() || !is_object(line) {
            lbs.reset(stream.clone());
            self.logfmt.process(line, lbs, &self.hints);
            parser = "logfmt";
            if lbs.has_err() {
                return (Vec::new(), None, BTreeMap::new());
            }
        }
        let mut out = Vec::new();
        lbs.for_each(|k, v, c| {
            if c == Category::Parsed && k != ERROR && k != ERROR_DETAILS {
                out.push((k.to_owned(), v.to_owned()));
            }
        });
        if out.is_empty() && parser == "logfmt" {
            // Loki's logfmt parser "succeeds" on any line; a line without a
            // single pair still counts as logfmt with no fields.
            return (out, Some(parser), BTreeMap::new());
        }
        let paths = if parser == "json" {
            json_paths(&mut self.paths, line, |k| {
                stream.clone().any(|(s, _)| s == k)
            })
        } else {
            BTreeMap::new()
        };
        (out, Some(parser), paths)
    }
}

fn is_object(line: &str) -> bool {
    line.trim_start().starts_with('{')
}

/// Every scalar member's label name with its original path components.
/// The same iterative, budgeted walk as `| json` (which succeeded on this
/// line), so any depth is fine.
fn json_paths(
    walker: &mut Walker,
    line: &str,
    is_label: impl Fn(&str) -> bool,
) -> BTreeMap<String, Vec<String>> {
    /// Collects the path of each scalar's name; the first one wins.
    struct Paths {
        path: Vec<String>,
        out: BTreeMap<String, Vec<String>>,
    }
    impl Visitor<'_> for Paths {
        fn member(
            &mut self,
            key: &mut String,
            depth: usize,
            k: &str,
            v: Value<'_>,
        ) -> Result<bool, &'static str> {
            self.path.truncate(depth);
            self.path.push(k.to_owned());
            let scalar = matches!(v.kind, Kind::String | Kind::Number | Kind::Boolean);
            if scalar && !key.is_empty() && !self.out.contains_key(key.as_str()) {
                self.out.insert(key.clone(), self.path.clone());
            }
            Ok(v.kind == Kind::Object)
        }
    }
    let mut paths = Paths {
        path: Vec::new(),
        out: BTreeMap::new(),
    };
    let _ = walker.walk(line, &mut String::new(), &mut paths);
    let out = paths.out;
    // A key that collides with a stream label is reported as `<key>_extracted`.
    out.into_iter()
        .map(|(k, p)| {
            if is_label(&k) {
                (format!("{k}_extracted"), p)
            } else {
                (k, p)
            }
        })
        .collect()
}

/// The parsed labels of an entry: the query's own parsed labels plus a fresh parse.
fn entry_fields(rp: &mut Reparser, stream: &[(String, String)], e: &Entry) -> EntryFields {
    let mut parsed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in &e.parsed {
        if k != ERROR && k != ERROR_DETAILS && k != PRESERVE_ERROR {
            parsed.entry(k.clone()).or_default().push(v.clone());
        }
    }
    // Loki parses with the stream labels minus the names the query parsed.
    let base = stream
        .iter()
        .filter(|(k, _)| !parsed.contains_key(k))
        .map(|(k, v)| (k.as_str(), v.as_str()));
    let (fresh, parser, paths) = rp.reparse(base, &e.line);
    for (k, v) in fresh {
        let vals = parsed.entry(k).or_default();
        if !vals.contains(&v) {
            vals.push(v);
        }
    }
    (parsed, parser, paths)
}

/// Loki's `parseDetectedFields`, keeping at most `limit` fields.
pub fn detect(streams: &[Stream], limit: usize) -> BTreeMap<String, Field> {
    let mut out: BTreeMap<String, Field> = BTreeMap::new();
    let mut rp = Reparser::default();
    for s in streams {
        for e in &s.entries {
            for (k, v) in &e.metadata {
                let Some(f) = slot(&mut out, k, limit, || None) else {
                    continue;
                };
                f.kind = determine_type(v);
                insert_value(&mut f.values, v);
            }
            let (parsed, parser, paths) = entry_fields(&mut rp, &s.labels, e);
            for (k, vals) in parsed {
                let first = || Some(parser.map_or_else(Vec::new, |p| vec![p.to_owned()]));
                let Some(f) = slot(&mut out, &k, limit, first) else {
                    continue;
                };
                let list = f.parsers.get_or_insert_with(Vec::new);
                if let Some(p) = parser
                    && !list.iter().any(|l| l == p)
                {
                    list.push(p.to_owned());
                }
                if parser == Some("json") {
                    // The last entry's path wins, as in Loki.
                    let path = paths.get(&k);
                    if f.json_path.as_ref() != path {
                        f.json_path = path.cloned();
                    }
                }
                if let Some(first) = vals.first() {
                    f.kind = determine_type(first);
                }
                for v in vals {
                    insert_value(&mut f.values, &v);
                }
            }
        }
    }
    out
}

/// Adds `v` to a field's distinct values, copying it only when new.
fn insert_value(values: &mut BTreeSet<String>, v: &str) {
    if !values.contains(v) {
        values.insert(v.to_owned());
    }
}

fn slot<'a>(
    out: &'a mut BTreeMap<String, Field>,
    name: &str,
    limit: usize,
    parsers: impl FnOnce() -> Option<Vec<String>>,
) -> Option<&'a mut Field> {
    if !out.contains_key(name) {
        if out.len() >= limit {
            return None;
        }
        out.insert(
            name.to_owned(),
            Field {
                kind: "string",
                values: BTreeSet::new(),
                parsers: parsers(),
                json_path: None,
            },
        );
    }
    out.get_mut(name)
}

/// Loki's `parseDetectedFieldValues`: values of `name` in metadata and parsed
/// labels, byte sizes rewritten, collected until `limit` values are known.
pub fn values(streams: &[Stream], name: &str, limit: usize) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rp = Reparser::default();
    for s in streams {
        for e in &s.entries {
            if out.len() >= limit {
                return out;
            }
            for (k, v) in &e.metadata {
                if k == name {
                    out.insert(v.clone());
                }
            }
            let (parsed, _, _) = entry_fields(&mut rp, &s.labels, e);
            if let Some(vals) = parsed.get(name) {
                for v in vals {
                    out.insert(normalize_bytes_value(v).unwrap_or_else(|| v.clone()));
                }
            }
        }
    }
    out
}

/// The units Loki accepts as "bytes" when rewriting detected values.
const BYTES_SUFFIXES: &[&str] = &[
    "b", "kib", "kb", "mib", "mb", "gib", "gb", "tib", "tb", "pib", "pb", "eib", "eb", "ki", "k",
    "mi", "m", "gi", "g", "ti", "t", "pi", "p", "ei", "e",
];

/// Loki's detected-field-values rewrite: a byte size with a unit becomes
/// `humanize.Bytes` without its space (`2048KiB` → `2.1MB`); anything else is kept.
fn normalize_bytes_value(v: &str) -> Option<String> {
    let lower = v.to_ascii_lowercase();
    if !BYTES_SUFFIXES.iter().any(|u| lower.ends_with(u)) {
        return None;
    }
    let n = go::humanize::parse_bytes(v)?;
    Some(go::humanize::format_bytes(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(line: &str, md: &[(&str, &str)]) -> Entry {
        Entry {
            ts: 1,
            line: line.to_owned(),
            metadata: md
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            parsed: Vec::new(),
        }
    }

    #[test]
    fn byte_values_are_rewritten_as_loki_does() {
        assert_eq!(normalize_bytes_value("2048KiB").as_deref(), Some("2.1MB"));
        assert_eq!(normalize_bytes_value("10"), None);
        assert_eq!(normalize_bytes_value("fast"), None);
    }

    #[test]
    fn types() {
        assert_eq!(determine_type("42"), "int");
        assert_eq!(determine_type("4.2"), "float");
        assert_eq!(determine_type("true"), "boolean");
        assert_eq!(determine_type("15ms"), "duration");
        assert_eq!(determine_type("1.5h"), "duration");
        assert_eq!(determine_type("10KB"), "bytes");
        assert_eq!(determine_type("GET"), "string");
        // The quick path for values that cannot be numbers agrees with the
        // parsers on every edge the quick test lets through or stops.
        for (v, t) in [
            ("", "string"),
            ("T", "boolean"),
            ("False", "boolean"),
            ("inf", "float"),
            ("-Infinity", "float"),
            ("NaN", "float"),
            ("nil", "string"),
            (".5", "float"),
            ("+1", "float"),
            ("-1", "int"),
            (",5", "bytes"),
            // go-humanize v1.0.1 does not skip leading spaces: Go's
            // ParseBytes(" 5 kB") fails, so Loki types these as strings.
            (" 5 kB", "string"),
            ("\u{a0}5", "string"),
            ("5\u{a0}", "bytes"),
            ("-1.5h", "duration"),
            ("e5", "string"),
            ("x15ms", "string"),
            ("kB", "string"),
        ] {
            assert_eq!(determine_type(v), t, "{v:?}");
        }
    }

    #[test]
    fn a_deeply_nested_line_gives_its_field_and_path() {
        // The recursive walks this replaced overflowed the thread's stack.
        let n = 100_000;
        let line = format!(
            "{}{{\"took\":\"15ms\"}}{}",
            "{\"a\":".repeat(n),
            "}".repeat(n)
        );
        let streams = vec![Stream {
            labels: vec![("app".to_owned(), "a".to_owned())],
            entries: vec![entry(&line, &[])],
        }];
        let f = detect(&streams, 1000);
        let name = format!("{}_took", vec!["a"; n].join("_"));
        assert_eq!(f.keys().collect::<Vec<_>>(), [&name]);
        let field = &f[&name];
        assert_eq!(field.kind, "duration");
        assert_eq!(field.parsers.as_deref(), Some(&["json".to_owned()][..]));
        let path = field.json_path.as_deref().unwrap();
        assert_eq!(
            (path.len(), &path[0], &path[n]),
            (n + 1, &"a".to_owned(), &"took".to_owned())
        );
        assert_eq!(
            values(&streams, &name, 10).into_iter().collect::<Vec<_>>(),
            ["15ms"]
        );
    }

    #[test]
    fn detects_json_logfmt_and_metadata() {
        let streams = vec![Stream {
            labels: vec![("app".to_owned(), "a".to_owned())],
            entries: vec![
                entry(
                    r#"{"user":{"id":7},"app":"x","took":"15ms"}"#,
                    &[("trace_id", "t1")],
                ),
                entry("method=GET status=200 size=10KB", &[("trace_id", "t2")]),
                entry("method=POST status=500", &[]),
            ],
        }];
        let f = detect(&streams, 1000);
        let t = &f["trace_id"];
        assert_eq!((t.kind, t.values.len(), &t.parsers), ("string", 2, &None));
        let u = &f["user_id"];
        assert_eq!(u.kind, "int");
        assert_eq!(u.parsers.as_deref(), Some(&["json".to_owned()][..]));
        assert_eq!(
            u.json_path.as_deref(),
            Some(&["user".to_owned(), "id".to_owned()][..])
        );
        assert!(f.contains_key("app_extracted"));
        assert_eq!(
            f["app_extracted"].json_path.as_deref(),
            Some(&["app".to_owned()][..])
        );
        assert_eq!(f["took"].kind, "duration");
        let m = &f["method"];
        assert_eq!((m.kind, m.values.len()), ("string", 2));
        assert_eq!(m.parsers.as_deref(), Some(&["logfmt".to_owned()][..]));
        assert_eq!(f["size"].kind, "bytes");
        assert_eq!(detect(&streams, 2).len(), 2);
        let v = values(&streams, "method", 1000);
        assert_eq!(v.into_iter().collect::<Vec<_>>(), ["GET", "POST"]);
        let v = values(&streams, "size", 1000);
        assert_eq!(v.into_iter().collect::<Vec<_>>(), ["10kB"]);
        assert_eq!(values(&streams, "trace_id", 1000).len(), 2);
    }
}
