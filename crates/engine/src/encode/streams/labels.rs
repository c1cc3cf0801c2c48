//! Label sets of the streams answer (names in Loki form are [`super::name`]'s):
//! the `_stream` sets of a page parsed once, each row's labels in Loki's
//! categories, and the label-set key streams are sorted by (the answer
//! itself is built as a [`crate::answer::LogAnswer`]).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Range;

use logsql_ast::Discovery;
use logsql_ast::otel::{SEVERITY_NUMBER, SEVERITY_TEXT, VL_SEVERITY, loki_severity};

use super::name::{Kind, Lbl, Name};
use super::{DecodeError, Row, discovered};
use crate::labels::{LabelPair, parse_stream};

/// The `_stream` label pairs as parsed (raw names, unescaped values).
pub(super) type StreamPairs<'a> = Vec<LabelPair<'a>>;

/// Parses every distinct `_stream` of an answer once and records each row's
/// stream number in `row_stream`.
pub(super) fn parse_streams<'a>(
    rows: &[Row<'a>],
    row_stream: &mut Vec<u32>,
) -> Result<Vec<StreamPairs<'a>>, DecodeError> {
    row_stream.clear();
    let mut parsed: Vec<StreamPairs<'a>> = Vec::new();
    let mut index: HashMap<&'a str, u32> = HashMap::new();
    let mut last: Option<(&'a str, u32)> = None;
    for row in rows {
        // Consecutive rows usually share a stream: skip the hash lookup.
        if let Some((s, id)) = last
            && s == row.stream
        {
            row_stream.push(id);
            continue;
        }
        let id = match index.get(row.stream) {
            Some(&id) => id,
            None => {
                let pairs = parse_stream(row.stream).map_err(|e| DecodeError(e.to_string()))?;
                let id = parsed.len() as u32;
                parsed.push(pairs);
                index.insert(row.stream, id);
                id
            }
        };
        last = Some((row.stream, id));
        row_stream.push(id);
    }
    Ok(parsed)
}

/// Loki's stream hash of `labels` (sorted, Loki names); once per stream.
fn hash_of(labels: &[Lbl<'_>]) -> u64 {
    let mut h = crate::tie::StreamHasher::new();
    let mut name = Vec::new();
    for l in labels {
        name.clear();
        l.name.write(&mut name);
        h.label(&name, l.value.as_bytes());
    }
    h.finish()
}

/// A distinct stream: its labels in Loki form and its key.
#[derive(Debug)]
pub(super) struct StreamInfo<'s> {
    /// The parsed pairs, to recognise top-level copies of stream fields.
    pub(super) pairs: &'s [LabelPair<'s>],
    /// Labels in Loki form, sorted by name.
    pub(super) labels: Vec<Lbl<'s>>,
    /// The label-set string, a range of the shared key buffer.
    pub(super) key: Range<usize>,
    /// The output stream of this stream's rows when categorizing.
    pub(super) group: u32,
    /// The value of the stream's level label, for `detected_level`.
    pub(super) level: Option<&'s str>,
    /// The stream stores a `detected_level` label: none is synthesized.
    pub(super) stores_level: bool,
    /// The stream was ingested as OTLP: severity metadata is translated
    /// ([`crate::discovery::otel`]).
    pub(super) otlp: bool,
    /// Loki's hash of the stream's labels ([`crate::tie`]).
    pub(super) hash: u64,
    /// Its `__tenant_id__` (multi-tenant queries; empty otherwise), which
    /// orders entries of equal time and hash.
    pub(super) tenant: &'s str,
}

impl<'s> StreamInfo<'s> {
    /// Builds the Loki labels of `pairs` and appends its key to `keys`.
    pub(super) fn new(
        pairs: &'s [LabelPair<'s>],
        discovery: &Discovery,
        keys: &mut Vec<u8>,
    ) -> Self {
        let mut labels: Vec<Lbl<'s>> = pairs
            .iter()
            .filter(|(n, _)| !n.is_empty())
            .map(|(n, v)| Lbl {
                name: Name::new(n),
                value: v,
                kind: Kind::Stream,
            })
            .collect();
        labels.sort_by(|a, b| a.name.cmp(&b.name));
        // Two raw names may sanitize to one Loki name: keep the last.
        dedup_last(&mut labels);
        discovered::add_service_name(&mut labels, discovery);
        let (level, stores_level) = discovered::stream_level(&labels);
        let start = keys.len();
        write_label_key(keys, &labels);
        let hash = hash_of(&labels);
        let tenant = labels
            .iter()
            .find(|l| l.name.is(crate::tie::TENANT_LABEL))
            .map_or("", |l| l.value);
        Self {
            pairs,
            labels,
            key: start..keys.len(),
            group: 0,
            level,
            stores_level,
            otlp: crate::discovery::otel::is_otlp_stream(pairs.iter().map(|(n, _)| n.as_ref())),
            hash,
            tenant,
        }
    }

    pub(super) fn has_raw(&self, name: &str) -> bool {
        self.pairs.iter().any(|(n, _)| n == name)
    }

    pub(super) fn has_name(&self, name: &Name<'_>) -> bool {
        self.labels.iter().any(|l| l.name.same(name))
    }
}

