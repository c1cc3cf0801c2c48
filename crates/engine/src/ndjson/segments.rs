//! An NDJSON answer received as it streams: cut at line ends into a few
//! buffers, so that it never has to be in memory twice.
//!
//! Collecting a streamed body and then joining it into one buffer holds it
//! twice at the peak (the chunks, then the copy), and growing one buffer
//! copies it again at every doubling. [`SegmentWriter`] instead appends the
//! chunks to a buffer of bounded size; when the next chunk does not fit, the
//! complete lines are cut off as a finished segment (no copy: the segment
//! keeps the allocation) and only the partial last line is carried into a
//! new buffer. Every segment but the last ends with `\n`, so each is decoded
//! in place on its own ([`Source`]) and rows borrow from it exactly as they
//! borrow from a whole body. Lines are counted as they arrive, so the row
//! count needs no second pass.

use bytes::BytesMut;

use super::objects::{LineError, for_each_object};
use super::source::Source;
use super::{DecodeError, Decoder, Rows};

/// The first buffer's size when the answer's length is not declared.
const FIRST_SEGMENT: usize = 64 << 10;
/// The largest buffer a segment is given (a longer line grows its own).
const MAX_SEGMENT: usize = 4 << 20;

/// A received NDJSON answer in line-aligned segments.
#[derive(Debug, Default, Clone)]
pub struct Segments {
    /// The segments in order; every one but the last ends with `\n`.
    parts: Vec<BytesMut>,
    /// `\n` bytes in each segment, to number lines across segments.
    newlines: Vec<usize>,
    /// Bytes in all segments.
    len: usize,
}

impl Segments {
    /// How many segments hold the answer.
    pub fn segment_count(&self) -> usize {
        self.parts.len()
    }

    /// The segments' bytes, in order.
    pub(crate) fn parts(&self) -> impl Iterator<Item = &[u8]> {
        self.parts.iter().map(|p| &p[..])
    }

    /// The answer as one buffer (copied only when it spans segments).
    pub fn into_contiguous(mut self) -> BytesMut {
        if self.parts.len() <= 1 {
            return self.parts.pop().unwrap_or_default();
        }
        let mut out = BytesMut::with_capacity(self.len);
        for p in &self.parts {
            out.extend_from_slice(p);
        }
        out
    }
}

/// Builds [`Segments`] from the chunks of a body as they arrive.
#[derive(Debug)]
pub struct SegmentWriter {
    done: Segments,
    /// The segment being filled.
    cur: BytesMut,
    /// `\n` bytes in `cur`.
    cur_newlines: usize,
    /// The capacity of the next buffer.
    next: usize,
}

impl SegmentWriter {
    /// A writer for a body of `declared` bytes, if its length is known (one
    /// buffer of that size then holds it all).
    pub fn new(declared: Option<usize>) -> Self {
        let first = declared.map_or(FIRST_SEGMENT, |n| n.max(1));
        Self {
            done: Segments::default(),
            cur: BytesMut::with_capacity(first),
            cur_newlines: 0,
            next: first.clamp(FIRST_SEGMENT, MAX_SEGMENT),
        }
    }

    /// Bytes received so far.
    pub fn len(&self) -> usize {
        self.done.len + self.cur.len()
    }

    /// Whether nothing was received yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Complete lines received so far (`\n` bytes).
    pub fn lines(&self) -> usize {
        self.done.newlines.iter().sum::<usize>() + self.cur_newlines
    }

    /// Appends one chunk of the body.
    pub fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        if self.cur.capacity() - self.cur.len() < chunk.len() {
            self.cut();
        }
        self.cur.extend_from_slice(chunk);
        self.cur_newlines += memchr::memchr_iter(b'\n', chunk).count();
    }

    /// Moves the complete lines of the current buffer into a finished
    /// segment and carries the partial last line into a fresh buffer.
    fn cut(&mut self) {
        let Some(last_nl) = memchr::memrchr(b'\n', &self.cur) else {
            // One long partial line: it grows in place.
            return;
        };
        let segment = self.cur.split_to(last_nl + 1);
        let carry = std::mem::take(&mut self.cur);
        let mut fresh = BytesMut::with_capacity(self.next.max(carry.len() * 2));
        fresh.extend_from_slice(&carry);
        self.cur = fresh;
        self.next = (self.next * 2).min(MAX_SEGMENT);
        self.done.len += segment.len();
        self.done.parts.push(segment);
        self.done.newlines.push(self.cur_newlines);
        self.cur_newlines = 0;
    }

    /// The whole answer.
    pub fn finish(mut self) -> Segments {
        if !self.cur.is_empty() {
            self.done.len += self.cur.len();
            self.done.parts.push(self.cur);
            self.done.newlines.push(self.cur_newlines);
        }
        self.done
    }
}

