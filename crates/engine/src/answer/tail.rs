//! The live tail's frames: `{"streams":[…],"dropped_entries":[…]}`, one
//! `streams` element per entry, in time order, as Loki's tailer sends them.
//!
//! Frames keep the bytes lokivl has always sent (once through
//! `serde_json::Value`): no HTML escaping ([`Escape::Plain`]), and the third
//! element of a categorized value with its keys in name order (`parsed`
//! before `structuredMetadata`).

use std::sync::Arc;

use super::encode::{PARSED, STRUCTURED_METADATA, write_categories, write_object};
use super::log::{Category, LogAnswer};
use crate::encode::json::{Escape, write_i64_str, write_str_as};

/// One entry ready for a frame, owning what it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailEntry {
    /// Nanoseconds since the epoch.
    pub ts: i64,
    /// The `stream` labels, shared by the entries of one stream.
    pub stream: Arc<[(String, String)]>,
    /// The log line.
    pub line: String,
    /// Structured metadata and parsed labels (categorized tails), sorted by name.
    pub labels: Vec<(String, String, Category)>,
}

impl TailEntry {
    /// The entries of `answer`, sorted by time (stable: equal times keep
    /// the answer's order).
    pub fn from_answer(answer: &LogAnswer) -> Vec<Self> {
        let mut out = Vec::with_capacity(answer.len());
        for s in answer.streams() {
            let stream: Arc<[(String, String)]> = s
                .labels()
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .collect();
            for e in s.entries() {
                out.push(Self {
                    ts: e.ts,
                    stream: Arc::clone(&stream),
                    line: e.line().to_owned(),
                    labels: e
                        .labels()
                        .map(|(n, v, c)| (n.to_owned(), v.to_owned(), c))
                        .collect(),
                });
            }
        }
        out.sort_by_key(|e| e.ts);
        out
    }
}

/// Writes one frame: `streams` (one element per entry, the value's third
/// element when `categorize`), `dropped_entries` (timestamp and stream
/// labels sorted by name) when there are any, and `encodingFlags` when
/// categorized: Loki's key order.
pub fn write_frame<'a, L>(
    entries: &[TailEntry],
    dropped: impl IntoIterator<Item = (i64, L)>,
    categorize: bool,
) -> String
where
    L: IntoIterator<Item = (&'a str, &'a str)>,
{
    let e = Escape::Plain;
    let mut out: Vec<u8> = Vec::with_capacity(64 + entries.len() * 128);
    out.extend_from_slice(b"{\"streams\":[");
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"stream\":");
        write_object(
            &mut out,
            entry.stream.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            e,
        );
        out.extend_from_slice(b",\"values\":[[");
        write_i64_str(&mut out, entry.ts);
        out.push(b',');
        write_str_as(&mut out, &entry.line, e);
        if categorize {
            out.push(b',');
            write_categories(
                &mut out,
                [
                    (PARSED, Category::Parsed),
                    (STRUCTURED_METADATA, Category::Metadata),
                ],
                |c| {
                    entry
                        .labels
                        .iter()
                        .filter(move |l| l.2 == c)
                        .map(|(n, v, _)| (n.as_str(), v.as_str()))
                },
                e,
            );
        }
        out.extend_from_slice(b"]]}");
    }
    out.push(b']');
    let mut dropped = dropped.into_iter().peekable();
    if dropped.peek().is_some() {
        out.extend_from_slice(b",\"dropped_entries\":[");
        for (i, (ts, labels)) in dropped.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"timestamp\":");
            write_i64_str(&mut out, ts);
            out.extend_from_slice(b",\"labels\":");
            write_object(&mut out, labels.into_iter(), e);
            out.push(b'}');
        }
        out.push(b']');
    }
    if categorize {
        out.extend_from_slice(b",\"encodingFlags\":[\"categorize-labels\"]");
    }
    out.push(b'}');
    // Only UTF-8 text and ASCII were written.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The frame as lokivl wrote it before this writer existed: through
    /// `serde_json::Value` (sorted keys, no HTML escaping).
    fn via_serde(entries: &[TailEntry], categorize: bool) -> String {
        let streams: Vec<Value> = entries
            .iter()
            .map(|e| {
                let stream: serde_json::Map<String, Value> = e
                    .stream
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(v)))
                    .collect();
                let mut value = vec![json!(e.ts.to_string()), json!(e.line)];
                if categorize {
                    let mut third = serde_json::Map::new();
                    for (key, c) in [
                        ("structuredMetadata", Category::Metadata),
                        ("parsed", Category::Parsed),
                    ] {
                        let m: serde_json::Map<String, Value> = e
                            .labels
                            .iter()
                            .filter(|l| l.2 == c)
                            .map(|(k, v, _)| (k.clone(), json!(v)))
                            .collect();
                        if !m.is_empty() {
                            third.insert(key.to_owned(), Value::Object(m));
                        }
                    }
                    value.push(Value::Object(third));
                }
                json!({"stream": stream, "values": [value]})
            })
            .collect();
        let mut out = format!("{{\"streams\":{}", Value::Array(streams));
        if categorize {
            out.push_str(",\"encodingFlags\":[\"categorize-labels\"]");
        }
        out.push('}');
        out
    }

    #[test]
    fn frames_escape_and_order_keys_as_before() {
        let line = "a <b> & \"c\" \\ \n\t\u{8}\u{c}\u{1} é \u{2028} \u{7f}";
        let mut a = LogAnswer::new(true);
        a.begin_stream();
        a.push_stream_label("app", "x<y>");
        a.push_entry(2, line);
        a.push_entry_label(Category::Metadata, "m", "1&2");
        a.push_entry_label(Category::Parsed, "p", "\u{1f}");
        a.push_entry(1, "plain");
        let entries = TailEntry::from_answer(&a);
        assert_eq!(entries[0].ts, 1, "time order");
        for categorize in [false, true] {
            let frame = write_frame(
                &entries,
                std::iter::empty::<(i64, [(&str, &str); 0])>(),
                categorize,
            );
            assert_eq!(frame, via_serde(&entries, categorize));
        }
        assert!(
            write_frame(
                &entries,
                std::iter::empty::<(i64, [(&str, &str); 0])>(),
                true
            )
            .contains(r#"{"parsed":{"p":"\u001f"},"structuredMetadata":{"m":"1&2"}}"#)
        );
    }

    #[test]
    fn dropped_entries_follow_the_streams() {
        let frame = write_frame(&[], [(5, [("app", "<b>")])], false);
        assert_eq!(
            frame,
            r#"{"streams":[],"dropped_entries":[{"timestamp":"5","labels":{"app":"<b>"}}]}"#
        );
    }
}
