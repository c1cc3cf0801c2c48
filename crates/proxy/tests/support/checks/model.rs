//! A small model of Loki's log query semantics over the dataset (selector,
//! line filters, parsers, label filters, ordering, limit): the expected
//! `data.result` every log query check compares with.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::support::dataset::Entry;

/// A label set, sorted as Loki prints it.
pub(super) type Labels = BTreeMap<String, String>;

/// What a log query selects, as a model.
pub(super) struct Model<'a> {
    pub(super) select: &'a (dyn Fn(&Entry) -> bool + Sync),
    /// Parsed labels per entry (empty without a parser).
    pub(super) parse: &'a (dyn Fn(&Entry) -> Labels + Sync),
    /// Label filter over all labels (stream, metadata, parsed).
    pub(super) keep: &'a (dyn Fn(&Labels) -> bool + Sync),
}

pub(super) fn no_parse(_: &Entry) -> Labels {
    Labels::new()
}

pub(super) fn keep_all(_: &Labels) -> bool {
    true
}

/// Loki's `| json` on a flat object: every key, numbers as written.
pub(super) fn parse_json(e: &Entry) -> Labels {
    let v: Value = serde_json::from_str(&e.line).expect("dataset JSON line");
    v.as_object()
        .expect("flat object")
        .iter()
        .map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), s)
        })
        .collect()
}

/// Loki's `| logfmt` on the dataset's lines (`k=v` and `k="quoted"`).
pub(super) fn parse_logfmt(e: &Entry) -> Labels {
    let mut out = Labels::new();
    let mut rest = e.line.as_str();
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq].trim().to_string();
        rest = &rest[eq + 1..];
        let value;
        if let Some(r) = rest.strip_prefix('"') {
            let end = r.find('"').expect("closing quote");
            value = r[..end].to_string();
            rest = &r[end + 1..];
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            value = rest[..end].to_string();
            rest = &rest[end..];
        }
        out.insert(key, value);
        rest = rest.trim_start();
    }
    out
}

/// Loki's label-set string, the sort key of streams.
pub(super) fn label_string(l: &Labels) -> String {
    let parts: Vec<String> = l.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", parts.join(", "))
}

/// Selects the entries whose stream label `k` is `v`.
pub(super) fn stream_is(k: &'static str, v: &'static str) -> impl Fn(&Entry) -> bool + Sync {
    move |e: &Entry| e.stream.get(k).is_some_and(|x| x == v)
}

/// The `data.result` Loki gives for `model` over `[start, end)`.
pub(super) fn expected_result(
    entries: &[Entry],
    model: &Model<'_>,
    start: i64,
    end: i64,
    limit: usize,
    backward: bool,
    categorize: bool,
) -> Value {
    let mut picked: Vec<(&Entry, Labels)> = entries
        .iter()
        .filter(|e| e.time_ns >= start && e.time_ns < end && (model.select)(e))
        .map(|e| (e, (model.parse)(e)))
        .filter(|(e, parsed)| {
            let mut all = e.stream.clone();
            all.extend(e.metadata.clone());
            all.extend(parsed.clone());
            (model.keep)(&all)
        })
        .collect();
    picked.sort_by_key(|(e, _)| e.time_ns);
    if backward {
        picked.reverse();
    }
    picked.truncate(limit);

    let mut streams: BTreeMap<String, (Labels, Vec<Value>)> = BTreeMap::new();
    for (e, parsed) in picked {
        let (labels, value) = if categorize {
            let mut third = serde_json::Map::new();
            if !e.metadata.is_empty() {
                third.insert("structuredMetadata".into(), json!(e.metadata));
            }
            if !parsed.is_empty() {
                third.insert("parsed".into(), json!(parsed));
            }
            (
                e.stream.clone(),
                json!([e.time_ns.to_string(), e.line, Value::Object(third)]),
            )
        } else {
            let mut all = e.stream.clone();
            all.extend(e.metadata.clone());
            all.extend(parsed);
            (all, json!([e.time_ns.to_string(), e.line]))
        };
        streams
            .entry(label_string(&labels))
            .or_insert_with(|| (labels, Vec::new()))
            .1
            .push(value);
    }
    Value::Array(
        streams
            .into_values()
            .map(|(labels, values)| json!({"stream": labels, "values": values}))
            .collect(),
    )
}
