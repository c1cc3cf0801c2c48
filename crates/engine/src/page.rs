//! Evaluating one page of VictoriaLogs rows through a log query's
//! [`Pipeline`]: decode, order by direction, give each entry the labels
//! Loki's ingest would have added, run the stages, keep what passes.
//!
//! The service fetches the pages and decides where this runs (its blocking
//! pool); the walk from page to page cuts pages at timestamps, which is why
//! a full page reports the boundary timestamp it left out.

use std::collections::HashMap;

use crate::Error;
use crate::direction::Direction;
use crate::discovery::stream::{with_detected_level, with_service_name};
use crate::encode::pipeline::{Entries, Processed};
use crate::labels::{parse_stream, sanitize_label_name};
use crate::ndjson::{Decoder, Rows, Source};
use crate::pipeline::Pipeline;
use crate::recycle::recycle;
use crate::tie::{TENANT_LABEL, order_key, stream_hash};
use crate::work::Stop;

/// What to fetch and how to answer.
#[derive(Debug, Clone, Copy)]
pub struct RunParams {
    /// First nanosecond, inclusive.
    pub start: i64,
    /// Last nanosecond, inclusive (Loki's `end` − 1).
    pub end: i64,
    /// Entries wanted.
    pub limit: usize,
    /// Order of the walk and of the answer.
    pub direction: Direction,
    /// `categorize-labels` was requested.
    pub categorize: bool,
    /// The bound on rows read by the service's unbounded walk (its default
    /// row budget in production); a walk with a shared budget reads that instead.
    pub max_rows: usize,
}

/// Decodes one page and evaluates it in direction order. When the page is
/// full (`n >= want`), the rows at its last timestamp are skipped and that
/// timestamp returned as the boundary. Returns the row count and boundary.
/// Polls `stop` every [`crate::work::stop::CHECK_EVERY`] rows.
#[allow(clippy::too_many_arguments)]
pub fn eval_page(
    decoder: &mut Decoder,
    body: &mut (impl Source + ?Sized),
    pipeline: &mut Pipeline,
    p: &RunParams,
    want: usize,
    entries: &mut Entries,
    processed: &mut Processed,
    stop: &Stop,
) -> Result<(usize, Option<i64>), Error> {
    let mut rows = Rows::new();
    decoder
        .decode(body, &mut rows)
        .map_err(|e| Error::Backend(e.to_string()))?;
    let n = rows.rows.len();
    processed.rows += n as u64;
    // One lookup per row: foldhash instead of SipHash (keys are VictoriaLogs'
    // own `_stream` strings, not attacker-chosen map keys we must harden).
    // Each stream's Loki labels, whether it was ingested as OTLP, and
    // Loki's hash of its labels.
    let mut index: HashMap<&str, u32, foldhash::fast::RandomState> = HashMap::default();
    let mut streams: Vec<StreamOf> = Vec::new();
    // The stream of each row, an index into `streams`.
    let mut of_row: Vec<u32> = Vec::with_capacity(n);
    for row in &rows.rows {
        let id = match index.get(row.stream) {
            Some(&id) => id,
            None => {
                let id = streams.len() as u32;
                streams.push(stream_of(row.stream, pipeline)?);
                index.insert(row.stream, id);
                id
            }
        };
        of_row.push(id);
    }
    // Direction order; entries of one timestamp in Loki's order (stream
    // hash, then as returned), so the limit keeps what Loki keeps.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| {
        let s = &streams[of_row[i] as usize];
        order_key(p.direction, rows.rows[i].time_ns, s.hash, &s.tenant)
    });
    // Each row's metadata, in one allocation reused across rows.
    let mut meta_buf: Vec<(std::borrow::Cow<'static, str>, &'static str)> = Vec::new();
    let boundary = (n >= want)
        .then(|| order.last().map(|&i| rows.rows[i].time_ns))
        .flatten();
    for (seen, &i) in order.iter().enumerate() {
        stop.every(seen)?;
        let row = &rows.rows[i];
        if Some(row.time_ns) == boundary {
            continue;
        }
        let fields = rows.fields_of(row);
        let StreamOf {
            labels: stream,
            otlp,
            hash,
            ..
        } = &streams[of_row[i] as usize];
        let (otlp, hash) = (*otlp, *hash);
        processed.bytes += row.msg.len() as u64;
        let raw_stream = row.stream;
        let meta = fields
            .iter()
            .filter(|(k, _)| !is_stream_copy(raw_stream, k));
        let mut meta_names: Vec<(std::borrow::Cow<'_, str>, &str)> =
            recycle(std::mem::take(&mut meta_buf));
        let meta = meta.map(|&(k, v)| {
            processed.bytes += (k.len() + v.len()) as u64;
            processed.metadata_bytes += (k.len() + v.len()) as u64;
            (k, v)
        });
        crate::discovery::otel::push_metadata(otlp, meta, &mut meta_names);
        if pipeline.discovery().log_levels {
            with_detected_level(stream, &mut meta_names, row.msg);
        }
        let kept = pipeline.process(
            row.time_ns,
            row.msg,
            stream.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            meta_names.iter().map(|(k, v)| (k.as_ref(), *v)),
        );
        meta_buf = recycle(meta_names);
        if kept {
            entries.capture(hash, row.time_ns, pipeline.line(), pipeline.labels());
            if entries.len() >= p.limit {
                break;
            }
        }
    }
    Ok((n, boundary))
}

