//! The typed answer ([`LogAnswer`]) for entries the proxy evaluated.
//!
//! Same contract as [`crate::encode::streams`]: without `categorize-labels`
//! every label (stream, structured metadata, parsed, error labels) goes into
//! the stream's label set, so each distinct set is its own stream and values
//! are `[ts, line]`; with it, `stream` holds the stream labels only and each
//! value is `[ts, line, {"structuredMetadata":{…},"parsed":{…}}]` with empty
//! maps left out. Streams are sorted by their label-set string; entries keep
//! the order they were given in (the query's direction).

use std::ops::Range;

use crate::answer::{self, LogAnswer, LogStats};
use crate::pipeline::labels::{Category, LabelsBuilder};

/// The entries a log query keeps, in the order kept: each entry's time, its
/// line after the pipeline and its labels sorted by name. Lines and labels
/// share one text buffer and one label list, so keeping an entry allocates
/// nothing once the buffers have grown (a page of a thousand entries with a
/// dozen labels each used to cost some 25,000 small allocations).
#[derive(Debug, Clone, Default)]
pub struct Entries {
    text: String,
    labels: Vec<LabelAt>,
    entries: Vec<EntryAt>,
}

/// One entry's place in [`Entries`].
#[derive(Debug, Clone)]
struct EntryAt {
    ts: i64,
    origin: u64,
    line: Range<usize>,
    labels: Range<usize>,
}

/// One label's place in [`Entries::text`]: its name, then its value right
/// after it.
#[derive(Debug, Clone, Copy)]
struct LabelAt {
    name_start: usize,
    name_end: usize,
    value_end: usize,
    category: Category,
}

impl LabelAt {
    fn name(self) -> Range<usize> {
        self.name_start..self.name_end
    }

    fn value(self) -> Range<usize> {
        self.name_end..self.value_end
    }
}

/// One entry of [`Entries`], borrowed.
#[derive(Debug, Clone, Copy)]
pub struct EntryRef<'a> {
    entries: &'a Entries,
    at: &'a EntryAt,
}

impl<'a> EntryRef<'a> {
    /// Nanoseconds since the epoch.
    pub fn ts(self) -> i64 {
        self.at.ts
    }

    /// Loki's hash of the base stream ([`crate::tie`]).
    pub fn origin(self) -> u64 {
        self.at.origin
    }

    /// The line after the pipeline.
    pub fn line(self) -> &'a str {
        &self.entries.text[self.at.line.clone()]
    }

    /// The labels, sorted by name, each with its category.
    pub fn labels(self) -> impl Iterator<Item = (&'a str, &'a str, Category)> + 'a {
        let text = &self.entries.text;
        self.entries.labels[self.at.labels.clone()]
            .iter()
            .map(move |l| (&text[l.name()], &text[l.value()], l.category))
    }
}

impl Entries {
    /// Room for `entries` entries.
    pub fn with_capacity(entries: usize) -> Self {
        Self {
            text: String::new(),
            labels: Vec::new(),
            entries: Vec::with_capacity(entries),
        }
    }

    /// Entries kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keeps the first `n` entries (and only their text and labels).
    pub fn truncate(&mut self, n: usize) {
        if n >= self.entries.len() {
            return;
        }
        self.entries.truncate(n);
        let (text, labels) = self
            .entries
            .last()
            .map_or((0, 0), |e| (e.labels_text_end(&self.labels), e.labels.end));
        self.text.truncate(text);
        self.labels.truncate(labels);
    }

    /// The entries, in the order kept.
    pub fn iter(&self) -> impl Iterator<Item = EntryRef<'_>> {
        self.entries.iter().map(|at| EntryRef { entries: self, at })
    }

    /// Entry `i`.
    ///
    /// # Panics
    /// When `i` is out of range.
    pub fn get(&self, i: usize) -> EntryRef<'_> {
        EntryRef {
            entries: self,
            at: &self.entries[i],
        }
    }

    /// Keeps a pipeline's result for an entry of the base stream with
    /// Loki's hash `origin`.
    pub fn capture(&mut self, origin: u64, ts: i64, line: &str, lbs: &LabelsBuilder) {
        self.begin(origin, ts, line);
        lbs.for_each(|n, v, c| self.push_label(n, v, c));
        self.end();
    }

    /// Keeps an entry with the given labels (in any order).
    pub fn push<'l>(
        &mut self,
        origin: u64,
        ts: i64,
        line: &str,
        labels: impl IntoIterator<Item = (&'l str, &'l str, Category)>,
    ) {
        self.begin(origin, ts, line);
        for (n, v, c) in labels {
            self.push_label(n, v, c);
        }
        self.end();
    }

    fn begin(&mut self, origin: u64, ts: i64, line: &str) {
        let start = self.text.len();
        self.text.push_str(line);
        self.entries.push(EntryAt {
            ts,
            origin,
            line: start..self.text.len(),
            labels: self.labels.len()..self.labels.len(),
        });
    }

    fn push_label(&mut self, name: &str, value: &str, category: Category) {
        let name_start = self.text.len();
        self.text.push_str(name);
        let name_end = self.text.len();
        self.text.push_str(value);
        self.labels.push(LabelAt {
            name_start,
            name_end,
            value_end: self.text.len(),
            category,
        });
    }

    /// Sorts the open entry's labels by name (stably, as captured).
    fn end(&mut self) {
        let Some(e) = self.entries.last_mut() else {
            return;
        };
        e.labels.end = self.labels.len();
        let text = &self.text;
        self.labels[e.labels.clone()].sort_by(|a, b| text[a.name()].cmp(&text[b.name()]));
    }
}

