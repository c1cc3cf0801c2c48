//! The one writer of Loki's log answers: the `query_range` streams body
//! from a [`LogAnswer`], and the live tail's frames (see [`super::tail`]).
//!
//! Key order and escaping are Loki's: the streams body escapes strings as
//! Go's `encoding/json` with HTML escaping ([`Escape::Html`]); streams come
//! in the answer's order; without `categorize-labels` values are
//! `[ts, line]`, with it `[ts, line, {"structuredMetadata":{…},"parsed":{…}}]`
//! with empty maps left out.

pub mod metric;

use std::time::Instant;

use super::log::{Category, LogAnswer};
use crate::encode::json::{Escape, write_i64_str, write_str_as};
use crate::encode::stats::{Summary, write_stats_field};

/// Writes the whole `query_range` body of `answer`; `stats.summary.execTime`
/// is the time since `started`.
pub fn write_streams(answer: &LogAnswer, started: Instant, out: &mut Vec<u8>) {
    let e = Escape::Html;
    out.reserve(answer.text.len() + answer.entries.len() * 32 + 2048);
    out.extend_from_slice(b"{\"status\":\"success\",");
    if !answer.warnings.is_empty() {
        out.extend_from_slice(b"\"warnings\":[");
        for (i, w) in answer.warnings.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str_as(out, w, e);
        }
        out.extend_from_slice(b"],");
    }
    out.extend_from_slice(b"\"data\":{\"resultType\":\"streams\",");
    if answer.categorized {
        out.extend_from_slice(b"\"encodingFlags\":[\"categorize-labels\"],");
    }
    out.extend_from_slice(b"\"result\":[");
    for (i, s) in answer.streams().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"stream\":");
        write_object(out, s.labels(), e);
        out.extend_from_slice(b",\"values\":[");
        for (n, entry) in s.entries().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.push(b'[');
            write_i64_str(out, entry.ts);
            out.push(b',');
            write_str_as(out, entry.line(), e);
            if answer.categorized {
                out.push(b',');
                write_categories(
                    out,
                    [
                        (STRUCTURED_METADATA, Category::Metadata),
                        (PARSED, Category::Parsed),
                    ],
                    |c| entry.labels_of(c),
                    e,
                );
            }
            out.push(b']');
        }
        out.extend_from_slice(b"]}");
    }
    out.extend_from_slice(b"],");
    let st = &answer.stats;
    let stats = Summary {
        total_bytes_processed: st.bytes,
        total_lines_processed: st.lines,
        exec_time_secs: started.elapsed().as_secs_f64(),
        total_entries_returned: answer.len() as u64,
        total_post_filter_lines: st.post_filter_lines,
        total_structured_metadata_bytes_processed: st.metadata_bytes,
        splits: st.splits,
        ..Summary::default()
    };
    write_stats_field(out, &stats);
    out.extend_from_slice(b"}}");
}

/// Writes `{"name":"value",…}`.
pub(crate) fn write_object<'a>(
    out: &mut Vec<u8>,
    labels: impl Iterator<Item = (&'a str, &'a str)>,
    e: Escape,
) {
    out.push(b'{');
    for (i, (n, v)) in labels.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str_as(out, n, e);
        out.push(b':');
        write_str_as(out, v, e);
    }
    out.push(b'}');
}

/// The key of an entry's structured metadata, quoted, with its colon.
pub(crate) const STRUCTURED_METADATA: &[u8] = b"\"structuredMetadata\":";
/// The key of an entry's parsed labels, quoted, with its colon.
pub(crate) const PARSED: &[u8] = b"\"parsed\":";

/// Writes an entry's label maps under `keys` (written as they are: quoted
/// JSON with the colon, [`STRUCTURED_METADATA`] and [`PARSED`]), in that
/// order, leaving out the empty ones.
pub(crate) fn write_categories<'a, I>(
    out: &mut Vec<u8>,
    keys: [(&[u8], Category); 2],
    labels: impl Fn(Category) -> I,
    e: Escape,
) where
    I: Iterator<Item = (&'a str, &'a str)> + Clone,
{
    out.push(b'{');
    let mut wrote = false;
    for (key, c) in keys {
        let mut it = labels(c).peekable();
        if it.peek().is_none() {
            continue;
        }
        if wrote {
            out.push(b',');
        }
        wrote = true;
        out.extend_from_slice(key);
        write_object(out, it, e);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categorized_with_warnings_and_splits() {
        let mut a = LogAnswer::new(true);
        a.warnings.push("w <1>".into());
        a.stats.splits = 2;
        a.begin_stream();
        a.push_stream_label("app", "a");
        a.push_entry(2, "b");
        a.push_entry_label(Category::Parsed, "level", "info");
        a.push_entry_label(Category::Metadata, "t", "1");
        a.push_entry(1, "a");
        let mut out = Vec::new();
        write_streams(&a, Instant::now(), &mut out);
        let text = String::from_utf8(out).unwrap_or_default();
        assert!(
            text.starts_with(concat!(
                r#"{"status":"success","warnings":["w \u003c1\u003e"],"data":{"resultType":"streams","encodingFlags":["categorize-labels"],"#,
                r#""result":[{"stream":{"app":"a"},"values":[["2","b",{"structuredMetadata":{"t":"1"},"parsed":{"level":"info"}}],["1","a",{}]]}],"stats":{"summary":"#
            )),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(v["data"]["stats"]["summary"]["totalEntriesReturned"], 2);
        assert_eq!(v["data"]["stats"]["summary"]["splits"], 2);
    }
}
