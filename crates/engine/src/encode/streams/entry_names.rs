//! The labels of a categorized answer's entries, written into the answer's
//! text without repeating what the entry before already wrote: consecutive
//! entries of a stream nearly always carry the same names (`trace_id`,
//! `k8s_pod_name`, …), each name is written once per run of entries that
//! carry it; an entry whose labels are all the previous entry's (names and
//! values, as `detected_level` alone often is) shares that entry's labels.

use std::cmp::Ordering;

use super::name::{Kind, Lbl, Name};
use crate::answer::log::{LabelsRef, NameRef};
use crate::answer::{Category, LogAnswer};

/// A label of the last entry with labels, and where its name is in the text.
#[derive(Debug, Clone, Copy)]
struct Written<'s> {
    name: Name<'s>,
    at: NameRef,
    value: &'s str,
    kind: Kind,
}

/// The labels of the last entry that had any, in its order.
#[derive(Debug)]
pub(super) struct EntryNames<'s> {
    prev: Vec<Written<'s>>,
    /// Where `prev` is in the answer.
    prev_labels: LabelsRef,
    cur: Vec<Written<'s>>,
}

impl<'s> EntryNames<'s> {
    pub(super) fn new() -> Self {
        Self {
            prev: Vec::new(),
            prev_labels: LabelsRef::default(),
            cur: Vec::new(),
        }
    }

