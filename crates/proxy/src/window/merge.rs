//! Merging window answers into the answer of the whole range.
//!
//! Windows arrive in direction order (newest first for backward) and each
//! holds up to `limit` entries in direction order, so the first `limit`
//! entries of the concatenation are the first `limit` of the whole range,
//! which is what an unsplit query keeps. Streams are then ordered by Loki's
//! label-set string, entries inside a stream in direction order, as the
//! encoders do for one query.

use std::collections::BTreeMap;
use std::time::Instant;

use bytes::Bytes;

use super::answer::{Processed, WindowAnswer};
use engine::direction::Direction;
use engine::encode::stats::{Summary, write_stats_field};

/// How many entries of `w` to keep from each stream so that exactly `want`
/// entries are kept, the first ones in direction order.
///
/// Within a stream entries are already in direction order, so the kept ones
/// are a prefix of it. Entries with equal timestamps in different streams
/// keep the label-string order of their streams.
pub fn take_first(w: &WindowAnswer, want: usize, direction: Direction) -> Vec<usize> {
    if w.len() <= want {
        return w.streams.iter().map(|s| s.entries.len()).collect();
    }
    let mut all: Vec<(i64, usize)> = Vec::with_capacity(w.len());
    for (si, s) in w.streams.iter().enumerate() {
        all.extend(s.entries.iter().map(|(ts, _)| (*ts, si)));
    }
    match direction {
        Direction::Forward => all.sort_by_key(|&(ts, _)| ts),
        Direction::Backward => all.sort_by_key(|&(ts, _)| std::cmp::Reverse(ts)),
    }
    let mut keep = vec![0; w.streams.len()];
    for &(_, si) in all.iter().take(want) {
        keep[si] += 1;
    }
    keep
}

