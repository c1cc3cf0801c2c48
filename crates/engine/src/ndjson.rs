//! Decoding VictoriaLogs `/select/logsql/query` NDJSON into borrowed rows.
//!
//! VictoriaLogs answers one JSON object per line, every value a string:
//! `{"_time":"2026-11-22T04:21:07.29584787Z","_stream_id":"…","_stream":"{app=\"api\"}","_msg":"…","app":"api","trace_id":"abc"}`.
//!
//! This is the proxy's hottest path, so nothing here allocates per row:
//! simd-json parses each line in place (unescaping strings inside the input
//! buffer), so every key and value is a `&str` pointing into the body —
//! escaped strings included, which is why no `Cow` is needed. One
//! [`simd_json::Buffers`] and one tape are reused across lines (and across
//! calls, through [`Decoder`]), and the extra fields of all rows share one
//! flat vector.

pub mod body;
pub mod edge;
pub mod objects;
pub mod rowset;
pub mod segments;
pub mod source;
pub mod spliced;
pub mod stats_rows;

pub use body::Body;
pub use edge::edge_run;
pub use rowset::RowSet;
pub use segments::{SegmentWriter, Segments};
pub use source::Source;
pub use spliced::Spliced;

use std::ops::Range;

use simd_json::{Buffers, Node, Tape};

/// Why a backend answer could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid response from VictoriaLogs: {0}")]
pub struct DecodeError(pub String);

/// One log entry as VictoriaLogs returned it; strings borrow the NDJSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row<'a> {
    /// `_time` in nanoseconds since the Unix epoch.
    pub time_ns: i64,
    /// `_msg`, the log line (`""` when absent).
    pub msg: &'a str,
    /// `_stream`, e.g. `{app="api",env="prod"}` (`"{}"` when absent).
    pub stream: &'a str,
    /// `_stream_id` (`""` when absent).
    pub stream_id: &'a str,
    /// This row's other fields: a range into [`Rows::fields`].
    pub fields: Range<usize>,
}

/// The decoded rows of one answer plus the shared field storage.
#[derive(Debug, Default)]
pub struct Rows<'a> {
    /// Rows in the order VictoriaLogs sent them.
    pub rows: Vec<Row<'a>>,
    /// `(name, value)` of every field that is not `_time`, `_msg`, `_stream`
    /// or `_stream_id`, for all rows; see [`Row::fields`].
    pub fields: Vec<(&'a str, &'a str)>,
}

impl<'a> Rows<'a> {
    /// Creates empty storage.
    pub fn new() -> Self {
        Self::default()
    }

    /// The extra fields of `row`.
    pub fn fields_of(&self, row: &Row<'a>) -> &[(&'a str, &'a str)] {
        self.fields.get(row.fields.clone()).unwrap_or_default()
    }

    /// Empties the storage, keeping its capacity.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.fields.clear();
    }
}

/// A reusable NDJSON decoder: holds simd-json's scratch buffers and tape so
/// that decoding a body allocates nothing once they have grown.
pub struct Decoder {
    buffers: Buffers,
    /// The tape's allocation, kept empty between calls.
    tape: Option<Tape<'static>>,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder").finish_non_exhaustive()
    }
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// Creates a decoder with small initial buffers.
    pub fn new() -> Self {
        Self {
            buffers: Buffers::new(4096),
            tape: Some(Tape(Vec::new())),
        }
    }

    /// Decodes an answer (an NDJSON body, or rows lokivl merged), appending
    /// to `out`.
    ///
    /// # Errors
    /// [`DecodeError`] as for an NDJSON body ([`Source::rows_into`]).
    pub fn decode<'a, S: Source + ?Sized>(
        &mut self,
        src: &'a mut S,
        out: &mut Rows<'a>,
    ) -> Result<(), DecodeError> {
        src.rows_into(self, out)
    }

    /// Decodes an NDJSON body, appending to `out`. Empty (whitespace-only)
    /// lines are skipped; `\r\n` line ends are accepted.
    ///
    /// Fields whose values are not strings (VictoriaLogs never sends them) are
    /// skipped, since a borrowed string cannot be made for them.
    ///
    /// # Errors
    /// [`DecodeError`] for a line that is not a JSON object, a missing or
    /// malformed `_time`, or a non-string `_msg`/`_stream`. The body is left
    /// partly rewritten in that case.
    pub(crate) fn decode_ndjson<'a>(
        &mut self,
        ndjson: &'a mut [u8],
        out: &mut Rows<'a>,
    ) -> Result<(), DecodeError> {
        self.decode_ndjson_from(ndjson, 0, out)
    }

    /// As [`Decoder::decode_ndjson`] for a part of a body that starts after
    /// `first_line` lines (errors number lines in the whole body).
    pub(crate) fn decode_ndjson_from<'a>(
        &mut self,
        ndjson: &'a mut [u8],
        first_line: usize,
        out: &mut Rows<'a>,
    ) -> Result<(), DecodeError> {
        let mut tape: Tape<'a> = self.tape.take().unwrap_or_else(|| Tape(Vec::new())).reset();
        let result = decode_lines(ndjson, first_line, &mut self.buffers, &mut tape, out);
        self.tape = Some(tape.reset());
        result
    }
}