impl EntryAt {
    /// Where this entry's text ends: after its line, or after the last of
    /// its labels as captured (sorting moved only the label list).
    fn labels_text_end(&self, labels: &[LabelAt]) -> usize {
        labels[self.labels.clone()]
            .iter()
            .map(|l| l.value_end)
            .max()
            .unwrap_or(self.line.end)
            .max(self.line.end)
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

fn write_key<'a>(
    out: &mut Vec<u8>,
    labels: impl Iterator<Item = (&'a str, &'a str, Category)>,
    categorize: bool,
) {
    out.push(b'{');
    let mut first = true;
    for (n, v, c) in labels {
        if categorize && c != Category::Stream {
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
    entries: &Entries,
    categorize: bool,
    warnings: &[String],
    processed: Processed,
) -> LogAnswer {
    let mut keys: Vec<u8> = Vec::new();
    let mut items: Vec<(std::ops::Range<usize>, usize)> = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let start = keys.len();
        write_key(&mut keys, e.labels(), categorize);
        items.push((start..keys.len(), i));
    }
    items.sort_by(|a, b| {
        keys[a.0.clone()]
            .cmp(&keys[b.0.clone()])
            .then(a.1.cmp(&b.1))
    });

    let mut out = LogAnswer::new(categorize);
    out.reserve(
        entries.iter().map(|e| e.line().len()).sum::<usize>(),
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
        let first = entries.get(items[i].1);
        for (n, v, _) in first
            .labels()
            .filter(|l| !categorize || l.2 == Category::Stream)
        {
            out.push_stream_label(n, v);
        }
        for (_, idx) in &items[i..j] {
            let e = entries.get(*idx);
            out.push_entry_of(e.origin(), e.ts(), e.line());
            if categorize {
                for (n, v, c) in e.labels() {
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

    type Listed<'a> = (i64, &'a str, &'a [(&'a str, &'a str, Category)]);

    fn entries(list: &[Listed<'_>]) -> Entries {
        let mut out = Entries::default();
        for &(ts, line, labels) in list {
            out.push(0, ts, line, labels.iter().copied());
        }
        out
    }

    fn answer(entries: &Entries, categorize: bool, warnings: &[String]) -> serde_json::Value {
        let a = super::answer(entries, categorize, warnings, Processed::default());
        let mut out = Vec::new();
        crate::answer::encode::write_streams(&a, std::time::Instant::now(), &mut out);
        serde_json::from_slice(&out).unwrap()
    }

    fn listed(e: EntryRef<'_>) -> (i64, String, Vec<(String, String, Category)>) {
        let labels = e
            .labels()
            .map(|(n, v, c)| (n.to_owned(), v.to_owned(), c))
            .collect();
        (e.ts(), e.line().to_owned(), labels)
    }

    /// Labels read back sorted by name (stably: equal names keep the order
    /// captured), lines and times as kept.
    #[test]
    fn entries_read_back_as_kept() {
        let mut es = Entries::with_capacity(2);
        es.push(
            7,
            3,
            "line é",
            [
                ("z", "1", Category::Parsed),
                ("a", "x", Category::Stream),
                ("m", "", Category::Metadata),
                ("a", "y", Category::Parsed),
            ],
        );
        es.push(8, 4, "", []);
        assert_eq!(es.len(), 2);
        let (ts, line, labels) = listed(es.get(0));
        assert_eq!((ts, line.as_str(), es.get(0).origin()), (3, "line é", 7));
        let names: Vec<(&str, &str)> = labels
            .iter()
            .map(|(n, v, _)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(names, [("a", "x"), ("a", "y"), ("m", ""), ("z", "1")]);
        assert_eq!(labels[3].2, Category::Parsed);
        assert_eq!(listed(es.get(1)), (4, String::new(), Vec::new()));
    }

    /// Truncating drops the text and labels of the entries cut, so entries
    /// kept afterwards read back whole.
    #[test]
    fn truncate_keeps_the_first_entries_whole() {
        let mut es = entries(&[
            (
                1,
                "a",
                &[("b", "2", Category::Stream), ("a", "1", Category::Parsed)],
            ),
            (2, "bb", &[("c", "3", Category::Stream)]),
            (3, "ccc", &[]),
        ]);
        let first = listed(es.get(0));
        es.truncate(1);
        assert_eq!(es.len(), 1);
        assert_eq!(es.text.len(), "a".len() + "b2a1".len());
        assert_eq!(es.labels.len(), 2);
        es.push(0, 9, "d", [("e", "5", Category::Metadata)]);
        assert_eq!(listed(es.get(0)), first);
        assert_eq!(
            listed(es.get(1)),
            (
                9,
                "d".to_owned(),
                vec![("e".into(), "5".into(), Category::Metadata)]
            )
        );
        es.truncate(5);
        assert_eq!(es.len(), 2);
        es.truncate(0);
        assert!(es.is_empty() && es.text.is_empty() && es.labels.is_empty());
    }

    #[test]
    fn merged_and_categorized() {
        let es = entries(&[
            (
                3,
                "c",
                &[
                    ("app", "a", Category::Stream),
                    ("level", "warn", Category::Parsed),
                ],
            ),
            (
                2,
                "b",
                &[
                    ("app", "a", Category::Stream),
                    ("level", "info", Category::Parsed),
                    ("t", "1", Category::Metadata),
                ],
            ),
            (
                1,
                "a",
                &[
                    ("app", "a", Category::Stream),
                    ("level", "warn", Category::Parsed),
                ],
            ),
        ]);
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
