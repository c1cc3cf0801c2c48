//! The typed answer ([`LogAnswer`]) for entries the proxy evaluated.
//!
//! Same contract as [`crate::encode::streams`]: without `categorize-labels`
//! every label (stream, structured metadata, parsed, error labels) goes into
//! the stream's label set, so each distinct set is its own stream and values
//! are `[ts, line]`; with it, `stream` holds the stream labels only and each
//! value is `[ts, line, {"structuredMetadata":{…},"parsed":{…}}]` with empty
//! maps left out. Streams are sorted by their label-set string; entries keep
//! the order they were given in (the query's direction).

use crate::answer::{self, LogAnswer, LogStats};
use crate::pipeline::labels::{Category, LabelsBuilder};

/// One answer entry: time, final line and labels sorted by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Nanoseconds since the epoch.
    pub ts: i64,
    /// The line after the pipeline.
    pub line: String,
    /// Labels sorted by name, each with its category.
    pub labels: Vec<(String, String, Category)>,
    /// Loki's hash of the base stream ([`crate::tie`]).
    pub origin: u64,
}

impl Entry {
    /// Captures a pipeline's result for an entry of the base stream with
    /// Loki's hash `origin`.
    pub fn capture(origin: u64, ts: i64, line: &str, lbs: &LabelsBuilder) -> Self {
        let mut labels = Vec::new();
        lbs.for_each(|n, v, c| labels.push((n.to_owned(), v.to_owned(), c)));
        labels.sort_by(|a, b| a.0.cmp(&b.0));
        Self {
            ts,
            line: line.to_owned(),
            labels,
            origin,
        }
    }
}

/// Counters of the processing behind an answer, for `stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Processed {
    /// Rows read from VictoriaLogs.
    pub rows: u64,
    /// Bytes of lines and fields read.
    pub bytes: u64,
    /// Bytes of structured metadata read.
    pub metadata_bytes: u64,
}

fn write_key(out: &mut Vec<u8>, labels: &[(String, String, Category)], categorize: bool) {
    out.push(b'{');
    let mut first = true;
    for (n, v, c) in labels {
        if categorize && *c != Category::Stream {
            continue;
        }
        if !first {
            out.extend_from_slice(b", ");
        }
        first = false;
        out.extend_from_slice(n.as_bytes());
        out.push(b'=');
        go::strconv::append_quote(out, v);
    }
    out.push(b'}');
}

/// The typed answer for `entries` (already limited and in direction
/// order), with `warnings` when there are any.
pub fn answer(
    entries: &[Entry],
    categorize: bool,
    warnings: &[String],
    processed: Processed,
) -> LogAnswer {
    let mut keys: Vec<u8> = Vec::new();
    let mut items: Vec<(std::ops::Range<usize>, usize)> = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let start = keys.len();
        write_key(&mut keys, &e.labels, categorize);
        items.push((start..keys.len(), i));
    }
    items.sort_by(|a, b| {
        keys[a.0.clone()]
            .cmp(&keys[b.0.clone()])
            .then(a.1.cmp(&b.1))
    });

    let mut out = LogAnswer::new(categorize);
    out.reserve(
        entries.iter().map(|e| e.line.len()).sum::<usize>(),
        entries.len(),
    );
    out.warnings = warnings.to_vec();
    let mut i = 0;
    while i < items.len() {
        let key = &keys[items[i].0.clone()];
        let mut j = i + 1;
        while j < items.len() && keys[items[j].0.clone()] == *key {
            j += 1;
        }
        out.begin_stream();
        let first = &entries[items[i].1];
        for (n, v, _) in first
            .labels
            .iter()
            .filter(|l| !categorize || l.2 == Category::Stream)
        {
            out.push_stream_label(n, v);
        }
        for (_, idx) in &items[i..j] {
            let e = &entries[*idx];
            out.push_entry_of(e.origin, e.ts, &e.line);
            if categorize {
                for (n, v, c) in &e.labels {
                    let c = match c {
                        Category::Stream => continue,
                        Category::Metadata => answer::Category::Metadata,
                        Category::Parsed => answer::Category::Parsed,
                    };
                    out.push_entry_label(c, n, v);
                }
            }
        }
        i = j;
    }
    out.stats = LogStats {
        bytes: processed.bytes,
        lines: processed.rows,
        post_filter_lines: entries.len() as u64,
        metadata_bytes: processed.metadata_bytes,
        splits: 0,
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(ts: i64, line: &str, labels: &[(&str, &str, Category)]) -> Entry {
        Entry {
            ts,
            line: line.into(),
            labels: labels
                .iter()
                .map(|(a, b, c)| ((*a).into(), (*b).into(), *c))
                .collect(),
            origin: 0,
        }
    }

    fn answer(entries: &[Entry], categorize: bool, warnings: &[String]) -> serde_json::Value {
        let a = super::answer(entries, categorize, warnings, Processed::default());
        let mut out = Vec::new();
        crate::answer::encode::write_streams(&a, std::time::Instant::now(), &mut out);
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn merged_and_categorized() {
        let es = [
            entry(
                3,
                "c",
                &[
                    ("app", "a", Category::Stream),
                    ("level", "warn", Category::Parsed),
                ],
            ),
            entry(
                2,
                "b",
                &[
                    ("app", "a", Category::Stream),
                    ("level", "info", Category::Parsed),
                    ("t", "1", Category::Metadata),
                ],
            ),
            entry(
                1,
                "a",
                &[
                    ("app", "a", Category::Stream),
                    ("level", "warn", Category::Parsed),
                ],
            ),
        ];
        let v = answer(&es, false, &[]);
        let r = &v["data"]["result"];
        assert_eq!(r.as_array().unwrap().len(), 2);
        assert_eq!(
            r[0]["stream"],
            serde_json::json!({"app":"a","level":"info","t":"1"})
        );
        assert_eq!(r[1]["values"], serde_json::json!([["3", "c"], ["1", "a"]]));
        assert!(v.get("warnings").is_none());

        let v = answer(&es, true, &["w".into()]);
        assert_eq!(v["warnings"], serde_json::json!(["w"]));
        assert_eq!(
            v["data"]["encodingFlags"],
            serde_json::json!(["categorize-labels"])
        );
        let r = &v["data"]["result"];
        assert_eq!(r.as_array().unwrap().len(), 1);
        assert_eq!(
            r[0]["values"][1],
            serde_json::json!(["2","b",{"structuredMetadata":{"t":"1"},"parsed":{"level":"info"}}])
        );
    }
}