impl Source for Segments {
    fn rows_into<'a>(
        &'a mut self,
        decoder: &mut Decoder,
        out: &mut Rows<'a>,
    ) -> Result<(), DecodeError> {
        let mut first_line = 0;
        for (part, newlines) in self.parts.iter_mut().zip(&self.newlines) {
            decoder.decode_ndjson_from(part, first_line, out)?;
            first_line += newlines;
        }
        Ok(())
    }

    fn for_each_fields<'a, E>(
        &'a mut self,
        mut each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
    ) -> Result<(), Result<LineError, E>> {
        let mut first_line = 0;
        for (part, newlines) in self.parts.iter_mut().zip(&self.newlines) {
            for_each_object(part, &mut each).map_err(|e| {
                e.map(|mut l| {
                    l.line += first_line;
                    l
                })
            })?;
            first_line += newlines;
        }
        Ok(())
    }

    fn byte_len(&self) -> usize {
        self.len
    }

    fn row_count(&self) -> usize {
        self.newlines.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(time, msg)` of every row, or the decode error.
    type Decoded = Result<Vec<(i64, String)>, DecodeError>;

    /// Rows of a body written in chunks of `chunk` bytes, the segment count
    /// and the line count.
    fn decode_chunked(body: &[u8], chunk: usize, declared: bool) -> (Decoded, usize, usize) {
        let mut w = SegmentWriter::new(declared.then_some(body.len()));
        for c in body.chunks(chunk) {
            w.push(c);
        }
        assert_eq!(w.len(), body.len());
        let lines = w.lines();
        let mut seg = w.finish();
        assert_eq!(seg.row_count(), lines);
        assert_eq!(seg.byte_len(), body.len());
        let n = seg.segment_count();
        let mut rows = Rows::new();
        let r = Decoder::new().decode(&mut seg, &mut rows).map(|()| {
            rows.rows
                .iter()
                .map(|r| (r.time_ns, r.msg.to_owned()))
                .collect()
        });
        (r, n, lines)
    }

    fn whole(body: &[u8]) -> Decoded {
        let mut b = body.to_vec();
        let mut rows = Rows::new();
        Decoder::new().decode(&mut b, &mut rows).map(|()| {
            rows.rows
                .iter()
                .map(|r| (r.time_ns, r.msg.to_owned()))
                .collect()
        })
    }

    fn body(n: usize, pad: usize) -> Vec<u8> {
        (0..n)
            .map(|i| {
                format!(
                    "{{\"_time\":\"2026-11-22T04:21:{:02}.{i:09}Z\",\"_msg\":\"m{i} {}\\u00e9\"}}\r\n",
                    i % 60,
                    "x".repeat(pad + i % 7)
                )
            })
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn chunked_bodies_decode_like_whole_ones() {
        for (n, pad) in [(0, 0), (1, 3), (40, 10), (3000, 100), (50, 200_000)] {
            let b = body(n, pad);
            let want = whole(&b);
            assert_eq!(want.as_ref().map(Vec::len), Ok(n));
            for chunk in [1, 7, 4096, 65_536, 1 << 20] {
                if chunk == 1 && b.len() > 100_000 {
                    continue;
                }
                for declared in [false, true] {
                    let (got, _, lines) = decode_chunked(&b, chunk, declared);
                    assert_eq!(got, want, "n={n} pad={pad} chunk={chunk}");
                    assert_eq!(lines, n);
                }
            }
        }
    }

    #[test]
    fn large_bodies_are_cut_into_bounded_segments() {
        let b = body(3000, 2000);
        let (_, segments, _) = decode_chunked(&b, 16 << 10, false);
        assert!(segments > 1, "{segments}");
        // A declared length gives one exact buffer.
        let (_, segments, _) = decode_chunked(&b, 16 << 10, true);
        assert_eq!(segments, 1);
        let mut w = SegmentWriter::new(None);
        for c in b.chunks(16 << 10) {
            w.push(c);
        }
        let seg = w.finish();
        for p in &seg.parts[..seg.parts.len() - 1] {
            assert_eq!(p.last(), Some(&b'\n'));
            assert!(p.len() <= MAX_SEGMENT + (16 << 10), "{}", p.len());
        }
        assert_eq!(&seg.into_contiguous()[..], &b[..]);
    }

    #[test]
    fn errors_name_the_line_of_the_whole_body() {
        let mut b = body(5000, 50);
        b.extend_from_slice(b"{broken\n");
        b.extend_from_slice(&body(3, 0));
        let want = whole(&b).unwrap_err();
        assert!(want.0.starts_with("line 5001:"), "{want}");
        for chunk in [7, 4096, 1 << 20] {
            let (got, _, _) = decode_chunked(&b, chunk, false);
            assert_eq!(got, Err(want.clone()), "chunk={chunk}");
        }
        // And for flat objects (stats rows).
        let mut w = SegmentWriter::new(None);
        for c in b.chunks(4096) {
            w.push(c);
        }
        let mut seg = w.finish();
        assert!(seg.segment_count() > 1);
        let err = seg
            .for_each_fields(|_| Ok::<_, ()>(()))
            .unwrap_err()
            .unwrap();
        assert_eq!(err.line, 5001);
    }

    #[test]
    fn a_truncated_last_line_is_kept_and_fails_to_decode() {
        let mut b = body(2000, 40);
        b.extend_from_slice(b"{\"_time\":\"2026-11-22T04:21:07Z\",\"_ms");
        let want = whole(&b);
        assert!(want.is_err());
        let (got, _, lines) = decode_chunked(&b, 1000, false);
        assert_eq!(got, want);
        assert_eq!(lines, 2000);
    }
}
