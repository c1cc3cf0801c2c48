//! NDJSON from VictoriaLogs to Loki's `streams` answer.
//!
//! What Loki does, and so what this reproduces (grafana/loki
//! `pkg/logql/log/labels.go`, `parser.go`, `pkg/logql/engine.go`):
//!
//! * Each row's labels come in three categories: **stream** labels (the
//!   `_stream` set), **structured metadata** (every other VictoriaLogs field
//!   except `_msg`, `_time`, `_stream`, `_stream_id` and the top-level copies
//!   of the stream labels) and **parsed** labels (fields whose name starts
//!   with the plan's `parsed_prefix`, prefix stripped).
//! * Names are reported in Loki form (`k8s.pod.name` → `k8s_pod_name`).
//! * A parsed or metadata label whose name is already a stream label is
//!   renamed `<name>_extracted` (Loki's `BaseHas` check); a parsed label
//!   replaces a metadata label of the same name.
//! * Without `categorize-labels`, the three categories are merged into the
//!   stream's labels, so every distinct combination is its own stream and
//!   values are `[ts, line]`. With it, `stream` holds the stream labels only
//!   and every value is `[ts, line, {…}]`, the object holding only non-empty
//!   `structuredMetadata` / `parsed` maps.
//! * `limit` keeps the newest entries for `backward`, the oldest for
//!   `forward`, counted over all streams. Streams are sorted by their
//!   label-set string ([`crate::labels::write_label_string`]); entries inside a
//!   stream follow `direction`. Among entries with equal timestamps the
//!   limit keeps Loki's choice: by stream hash ([`crate::tie`]), then in
//!   VictoriaLogs' order.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::time::Instant;

use logsql_ast::Discovery;

use crate::answer::{LogAnswer, LogStats, encode::write_streams};
use crate::direction::Direction;
pub use crate::ndjson::DecodeError;
use crate::ndjson::{Decoder, Row, Rows, Source};
use crate::recycle::recycle;
use crate::tie::order_key;
use entry_names::EntryNames;
use labels::{StreamInfo, entry_labels, intern_key, merge_labels, parse_streams, write_label_key};
use name::Lbl;

/// How to build a streams answer.
#[derive(Debug, Clone)]
pub struct StreamsOptions {
    /// Entry order inside each stream.
    pub direction: Direction,
    /// Maximum entries over all streams.
    pub limit: usize,
    /// `X-Loki-Response-Encoding-Flags: categorize-labels` was sent.
    pub categorize: bool,
    /// Fields with this prefix are parser output (from the plan).
    pub parsed_prefix: Option<&'static str>,
}

/// Counters for the `stats` object and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamsSummary {
    /// Entries written.
    pub entries: usize,
    /// Streams written.
    pub streams: usize,
    /// Bytes of log lines written.
    pub bytes: usize,
    /// The limit cut between two rows of this timestamp, and no row of the
    /// input is farther: the input may lack other rows of it, and which of
    /// them Loki keeps depends on all of them ([`crate::tie`]). `None` when
    /// the cut was clean, no row was cut, or a farther row shows that a
    /// nearest-first input (VictoriaLogs' `limit`) holds every row of that
    /// timestamp, so the entries kept are already Loki's.
    pub tied_cut: Option<i64>,
}

/// Decodes VictoriaLogs NDJSON (modified in place by simd-json) and writes the whole
/// Loki `query_range` JSON body (envelope, `streams`, `stats`) to `out`.
///
/// `stats.summary.execTime` is the time spent in this call; use
/// [`encode_streams_since`] to report the whole query's time.
///
/// # Errors
/// [`DecodeError`] on malformed NDJSON.
pub fn encode_streams(
    ndjson: &mut (impl Source + ?Sized),
    opts: &StreamsOptions,
    out: &mut Vec<u8>,
) -> Result<StreamsSummary, DecodeError> {
    encode_streams_since(ndjson, opts, Instant::now(), out)
}