/// A stream's Loki labels (sorted, with the `service_name` discovery
/// adds), whether it was ingested as OTLP, and Loki's hash of its labels.
struct StreamOf {
    labels: Vec<(String, String)>,
    otlp: bool,
    hash: u64,
    /// Its `__tenant_id__` (empty outside multi-tenant queries): the order
    /// of entries with equal time and hash ([`crate::tie`]).
    tenant: String,
}

fn stream_of(raw: &str, pipeline: &Pipeline) -> Result<StreamOf, Error> {
    let pairs = parse_stream(raw).map_err(|e| Error::Backend(e.to_string()))?;
    let mut labels: Vec<(String, String)> = pairs
        .iter()
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, v)| (sanitize_label_name(k).into_owned(), v.to_string()))
        .collect();
    labels.sort();
    with_service_name(&mut labels, pipeline.discovery());
    let otlp = crate::discovery::otel::is_otlp_stream(pairs.iter().map(|(k, _)| k.as_ref()));
    let hash = stream_hash(labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let tenant = labels
        .iter()
        .find(|(k, _)| k == TENANT_LABEL)
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    Ok(StreamOf {
        labels,
        otlp,
        hash,
        tenant,
    })
}

/// Whether field `k` is VictoriaLogs' top-level copy of a stream label.
///
/// Called for every field of every row, so it jumps between occurrences of
/// the name's first byte instead of building a substring searcher per call
/// (that setup was 7% of lokivl's CPU on a 24 h `| json` query). Searches
/// bytes, not `str`: a candidate can start inside a multi-byte character of
/// a non-ASCII name.
pub fn is_stream_copy(stream: &str, k: &str) -> bool {
    // `_stream` is `{a="x",b="y"}`; a label name is followed by `=`.
    let (b, k) = (stream.as_bytes(), k.as_bytes());
    let at = |s: usize| {
        let before = s == 0 || matches!(b[s - 1], b'{' | b',');
        before && b[s..].starts_with(k) && b.get(s + k.len()) == Some(&b'=')
    };
    match k.first() {
        Some(&first) => memchr::memchr_iter(first, b).any(at),
        None => (0..b.len()).any(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_copies() {
        assert!(is_stream_copy(r#"{app="a",env="b"}"#, "env"));
        assert!(!is_stream_copy(r#"{app="a",env="b"}"#, "nv"));
        assert!(!is_stream_copy(r#"{app="env=x"}"#, "env"));
    }

    #[test]
    fn stream_copies_with_non_ascii_names_do_not_panic() {
        // A match one byte into `é` used to slice inside the character.
        assert!(!is_stream_copy(r#"{app="é"}"#, "é"));
        assert!(!is_stream_copy(r#"{app="日本"}"#, "日"));
        assert!(is_stream_copy(r#"{app="é",é="x"}"#, "é"));
        assert!(is_stream_copy(r#"{日本="x"}"#, "日本"));
        // An empty name (possible in a VictoriaLogs row) ends the search.
        assert!(!is_stream_copy(r#"{app="x"}"#, ""));
    }
}