fn decode_lines<'a>(
    ndjson: &'a mut [u8],
    first_line: usize,
    buffers: &mut Buffers,
    tape: &mut Tape<'a>,
    out: &mut Rows<'a>,
) -> Result<(), DecodeError> {
    for (i, line) in ndjson.split_mut(|&b| b == b'\n').enumerate() {
        let lineno = first_line + i;
        let line = trim_ascii_ws(line);
        if line.is_empty() {
            continue;
        }
        simd_json::fill_tape(line, buffers, tape)
            .map_err(|e| DecodeError(format!("line {}: {e}", lineno + 1)))?;
        let row = row_from_tape(&tape.0, &mut out.fields)
            .map_err(|e| DecodeError(format!("line {}: {e}", lineno + 1)))?;
        out.rows.push(row);
    }
    Ok(())
}

fn trim_ascii_ws(s: &mut [u8]) -> &mut [u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &mut s[start..end]
}

/// Builds a row from one parsed line; extra fields are appended to `fields`.
fn row_from_tape<'a>(
    nodes: &[Node<'a>],
    fields: &mut Vec<(&'a str, &'a str)>,
) -> Result<Row<'a>, &'static str> {
    let Some(&Node::Object { len, .. }) = nodes.first() else {
        return Err("expected a JSON object");
    };
    let start = fields.len();
    let mut time: Option<&'a str> = None;
    let mut row = Row {
        time_ns: 0,
        msg: "",
        stream: "{}",
        stream_id: "",
        fields: start..start,
    };
    let mut i = 1;
    for _ in 0..len {
        let Some(&Node::String(key)) = nodes.get(i) else {
            fields.truncate(start);
            return Err("malformed object");
        };
        let value = match nodes.get(i + 1) {
            Some(&Node::String(v)) => {
                i += 2;
                Some(v)
            }
            Some(Node::Static(_)) => {
                i += 2;
                None
            }
            Some(&Node::Object { count, .. } | &Node::Array { count, .. }) => {
                i += 2 + count;
                None
            }
            None => {
                fields.truncate(start);
                return Err("malformed object");
            }
        };
        match (key, value) {
            ("_time", v) => time = Some(v.ok_or("_time is not a string")?),
            ("_msg", v) => row.msg = v.ok_or("_msg is not a string")?,
            ("_stream", v) => row.stream = v.ok_or("_stream is not a string")?,
            ("_stream_id", v) => row.stream_id = v.unwrap_or(""),
            (k, Some(v)) => fields.push((k, v)),
            (_, None) => {}
        }
    }
    let Some(t) = time else {
        fields.truncate(start);
        return Err("missing _time");
    };
    let Some(ns) = go::time::parse_rfc3339_nanos(t) else {
        fields.truncate(start);
        return Err("malformed _time");
    };
    row.time_ns = ns;
    row.fields = start..fields.len();
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(time, msg, stream, fields)` of a decoded row, owned.
    type OwnedRow = (i64, String, String, Vec<(String, String)>);

    fn decode_str(body: &str) -> Result<Vec<OwnedRow>, DecodeError> {
        let mut buf = body.as_bytes().to_vec();
        let mut rows = Rows::new();
        Decoder::new().decode(&mut buf, &mut rows)?;
        Ok(rows
            .rows
            .iter()
            .map(|r| {
                let f = rows
                    .fields_of(r)
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect();
                (r.time_ns, r.msg.to_owned(), r.stream.to_owned(), f)
            })
            .collect())
    }

    #[test]
    fn decodes_vl_rows_with_escapes() {
        let body = concat!(
            r#"{"_time":"2026-11-22T04:21:07.29584787Z","_stream_id":"0000abc","_stream":"{app=\"api\",env=\"prod\"}","_msg":"line \"one\"\n\u00e9","app":"api","env":"prod","trace_id":"abc"}"#,
            "\n\n  \r\n",
            r#"{"_msg":"two","_time":"2026-11-22T04:21:08Z","_stream":"{}"}"#,
            "\r\n"
        );
        let rows = decode_str(body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0, 1_795_321_267_295_847_870);
        assert_eq!(rows[0].1, "line \"one\"\né");
        assert_eq!(rows[0].2, r#"{app="api",env="prod"}"#);
        assert_eq!(
            rows[0].3,
            vec![
                ("app".to_owned(), "api".to_owned()),
                ("env".to_owned(), "prod".to_owned()),
                ("trace_id".to_owned(), "abc".to_owned())
            ]
        );
        assert_eq!(
            rows[1],
            (
                1_795_321_268_000_000_000,
                "two".to_owned(),
                "{}".to_owned(),
                vec![]
            )
        );
    }

    #[test]
    fn skips_non_string_and_nested_values() {
        let body = r#"{"a":{"x":[1,2,{"y":3}]},"b":[1,[2]],"c":3,"d":null,"_time":"1970-01-01T00:00:00.000000001Z","e":"kept"}"#;
        let rows = decode_str(body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            rows,
            vec![(
                1,
                String::new(),
                "{}".to_owned(),
                vec![("e".to_owned(), "kept".to_owned())]
            )]
        );
    }

    #[test]
    fn empty_body_gives_no_rows() {
        assert_eq!(decode_str(""), Ok(vec![]));
        assert_eq!(decode_str("\n\n \n"), Ok(vec![]));
    }

    #[test]
    fn garbage_and_truncated_input_is_an_error_not_a_panic() {
        let good = r#"{"_time":"2026-11-22T04:21:07Z","_msg":"hi","_stream":"{a=\"b\"}"}"#;
        // Every prefix of a valid line is either valid or an error.
        for cut in 0..good.len() {
            let _ = decode_str(&good[..cut]);
            assert!(
                decode_str(&good[..cut]).is_err() || good[..cut].trim().is_empty(),
                "cut {cut}"
            );
        }
        for bad in [
            "not json",
            "[1,2,3]",
            "\"str\"",
            "42",
            "{\"_time\":\"2026-11-22T04:21:07Z\"",
            "{\"_msg\":\"no time\"}",
            "{\"_time\":\"yesterday\"}",
            "{\"_time\":17}",
            "{\"_time\":\"2026-11-22T04:21:07Z\",\"_msg\":5}",
            "{\"_time\":\"2026-11-22T04:21:07Z\",\"_msg\":\"bad \\q escape\"}",
            "{\"_time\":\"2026-11-22T04:21:07Z\"} trailing",
            "{\"_time\":\"2026-11-22T04:21:07Z\",}",
            "\u{0}\u{1}\u{2}",
            "{{{{{{{{{{",
        ] {
            assert!(decode_str(bad).is_err(), "{bad:?} should fail");
        }
        // Invalid UTF-8 inside a string.
        let mut raw = b"{\"_time\":\"2026-11-22T04:21:07Z\",\"_msg\":\"\xff\xfe\"}".to_vec();
        let mut rows = Rows::new();
        assert!(Decoder::new().decode(&mut raw, &mut rows).is_err());
    }

    #[test]
    fn error_names_the_line() {
        let body = "{\"_time\":\"2026-11-22T04:21:07Z\"}\n{broken";
        let err = decode_str(body).err().map(|e| e.0).unwrap_or_default();
        assert!(err.starts_with("line 2:"), "{err}");
    }

    #[test]
    fn decoder_is_reusable_across_bodies() {
        let mut dec = Decoder::new();
        for n in [1usize, 50, 3] {
            let body: String = (0..n)
                .map(|i| format!("{{\"_time\":\"2026-11-22T04:21:{:02}Z\",\"_msg\":\"m{i}\",\"k\":\"v{i}\"}}\n", i % 60))
                .collect();
            let mut buf = body.into_bytes();
            let mut rows = Rows::new();
            assert_eq!(dec.decode(&mut buf, &mut rows), Ok(()));
            assert_eq!(rows.rows.len(), n);
            let last = rows.rows[n - 1].clone();
            assert_eq!(last.msg, format!("m{}", n - 1));
            assert_eq!(
                rows.fields_of(&last),
                &[("k", format!("v{}", n - 1).as_str())]
            );
        }
    }
}