/// Like [`encode_streams`], adding the labels `discovery` synthesizes: a
/// stream without `service_name` gets the one Loki derives, and every entry
/// gets `detected_level` structured metadata (merged into the stream labels
/// without `categorize-labels`, as Loki merges all structured metadata).
///
/// # Errors
/// [`DecodeError`] on malformed NDJSON.
pub fn encode_streams_discovered(
    ndjson: &mut (impl Source + ?Sized),
    opts: &StreamsOptions,
    discovery: &Discovery,
    out: &mut Vec<u8>,
) -> Result<StreamsSummary, DecodeError> {
    with_encoder(ndjson.byte_len(), |enc| {
        enc.encode_discovered(ndjson, opts, discovery, Instant::now(), out)
    })
}

/// Decodes VictoriaLogs NDJSON (modified in place by simd-json) into the
/// typed answer, with the labels `discovery` synthesizes (see
/// [`encode_streams_discovered`]).
///
/// # Errors
/// [`DecodeError`] on malformed NDJSON.
pub fn decode_streams(
    ndjson: &mut (impl Source + ?Sized),
    opts: &StreamsOptions,
    discovery: &Discovery,
) -> Result<LogAnswer, DecodeError> {
    decode_streams_summary(ndjson, opts, discovery).map(|(answer, _)| answer)
}

/// [`decode_streams`], with what was kept and whether the limit cut
/// through one timestamp ([`StreamsSummary::tied_cut`]).
///
/// # Errors
/// [`DecodeError`] on malformed NDJSON.
pub fn decode_streams_summary(
    ndjson: &mut (impl Source + ?Sized),
    opts: &StreamsOptions,
    discovery: &Discovery,
) -> Result<(LogAnswer, StreamsSummary), DecodeError> {
    let mut answer = LogAnswer::new(opts.categorize);
    let summary = with_encoder(ndjson.byte_len(), |enc| {
        enc.decode_into(ndjson, opts, discovery, &mut answer)
    })?;
    Ok((answer, summary))
}

/// Like [`encode_streams`], with `stats.summary.execTime` measured from
/// `query_start` (when the request arrived) to the moment stats are written.
///
/// Scratch buffers are kept per thread, so steady-state calls allocate only
/// for the stream table and label names that need sanitizing.
///
/// # Errors
/// [`DecodeError`] on malformed NDJSON.
pub fn encode_streams_since(
    ndjson: &mut (impl Source + ?Sized),
    opts: &StreamsOptions,
    query_start: Instant,
    out: &mut Vec<u8>,
) -> Result<StreamsSummary, DecodeError> {
    with_encoder(ndjson.byte_len(), |enc| {
        enc.encode(ndjson, opts, query_start, out)
    })
}

/// Runs `f` with this thread's reusable encoder (a fresh one when it is busy).
fn with_encoder<R>(input_len: usize, f: impl FnOnce(&mut StreamsEncoder) -> R) -> R {
    thread_local! {
        static ENCODER: RefCell<StreamsEncoder> = RefCell::new(StreamsEncoder::new());
    }
    ENCODER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut enc) => {
            let r = f(&mut enc);
            if input_len > MAX_RETAINED_INPUT {
                // Do not keep the buffers of one huge answer alive forever.
                *enc = StreamsEncoder::new();
            }
            r
        }
        Err(_) => f(&mut StreamsEncoder::new()),
    })
}

mod discovered;
mod entry_names;
mod labels;
mod name;

/// Input size above which the per-thread scratch is released after use.
const MAX_RETAINED_INPUT: usize = 16 << 20;

/// Reusable state for encoding streams answers: the NDJSON decoder and the
/// vectors used while grouping. Reuse one per thread (as
/// [`encode_streams`] does) to avoid per-call allocations.
#[derive(Debug, Default)]
pub struct StreamsEncoder {
    decoder: Decoder,
    rows: Vec<Row<'static>>,
    fields: Vec<(&'static str, &'static str)>,
    order: Vec<u32>,
    items: Vec<Item>,
    keys: Vec<u8>,
    row_stream: Vec<u32>,
    /// Distinct output streams: their label-set strings, ranges of `keys`.
    groups: Vec<Range<usize>>,
    /// Key hash → group, to find a row's stream without comparing strings.
    group_index: HashMap<u64, u32>,
    /// Position of each group in label-string order.
    rank: Vec<u32>,
    /// The answer being written by [`StreamsEncoder::encode`].
    answer: LogAnswer,
}