/// Finds the group whose key equals `keys[start..]` (the key just written at
/// the end of the buffer), dropping those bytes again when it exists, or
/// adds a new group. Hash collisions between different keys move on to the
/// next hash value, so they cost a comparison, never a wrong stream.
pub(super) fn intern_key(
    keys: &mut Vec<u8>,
    start: usize,
    index: &mut HashMap<u64, u32>,
    groups: &mut Vec<Range<usize>>,
) -> u32 {
    use std::hash::Hasher as _;
    let mut hasher = std::hash::DefaultHasher::new();
    hasher.write(&keys[start..]);
    let mut h = hasher.finish();
    loop {
        match index.get(&h) {
            Some(&g) if keys[groups[g as usize].clone()] == keys[start..] => {
                keys.truncate(start);
                return g;
            }
            Some(_) => h = h.wrapping_add(1),
            None => {
                let g = groups.len() as u32;
                groups.push(start..keys.len());
                index.insert(h, g);
                return g;
            }
        }
    }
}

/// Keeps the last label of every run of equal names (input sorted by name
/// with a stable sort, so "last" is the last in input order).
pub(super) fn dedup_last(v: &mut Vec<Lbl<'_>>) {
    let mut w = 0;
    for r in 0..v.len() {
        if w > 0 && v[w - 1].name.same(&v[r].name) {
            v[w - 1] = v[r];
        } else {
            v[w] = v[r];
            w += 1;
        }
    }
    v.truncate(w);
}

/// Collects a row's structured metadata and parsed labels, sorted by Loki
/// name, with Loki's collision rules applied.
pub(super) fn row_labels<'s>(
    stream: &StreamInfo<'s>,
    fields: &[(&'s str, &'s str)],
    prefix: Option<&str>,
    out: &mut Vec<Lbl<'s>>,
) {
    out.clear();
    let mut severity: [Option<&'s str>; 3] = [None; 3];
    for &(k, v) in fields {
        let (raw, kind) = match prefix.and_then(|p| k.strip_prefix(p)) {
            Some(stripped) => (stripped, Kind::Parsed),
            None => {
                if stream.has_raw(k) {
                    continue; // VictoriaLogs' top-level copy of a stream label.
                }
                if stream.otlp
                    && let Some(i) = [SEVERITY_TEXT, SEVERITY_NUMBER, VL_SEVERITY]
                        .iter()
                        .position(|n| *n == k)
                {
                    severity[i] = Some(v);
                    continue;
                }
                (k, Kind::Metadata)
            }
        };
        if raw.is_empty() {
            continue;
        }
        let mut name = Name::new(raw);
        if stream.has_name(&name) {
            name.extracted = true;
        }
        out.push(Lbl {
            name,
            value: v,
            kind,
        });
    }
    if stream.otlp {
        let [text, number, vl] = severity;
        let loki = loki_severity(text, number, vl);
        // A `severity` beside v1.51's pair is the record's own attribute.
        let own = vl.filter(|_| text.is_some() || number.is_some());
        for (name, value) in [
            (SEVERITY_TEXT, loki.text),
            (SEVERITY_NUMBER, loki.number),
            (VL_SEVERITY, own),
        ] {
            if let Some(value) = value {
                let mut name = Name::new(name);
                if stream.has_name(&name) {
                    name.extracted = true;
                }
                out.push(Lbl {
                    name,
                    value,
                    kind: Kind::Metadata,
                });
            }
        }
    }
    // Stable: among equal names the input order is kept.
    out.sort_by(|a, b| a.name.cmp(&b.name));
    // Parsed beats metadata; within a kind the last one wins.
    let mut w = 0;
    for r in 0..out.len() {
        if w > 0 && out[w - 1].name.same(&out[r].name) {
            if !(out[w - 1].kind == Kind::Parsed && out[r].kind == Kind::Metadata) {
                out[w - 1] = out[r];
            }
        } else {
            out[w] = out[r];
            w += 1;
        }
    }
    out.truncate(w);
}

/// [`row_labels`], plus the `detected_level` structured metadata Loki's
/// ingest would have stored when `levels` is on.
pub(super) fn entry_labels<'s>(
    stream: &StreamInfo<'s>,
    row: &Row<'s>,
    fields: &[(&'s str, &'s str)],
    prefix: Option<&str>,
    levels: bool,
    out: &mut Vec<Lbl<'s>>,
) {
    row_labels(stream, fields, prefix, out);
    if !levels || stream.stores_level {
        return;
    }
    discovered::add_detected_level(stream.level, row.msg, out);
}

/// Merges sorted stream labels and sorted row labels into one sorted set
/// (row labels win on equal names).
pub(super) fn merge_labels<'s>(stream: &[Lbl<'s>], row: &[Lbl<'s>], out: &mut Vec<Lbl<'s>>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < stream.len() && j < row.len() {
        match stream[i].name.cmp(&row[j].name) {
            Ordering::Less => {
                out.push(stream[i]);
                i += 1;
            }
            Ordering::Greater => {
                out.push(row[j]);
                j += 1;
            }
            Ordering::Equal => {
                out.push(row[j]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&stream[i..]);
    out.extend_from_slice(&row[j..]);
}

/// Writes the Loki label-set string (`{a="1", b="2"}`) used to sort streams.
pub(super) fn write_label_key(out: &mut Vec<u8>, labels: &[Lbl<'_>]) {
    out.push(b'{');
    for (i, l) in labels.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        l.name.write(out);
        out.push(b'=');
        go::strconv::append_quote(out, l.value);
    }
    out.push(b'}');
}
