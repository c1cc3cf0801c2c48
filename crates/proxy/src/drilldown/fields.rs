//! Detected fields and detected field values, computed as Loki's query
//! frontend does (grafana/loki `pkg/querier/queryrange/detected_fields.go`)
//! over the entries [`super::logs::fetch`] returns.
//!
//! For every entry: each structured-metadata key is a field with `parsers`
//! `null`; the line is parsed again with `json`, else `logfmt`, and every key
//! (plus labels the query's own parsers set) is a field with that parser.
//! The type is re-detected from the first value of each entry, so the last
//! entry read decides it, as in Loki. Cardinality is the exact number of
//! distinct values (Loki estimates it with HyperLogLog, exact at these sizes).

use std::collections::{BTreeMap, BTreeSet};

use super::humanize;
use super::logs::{Entry, Stream};
use crate::pipeline::hints::Hints;
use crate::pipeline::json::{JsonParser, Kind, object_each};
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
    if v.parse::<i64>().is_ok() && !v.starts_with('+') {
        "int"
    } else if crate::pipeline::label_filter::parse_float(v).is_ok() {
        "float"
    } else if matches!(
        v,
        "1" | "t" | "T" | "TRUE" | "true" | "True" | "0" | "f" | "F" | "FALSE" | "false" | "False"
    ) {
        "boolean"
    } else if logql_parser::Duration::parse_go(v).is_ok() {
        "duration"
    } else if humanize::parse_bytes(v).is_some() {
        "bytes"
    } else {
        "string"
    }
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
    let mut lbs = LabelsBuilder::new();
    lbs.reset(stream.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let hints = Hints::default();
    JsonParser::default().process(line, &mut lbs, &hints);
    let mut parser = "json";
    if lbs.has_err() || !is_object(line) {
        lbs.reset(stream.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        LogfmtParser::new(false, false, Vec::new()).process(line, &mut lbs, &hints);
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
        json_paths(line, stream)
    } else {
        BTreeMap::new()
    };
    (out, Some(parser), paths)
}

fn is_object(line: &str) -> bool {
    line.trim_start().starts_with('{')
}

/// Every scalar member's label name with its original path components.
fn json_paths(line: &str, stream: &[(String, String)]) -> BTreeMap<String, Vec<String>> {
    fn walk(
        obj: &str,
        path: &mut Vec<String>,
        key: &mut String,
        out: &mut BTreeMap<String, Vec<String>>,
    ) {
        let _ = object_each(obj, &mut |k, v| {
            let len = key.len();
            if !k.trim().is_empty() {
                if !key.is_empty() {
                    key.push('_');
                }
                crate::pipeline::json::append_sanitized(key, &k);
            }
            path.push(k.into_owned());
            match v.kind {
                Kind::Object => walk(v.raw, path, key, out),
                Kind::String | Kind::Number | Kind::Boolean if !key.is_empty() => {
                    out.entry(key.clone()).or_insert_with(|| path.clone());
                }
                _ => {}
            }
            path.pop();
            key.truncate(len);
            Ok(())
        });
    }
    let mut out = BTreeMap::new();
    walk(line, &mut Vec::new(), &mut String::new(), &mut out);
    // A key that collides with a stream label is reported as `<key>_extracted`.
    out.into_iter()
        .map(|(k, p)| {
            if stream.iter().any(|(s, _)| *s == k) {
                (format!("{k}_extracted"), p)
            } else {
                (k, p)
            }
        })
        .collect()
}

/// The parsed labels of an entry: the query's own parsed labels plus a fresh parse.
fn entry_fields(stream: &[(String, String)], e: &Entry) -> EntryFields {
    let mut parsed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in &e.parsed {
        if k != ERROR && k != ERROR_DETAILS && k != PRESERVE_ERROR {
            parsed.entry(k.clone()).or_default().push(v.clone());
        }
    }
    // Loki parses with the stream labels minus the names the query parsed.
    let base: Vec<(String, String)> = stream
        .iter()
        .filter(|(k, _)| !parsed.contains_key(k))
        .cloned()
        .collect();
    let (fresh, parser, paths) = reparse(&base, &e.line);
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
    for s in streams {
        for e in &s.entries {
            for (k, v) in &e.metadata {
                let Some(f) = slot(&mut out, k, limit, None) else {
                    continue;
                };
                f.kind = determine_type(v);
                f.values.insert(v.clone());
            }
            let (parsed, parser, paths) = entry_fields(&s.labels, e);
            for (k, vals) in parsed {
                let parsers: Vec<String> = parser.iter().map(|p| (*p).to_owned()).collect();
                let Some(f) = slot(&mut out, &k, limit, Some(parsers.clone())) else {
                    continue;
                };
                let list = f.parsers.get_or_insert_with(Vec::new);
                for p in parsers {
                    if !list.contains(&p) {
                        list.push(p);
                    }
                }
                if parser == Some("json") {
                    f.json_path = paths.get(&k).cloned();
                }
                if let Some(first) = vals.first() {
                    f.kind = determine_type(first);
                }
                f.values.extend(vals);
            }
        }
    }
    out
}

fn slot<'a>(
    out: &'a mut BTreeMap<String, Field>,
    name: &str,
    limit: usize,
    parsers: Option<Vec<String>>,
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
                parsers,
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
            let (parsed, _, _) = entry_fields(&s.labels, e);
            if let Some(vals) = parsed.get(name) {
                for v in vals {
                    out.insert(humanize::normalize_bytes_value(v).unwrap_or_else(|| v.clone()));
                }
            }
        }
    }
    out
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
    fn types() {
        assert_eq!(determine_type("42"), "int");
        assert_eq!(determine_type("4.2"), "float");
        assert_eq!(determine_type("true"), "boolean");
        assert_eq!(determine_type("15ms"), "duration");
        assert_eq!(determine_type("1.5h"), "duration");
        assert_eq!(determine_type("10KB"), "bytes");
        assert_eq!(determine_type("GET"), "string");
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
