//! A [`LogAnswer`] as bytes, for the window cache: lokivl's own
//! length-prefixed layout (not JSON), read back by slicing and checked so
//! that a foreign or truncated buffer is refused, never misread.

use bytes::{BufMut, Bytes, BytesMut};

use super::log::{Category, EntryRec, LogAnswer, LogStats, MAX_TEXT, Pair, Span, StreamRec};

/// A buffer that is not a stored [`LogAnswer`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stored log answer: {0}")]
pub struct CodecError(&'static str);

/// The format's first byte; another value is refused. 3: spans as two
/// `u32` (they were two `u64`).
const VERSION: u8 = 3;

impl LogAnswer {
    /// The stored form.
    pub fn to_bytes(&self) -> Bytes {
        let size = 64
            + self.warnings.iter().map(|w| w.len() + 8).sum::<usize>()
            + self.text.len()
            + self.pairs.len() * 17
            + self.entries.len() * 32
            + self.streams.len() * 16;
        let mut b = BytesMut::with_capacity(size);
        b.put_u8(VERSION);
        b.put_u8(u8::from(self.categorized));
        let s = &self.stats;
        for n in [
            s.bytes,
            s.lines,
            s.post_filter_lines,
            s.metadata_bytes,
            s.splits,
        ] {
            b.put_u64_le(n);
        }
        put_len(&mut b, self.warnings.len());
        for w in &self.warnings {
            put_len(&mut b, w.len());
            b.put_slice(w.as_bytes());
        }
        put_len(&mut b, self.text.len());
        b.put_slice(self.text.as_bytes());
        put_len(&mut b, self.pairs.len());
        for p in &self.pairs {
            put_span(&mut b, p.name);
            put_span(&mut b, p.value);
            b.put_u8(match p.category {
                Category::Metadata => 0,
                Category::Parsed => 1,
            });
        }
        put_len(&mut b, self.entries.len());
        for e in &self.entries {
            b.put_i64_le(e.ts);
            b.put_u64_le(e.origin);
            put_span(&mut b, e.line);
            put_span(&mut b, e.labels);
        }
        put_len(&mut b, self.streams.len());
        for s in &self.streams {
            put_span(&mut b, s.labels);
            put_span(&mut b, s.entries);
        }
        b.freeze()
    }

    /// Reads the stored form back.
    ///
    /// # Errors
    /// [`CodecError`] for a truncated, foreign or inconsistent buffer.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader { b: bytes, i: 0 };
        if r.u8()? != VERSION {
            return Err(CodecError("unknown version"));
        }
        let categorized = r.u8()? != 0;
        let stats = LogStats {
            bytes: r.u64()?,
            lines: r.u64()?,
            post_filter_lines: r.u64()?,
            metadata_bytes: r.u64()?,
            splits: r.u64()?,
        };
        let n = r.len()?;
        let mut warnings = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            let len = r.len()?;
            warnings.push(r.text(len)?.to_owned());
        }
        let len = r.len()?;
        let text = r.text(len)?.to_owned();
        if text.len() > MAX_TEXT {
            return Err(CodecError("text too long"));
        }
        let in_text = |s: &Span| {
            let r = s.range();
            r.start <= r.end
                && r.end <= text.len()
                && text.is_char_boundary(r.start)
                && text.is_char_boundary(r.end)
        };
        let n = r.len()?;
        let mut pairs = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            let (name, value) = (r.span()?, r.span()?);
            let category = match r.u8()? {
                0 => Category::Metadata,
                1 => Category::Parsed,
                _ => return Err(CodecError("unknown category")),
            };
            if !in_text(&name) || !in_text(&value) {
                return Err(CodecError("label out of range"));
            }
            pairs.push(Pair {
                name,
                value,
                category,
            });
        }
        let within = |s: &Span, n: usize| s.start <= s.end && s.end as usize <= n;
        let n = r.len()?;
        let mut entries = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            let ts = r.u64()?.cast_signed();
            let origin = r.u64()?;
            let (line, labels) = (r.span()?, r.span()?);
            if !in_text(&line) || !within(&labels, pairs.len()) {
                return Err(CodecError("entry out of range"));
            }
            entries.push(EntryRec {
                ts,
                origin,
                line,
                labels,
            });
        }
        let n = r.len()?;
        let mut streams = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            let (labels, ents) = (r.span()?, r.span()?);
            if !within(&labels, pairs.len()) || !within(&ents, entries.len()) {
                return Err(CodecError("stream out of range"));
            }
            streams.push(StreamRec {
                labels,
                entries: ents,
            });
        }
        if r.i != bytes.len() {
            return Err(CodecError("trailing bytes"));
        }
        Ok(Self {
            text,
            pairs,
            entries,
            streams,
            categorized,
            warnings,
            stats,
            ..Self::default()
        })
    }
}

fn put_len(b: &mut BytesMut, n: usize) {
    b.put_u64_le(n as u64);
}

fn put_span(b: &mut BytesMut, s: Span) {
    b.put_u32_le(s.start);
    b.put_u32_le(s.end);
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self
            .i
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or(CodecError("truncated"))?;
        let r = &self.b[self.i..end];
        self.i = end;
        Ok(r)
    }

    fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.take(1)?[0])
    }

    fn u64(&mut self) -> Result<u64, CodecError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    fn len(&mut self) -> Result<usize, CodecError> {
        usize::try_from(self.u64()?).map_err(|_| CodecError("length"))
    }

    fn u32(&mut self) -> Result<u32, CodecError> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(a))
    }

    fn span(&mut self) -> Result<Span, CodecError> {
        Ok(Span {
            start: self.u32()?,
            end: self.u32()?,
        })
    }

    fn text(&mut self, n: usize) -> Result<&'a str, CodecError> {
        std::str::from_utf8(self.take(n)?).map_err(|_| CodecError("text is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LogAnswer {
        let mut a = LogAnswer::new(true);
        a.warnings.push("w \"1\"".into());
        a.stats = LogStats {
            bytes: 7,
            lines: 3,
            post_filter_lines: 2,
            metadata_bytes: 1,
            splits: 0,
        };
        a.begin_stream();
        a.push_stream_label("app", "a");
        a.push_stream_label("env", "é");
        a.push_entry(30, "l3 <");
        a.push_entry(10, "l1");
        a.push_entry_label(Category::Metadata, "t", "]");
        a.begin_stream();
        a.push_stream_label("app", "a");
        a.push_entry_of(0xfeed_beef_1234, 20, "l2");
        a
    }

    #[test]
    fn the_stored_form_reads_back_equal() {
        let a = sample();
        let stored = a.to_bytes();
        assert_eq!(LogAnswer::from_bytes(&stored), Ok(a));
        for cut in 0..stored.len() {
            assert!(LogAnswer::from_bytes(&stored[..cut]).is_err(), "{cut}");
        }
        let empty = LogAnswer::default();
        assert_eq!(LogAnswer::from_bytes(&empty.to_bytes()), Ok(empty));
    }

    #[test]
    fn foreign_buffers_are_refused() {
        for bad in [&b""[..], b"{", br#"{"data":{"result":[]}}"#] {
            assert!(LogAnswer::from_bytes(bad).is_err());
        }
        // A range past the text.
        let mut stored = sample().to_bytes().to_vec();
        let last = stored.len() - 4;
        stored[last..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(LogAnswer::from_bytes(&stored).is_err());
    }
}