/// One kept entry while grouping: its stream (group) and its position.
#[derive(Debug, Clone, Copy)]
struct Item {
    /// The entry's stream: an index into `groups`.
    group: u32,
    /// Position in direction order (after the limit).
    seq: u32,
    /// Index into the decoded rows.
    row: u32,
}

impl StreamsEncoder {
    /// Creates an encoder with empty scratch space.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `ndjson` and writes the Loki answer to `out`; see
    /// [`encode_streams_since`].
    ///
    /// # Errors
    /// [`DecodeError`] on malformed NDJSON; `out` may then hold a partial body.
    pub fn encode(
        &mut self,
        ndjson: &mut (impl Source + ?Sized),
        opts: &StreamsOptions,
        query_start: Instant,
        out: &mut Vec<u8>,
    ) -> Result<StreamsSummary, DecodeError> {
        self.encode_discovered(ndjson, opts, &Discovery::default(), query_start, out)
    }

    /// [`StreamsEncoder::encode`] with the labels `discovery` synthesizes
    /// (see [`encode_streams_discovered`]).
    ///
    /// # Errors
    /// [`DecodeError`] on malformed NDJSON; `out` is then left as it was.
    pub fn encode_discovered(
        &mut self,
        ndjson: &mut (impl Source + ?Sized),
        opts: &StreamsOptions,
        discovery: &Discovery,
        query_start: Instant,
        out: &mut Vec<u8>,
    ) -> Result<StreamsSummary, DecodeError> {
        let mut answer = std::mem::take(&mut self.answer);
        let result = self.decode_into(ndjson, opts, discovery, &mut answer);
        if result.is_ok() {
            write_streams(&answer, query_start, out);
        }
        self.answer = answer;
        result
    }

    /// Decodes `ndjson` into `answer` (cleared first), with the labels
    /// `discovery` synthesizes.
    ///
    /// # Errors
    /// [`DecodeError`] on malformed NDJSON.
    pub fn decode_into(
        &mut self,
        ndjson: &mut (impl Source + ?Sized),
        opts: &StreamsOptions,
        discovery: &Discovery,
        answer: &mut LogAnswer,
    ) -> Result<StreamsSummary, DecodeError> {
        let mut rows = Rows {
            rows: recycle(std::mem::take(&mut self.rows)),
            fields: recycle(std::mem::take(&mut self.fields)),
        };
        let result = self.decode_and_build(ndjson, &mut rows, opts, discovery, answer);
        self.rows = recycle(rows.rows);
        self.fields = recycle(rows.fields);
        result
    }