/// Writes the merged Loki `streams` answer of `windows` (in direction order)
/// to `out`; returns the number of windows used.
pub fn merge(
    windows: &[WindowAnswer],
    limit: usize,
    direction: Direction,
    categorize: bool,
    started: Instant,
    out: &mut Vec<u8>,
) -> usize {
    // Label string → (labels object, entries in direction order).
    let mut streams: BTreeMap<&Bytes, (&Bytes, Vec<&Bytes>)> = BTreeMap::new();
    let mut warnings: Vec<&Bytes> = Vec::new();
    let mut processed = Processed::default();
    let mut taken = 0;
    let mut used = 0;
    for w in windows {
        if taken >= limit {
            break;
        }
        used += 1;
        for warning in &w.warnings {
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
        let p = &w.processed;
        processed.bytes += p.bytes;
        processed.lines += p.lines;
        processed.post_filter_lines += p.post_filter_lines;
        processed.metadata_bytes += p.metadata_bytes;
        let keep = take_first(w, limit - taken, direction);
        for (s, n) in w.streams.iter().zip(keep) {
            if n == 0 {
                continue;
            }
            let slot = streams
                .entry(&s.key)
                .or_insert_with(|| (&s.object, Vec::new()));
            slot.1.extend(s.entries[..n].iter().map(|e| &e.1));
            taken += n;
        }
    }

    let size: usize = streams
        .values()
        .map(|(o, e)| o.len() + 16 + e.iter().map(|x| x.len() + 1).sum::<usize>())
        .sum();
    out.reserve(size + 1024);
    out.extend_from_slice(b"{\"status\":\"success\",");
    if !warnings.is_empty() {
        out.extend_from_slice(b"\"warnings\":[");
        for (i, w) in warnings.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(w);
        }
        out.extend_from_slice(b"],");
    }
    out.extend_from_slice(b"\"data\":{\"resultType\":\"streams\",");
    if categorize {
        out.extend_from_slice(b"\"encodingFlags\":[\"categorize-labels\"],");
    }
    out.extend_from_slice(b"\"result\":[");
    for (i, (object, entries)) in streams.values().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"stream\":");
        out.extend_from_slice(object);
        out.extend_from_slice(b",\"values\":[");
        for (n, e) in entries.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(e);
        }
        out.extend_from_slice(b"]}");
    }
    out.extend_from_slice(b"],");
    let stats = Summary {
        total_bytes_processed: processed.bytes,
        total_lines_processed: processed.lines,
        exec_time_secs: started.elapsed().as_secs_f64(),
        total_entries_returned: taken as u64,
        total_post_filter_lines: processed.post_filter_lines,
        total_structured_metadata_bytes_processed: processed.metadata_bytes,
        splits: used as u64,
        ..Summary::default()
    };
    write_stats_field(out, &stats);
    out.extend_from_slice(b"}}");
    used
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::answer::Stream;

    fn stream(key: &'static str, entries: &[i64]) -> Stream {
        Stream {
            key: Bytes::from_static(key.as_bytes()),
            object: Bytes::from(format!("<{key}>")),
            entries: entries
                .iter()
                .map(|ts| (*ts, Bytes::from(format!("[\"{ts}\"]"))))
                .collect(),
        }
    }

    fn window(streams: Vec<Stream>) -> WindowAnswer {
        WindowAnswer {
            streams,
            processed: Processed {
                lines: 10,
                ..Processed::default()
            },
            ..WindowAnswer::default()
        }
    }

    fn result(out: &[u8]) -> String {
        let text = String::from_utf8_lossy(out);
        text.split(",\"stats\":")
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn backward_limit_ending_mid_window_keeps_the_newest_across_streams() {
        let newest = window(vec![stream("a", &[90, 70]), stream("b", &[80])]);
        let older = window(vec![stream("a", &[40, 20]), stream("b", &[50, 30, 10])]);
        let mut out = Vec::new();
        let used = merge(
            &[newest, older],
            5,
            Direction::Backward,
            false,
            Instant::now(),
            &mut out,
        );
        assert_eq!(used, 2);
        assert_eq!(
            result(&out),
            r#"{"status":"success","data":{"resultType":"streams","result":[{"stream":<a>,"values":[["90"],["70"],["40"]]},{"stream":<b>,"values":[["80"],["50"]]}]"#
        );
        let v: serde_json::Value =
            serde_json::from_str(&String::from_utf8_lossy(&out).replace(['<', '>'], "\""))
                .unwrap_or_default();
        assert_eq!(v["data"]["stats"]["summary"]["totalEntriesReturned"], 5);
        assert_eq!(v["data"]["stats"]["summary"]["totalLinesProcessed"], 20);
        assert_eq!(v["data"]["stats"]["summary"]["splits"], 2);
    }

    #[test]
    fn windows_past_the_limit_are_not_used() {
        let w1 = window(vec![stream("a", &[1, 2])]);
        let w2 = window(vec![stream("a", &[3])]);
        let mut out = Vec::new();
        let used = merge(
            &[w1, w2],
            2,
            Direction::Forward,
            true,
            Instant::now(),
            &mut out,
        );
        assert_eq!(used, 1);
        assert!(
            result(&out).ends_with(r#""encodingFlags":["categorize-labels"],"result":[{"stream":<a>,"values":[["1"],["2"]]}]"#),
            "{}",
            result(&out)
        );
    }

    #[test]
    fn take_first_counts_a_prefix_per_stream() {
        let w = window(vec![stream("a", &[1, 5]), stream("b", &[2, 3, 9])]);
        assert_eq!(take_first(&w, 3, Direction::Forward), vec![1, 2]);
        let w = window(vec![stream("a", &[5, 1]), stream("b", &[9, 3, 2])]);
        assert_eq!(take_first(&w, 2, Direction::Backward), vec![1, 1]);
        assert_eq!(take_first(&w, 10, Direction::Backward), vec![2, 3]);
        assert_eq!(take_first(&w, 0, Direction::Backward), vec![0, 0]);
    }

    #[test]
    fn warnings_are_kept_once() {
        let mut w = window(vec![]);
        w.warnings = vec![Bytes::from_static(b"\"w\"")];
        let mut out = Vec::new();
        merge(
            &[w.clone(), w],
            10,
            Direction::Forward,
            false,
            Instant::now(),
            &mut out,
        );
        assert!(result(&out).starts_with(r#"{"status":"success","warnings":["w"],"data""#));
    }
}