    /// Adds the metadata and parsed labels of `labels` (sorted by name) to
    /// the entry pushed last, sharing each name the last entry with labels
    /// carried, or all of that entry's labels when they are the same.
    pub(super) fn push_labels(&mut self, answer: &mut LogAnswer, labels: &[Lbl<'s>]) {
        if self.repeats(labels) {
            answer.share_entry_labels(&self.prev_labels);
            return;
        }
        self.cur.clear();
        // Both lists are sorted by name: walk the previous one alongside.
        let mut j = 0;
        for l in labels {
            let category = match l.kind {
                Kind::Metadata => Category::Metadata,
                Kind::Parsed => Category::Parsed,
                Kind::Stream => continue,
            };
            let mut shared = None;
            while let Some(prev) = self.prev.get(j) {
                let order = if same_name(&prev.name, &l.name) {
                    Ordering::Equal
                } else {
                    prev.name.cmp(&l.name)
                };
                match order {
                    Ordering::Less => j += 1,
                    Ordering::Equal => {
                        shared = Some(prev.at);
                        j += 1;
                        break;
                    }
                    Ordering::Greater => break,
                }
            }
            let at = shared.unwrap_or_else(|| answer.push_name(|t| l.name.push_to(t)));
            answer.push_entry_label_named(category, at, l.value);
            self.cur.push(Written {
                name: l.name,
                at,
                value: l.value,
                kind: l.kind,
            });
        }
        // An entry without labels leaves the labels before it to share.
        if !self.cur.is_empty() {
            std::mem::swap(&mut self.prev, &mut self.cur);
            self.prev_labels = answer.entry_labels_ref();
        }
    }

    /// Whether `labels` are those of the last entry with labels, in order
    /// (the first differing value usually ends the check).
    fn repeats(&self, labels: &[Lbl<'s>]) -> bool {
        let mut prev = self.prev.iter();
        for l in labels.iter().filter(|l| l.kind != Kind::Stream) {
            match prev.next() {
                Some(p)
                    if p.value == l.value && p.kind == l.kind && same_name(&p.name, &l.name) => {}
                _ => return false,
            }
        }
        prev.next().is_none() && !self.prev.is_empty()
    }
}

/// Equal raw names print the same Loki name; checked first because it is
/// one comparison of short strings, where [`Name::cmp`] walks a dotted name
/// byte by byte.
fn same_name(a: &Name<'_>, b: &Name<'_>) -> bool {
    a.extracted == b.extracted && a.raw == b.raw
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::encode::write_streams;

    fn lbl<'s>(raw: &'s str, value: &'s str, kind: Kind) -> Lbl<'s> {
        Lbl {
            name: Name::new(raw),
            value,
            kind,
        }
    }

    /// The body without `stats` (its `execTime` differs between runs).
    fn body(a: &LogAnswer) -> String {
        let mut out = Vec::new();
        write_streams(a, std::time::Instant::now(), &mut out);
        let text = String::from_utf8(out).unwrap_or_default();
        text.split(",\"stats\":")
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn shared_names_and_labels_write_the_same_answer_as_labels_per_entry() {
        let extracted = Lbl {
            name: Name {
                extracted: true,
                ..Name::new("trace_id")
            },
            value: "t4",
            kind: Kind::Parsed,
        };
        let entries: [&[Lbl<'_>]; 8] = [
            &[
                lbl("k8s.pod.name", "p-1", Kind::Metadata),
                lbl("level", "info", Kind::Parsed),
                lbl("trace_id", "t1", Kind::Metadata),
            ],
            // Same names, other values.
            &[
                lbl("k8s.pod.name", "p-2", Kind::Metadata),
                lbl("level", "warn", Kind::Parsed),
                lbl("trace_id", "t2", Kind::Metadata),
            ],
            // The same labels: shared whole.
            &[
                lbl("k8s.pod.name", "p-2", Kind::Metadata),
                lbl("level", "warn", Kind::Parsed),
                lbl("trace_id", "t2", Kind::Metadata),
            ],
            // The same names and values in another category: not shared.
            &[
                lbl("k8s.pod.name", "p-2", Kind::Metadata),
                lbl("level", "warn", Kind::Metadata),
                lbl("trace_id", "t2", Kind::Metadata),
            ],
            // One name fewer, one new, a stream label skipped.
            &[
                lbl("app", "x", Kind::Stream),
                lbl("k8s.pod.name", "p-3", Kind::Metadata),
                lbl("span_id", "s", Kind::Metadata),
                lbl("trace_id", "t3", Kind::Metadata),
            ],
            &[],
            // The labels before the entry without any: shared whole.
            &[
                lbl("k8s.pod.name", "p-3", Kind::Metadata),
                lbl("span_id", "s", Kind::Metadata),
                lbl("trace_id", "t3", Kind::Metadata),
            ],
            // Another raw spelling of the same Loki name, and `_extracted`.
            &[lbl("k8s_pod_name", "p-4", Kind::Metadata), extracted],
        ];
        let mut shared = LogAnswer::new(true);
        let mut each = LogAnswer::new(true);
        let mut names = EntryNames::new();
        for a in [&mut shared, &mut each] {
            a.begin_stream();
            a.push_stream_label("app", "x");
        }
        for (i, labels) in entries.iter().enumerate() {
            shared.push_entry(i as i64, "line");
            names.push_labels(&mut shared, labels);
            each.push_entry(i as i64, "line");
            for l in labels.iter().filter(|l| l.kind != Kind::Stream) {
                let c = if l.kind == Kind::Parsed {
                    Category::Parsed
                } else {
                    Category::Metadata
                };
                each.push_entry_label_with(c, |t| l.name.push_to(t), l.value);
            }
        }
        assert_eq!(body(&shared), body(&each));
        for want in [
            r#"["1","line",{"structuredMetadata":{"k8s_pod_name":"p-2","trace_id":"t2"},"parsed":{"level":"warn"}}]"#,
            r#"["2","line",{"structuredMetadata":{"k8s_pod_name":"p-2","trace_id":"t2"},"parsed":{"level":"warn"}}]"#,
            r#"["3","line",{"structuredMetadata":{"k8s_pod_name":"p-2","level":"warn","trace_id":"t2"}}]"#,
            r#"["5","line",{}]"#,
            r#"["6","line",{"structuredMetadata":{"k8s_pod_name":"p-3","span_id":"s","trace_id":"t3"}}]"#,
            r#"["7","line",{"structuredMetadata":{"k8s_pod_name":"p-4"},"parsed":{"trace_id_extracted":"t4"}}]"#,
        ] {
            assert!(body(&shared).contains(want), "{want}");
        }
        // Each distinct Loki name is in the text once: the names after the
        // first entry are shared (across the entry without labels too),
        // only `span_id` and `trace_id_extracted` are new.
        let count = |a: &LogAnswer, s: &str| a.text.matches(s).count();
        assert_eq!(count(&shared, "k8s_pod_name"), 1);
        assert_eq!(count(&each, "k8s_pod_name"), 7);
        assert_eq!(count(&shared, "trace_id"), 2);
        // The stream label, then entries 2 and 6 wrote no labels of their own.
        assert_eq!((shared.pairs.len(), each.pairs.len()), (1 + 14, 1 + 20));
        // Read back through the typed API, the labels are the same.
        fn labels(a: &LogAnswer) -> Vec<Vec<(&str, &str, Category)>> {
            a.stream(0)
                .entries()
                .map(|e| e.labels().collect())
                .collect()
        }
        assert_eq!(labels(&shared), labels(&each));
        // A stored and reloaded answer writes the same.
        let reloaded = LogAnswer::from_bytes(&shared.to_bytes());
        assert_eq!(reloaded.as_ref().map(body), Ok(body(&each)));
    }
}