    fn decode_and_build<'a>(
        &mut self,
        ndjson: &'a mut (impl Source + ?Sized),
        rows: &mut Rows<'a>,
        opts: &StreamsOptions,
        discovery: &Discovery,
        answer: &mut LogAnswer,
    ) -> Result<StreamsSummary, DecodeError> {
        self.decoder.decode(ndjson, rows)?;
        let parsed = parse_streams(&rows.rows, &mut self.row_stream)?;
        self.keys.clear();
        self.groups.clear();
        self.group_index.clear();
        let mut infos: Vec<StreamInfo<'_>> = Vec::with_capacity(parsed.len());
        for p in &parsed {
            let mut info = StreamInfo::new(p, discovery, &mut self.keys);
            let g = intern_key(
                &mut self.keys,
                info.key.start,
                &mut self.group_index,
                &mut self.groups,
            );
            info.group = g;
            info.key = self.groups[g as usize].clone();
            infos.push(info);
        }
        let prefix = opts.parsed_prefix.filter(|p| !p.is_empty());
        let levels = discovery.log_levels;

        // Direction order, then the limit; entries of one timestamp in
        // Loki's order (stream hash, then as returned: see `crate::tie`).
        self.order.clear();
        self.order.extend(0..rows.rows.len() as u32);
        let all = &rows.rows;
        let info = |i: u32| &infos[self.row_stream[i as usize] as usize];
        let dir = opts.direction;
        self.order.sort_unstable_by_key(|&i| {
            let s = info(i);
            (order_key(dir, all[i as usize].time_ns, s.hash, s.tenant), i)
        });
        let tied_cut = match (
            opts.limit.checked_sub(1),
            self.order.get(opts.limit),
            self.order.last(),
        ) {
            (Some(last), Some(&next), Some(&farthest)) => {
                let kept = all[self.order[last] as usize].time_ns;
                (kept == all[next as usize].time_ns && kept == all[farthest as usize].time_ns)
                    .then_some(kept)
            }
            _ => None,
        };
        self.order.truncate(opts.limit);

        // Group key per kept entry.
        let mut labels: Vec<Lbl<'_>> = Vec::new();
        let mut merged: Vec<Lbl<'_>> = Vec::new();
        self.items.clear();
        for (seq, &r) in self.order.iter().enumerate() {
            let row = &all[r as usize];
            let info = &infos[self.row_stream[r as usize] as usize];
            let group = if opts.categorize {
                info.group
            } else {
                entry_labels(info, row, rows.fields_of(row), prefix, levels, &mut labels);
                merge_labels(&info.labels, &labels, &mut merged);
                let start = self.keys.len();
                write_label_key(&mut self.keys, &merged);
                intern_key(
                    &mut self.keys,
                    start,
                    &mut self.group_index,
                    &mut self.groups,
                )
            };
            self.items.push(Item {
                group,
                seq: seq as u32,
                row: r,
            });
        }
        // Streams in label-string order (only distinct strings are compared),
        // entries in direction order inside each.
        let keys = &self.keys;
        let groups = &self.groups;
        self.rank.clear();
        self.rank.extend(0..groups.len() as u32);
        self.rank.sort_unstable_by(|&a, &b| {
            keys[groups[a as usize].clone()].cmp(&keys[groups[b as usize].clone()])
        });
        let mut rank_of = std::mem::take(&mut self.order);
        rank_of.clear();
        rank_of.resize(groups.len(), 0);
        for (pos, &g) in self.rank.iter().enumerate() {
            rank_of[g as usize] = pos as u32;
        }
        self.items
            .sort_unstable_by_key(|it| (rank_of[it.group as usize], it.seq));
        self.order = rank_of;

        // Build.
        let mut summary = StreamsSummary {
            tied_cut,
            ..StreamsSummary::default()
        };
        let mut entry_names = EntryNames::new();
        answer.clear(opts.categorize);
        answer.reserve(ndjson_estimate(rows), self.items.len());
        let mut i = 0;
        while i < self.items.len() {
            let group = self.items[i].group;
            let mut j = i + 1;
            while j < self.items.len() && self.items[j].group == group {
                j += 1;
            }
            summary.streams += 1;

            let first = &all[self.items[i].row as usize];
            let info = &infos[self.row_stream[self.items[i].row as usize] as usize];
            answer.begin_stream();
            let stream_labels: &[Lbl<'_>] = if opts.categorize {
                &info.labels
            } else {
                entry_labels(
                    info,
                    first,
                    rows.fields_of(first),
                    prefix,
                    levels,
                    &mut labels,
                );
                merge_labels(&info.labels, &labels, &mut merged);
                &merged
            };
            for l in stream_labels {
                answer.push_stream_label_with(|t| l.name.push_to(t), l.value);
            }
            for item in &self.items[i..j] {
                let row = &all[item.row as usize];
                let origin = infos[self.row_stream[item.row as usize] as usize].hash;
                answer.push_entry_of(origin, row.time_ns, row.msg);
                if opts.categorize {
                    let info = &infos[self.row_stream[item.row as usize] as usize];
                    entry_labels(info, row, rows.fields_of(row), prefix, levels, &mut labels);
                    entry_names.push_labels(answer, &labels);
                }
                summary.entries += 1;
                summary.bytes += row.msg.len();
            }
            i = j;
        }

        let msg_bytes: usize = all.iter().map(|r| r.msg.len()).sum();
        let field_bytes: usize = rows.fields.iter().map(|(k, v)| k.len() + v.len()).sum();
        answer.stats = LogStats {
            bytes: (msg_bytes + field_bytes) as u64,
            lines: all.len() as u64,
            post_filter_lines: all.len() as u64,
            metadata_bytes: field_bytes as u64,
            splits: 0,
        };
        Ok(summary)
    }
}

/// A rough output size, to reserve once.
fn ndjson_estimate(rows: &Rows<'_>) -> usize {
    rows.rows.iter().map(|r| r.msg.len() + 32).sum()
}

#[cfg(test)]
mod tests;
