//! A [`LogAnswer`] as bytes, for the window cache: lokivl's own
//! length-prefixed layout (not JSON), read back by slicing and checked so
//! that a foreign or truncated buffer is refused, never misread.

use bytes::{BufMut, Bytes, BytesMut};

use super::log::{Category, LogAnswer, Span};

/// A buffer that is not a stored [`LogAnswer`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stored log answer: {0}")]
pub struct CodecError(pub(crate) &'static str);

/// The format's first byte; another value is refused. 3: spans as two
/// `u32` (they were two `u64`).
pub(crate) const VERSION: u8 = 3;

/// The fixed part: version, flag, five counters and five section lengths.
const HEADER: usize = 2 + 5 * 8 + 5 * 8;
/// A stored label pair: two spans and a category byte.
pub(crate) const PAIR: usize = 17;
/// A stored entry: timestamp, origin and two spans.
pub(crate) const ENTRY: usize = 32;
/// A stored stream: two spans.
pub(crate) const STREAM: usize = 16;

impl LogAnswer {
    /// The stored form, in a buffer of exactly its size: the cache keeps a
    /// buffer with room to spare only by copying it.
    pub fn to_bytes(&self) -> Bytes {
        let size = HEADER
            + self.warnings.iter().map(|w| w.len() + 8).sum::<usize>()
            + self.text.len()
            + self.pairs.len() * PAIR
            + self.entries.len() * ENTRY
            + self.streams.len() * STREAM;
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
        debug_assert_eq!(b.len(), size);
        b.freeze()
    }

    /// Reads the stored form back into an answer of its own.
    ///
    /// # Errors
    /// [`CodecError`] for a truncated, foreign or inconsistent buffer.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CodecError> {
        super::stored::read(bytes)
    }
}

fn put_len(b: &mut BytesMut, n: usize) {
    b.put_u64_le(n as u64);
}

fn put_span(b: &mut BytesMut, s: Span) {
    b.put_u32_le(s.start);
    b.put_u32_le(s.end);
}

/// Reads a stored buffer front to back, refusing to read past its end.
pub(crate) struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Self { b, i: 0 }
    }

    /// The range of the next `n` bytes, which are passed.
    pub(crate) fn section(&mut self, n: usize) -> Result<std::ops::Range<usize>, CodecError> {
        let end = self
            .i
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or(CodecError("truncated"))?;
        let r = self.i..end;
        self.i = end;
        Ok(r)
    }

    /// The range of the next `n` records of `size` bytes.
    pub(crate) fn records(
        &mut self,
        n: usize,
        size: usize,
    ) -> Result<std::ops::Range<usize>, CodecError> {
        self.section(n.checked_mul(size).ok_or(CodecError("length"))?)
    }

    pub(crate) fn at_end(&self) -> bool {
        self.i == self.b.len()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let r = self.section(n)?;
        Ok(&self.b[r])
    }

    pub(crate) fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u64(&mut self) -> Result<u64, CodecError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    pub(crate) fn len(&mut self) -> Result<usize, CodecError> {
        usize::try_from(self.u64()?).map_err(|_| CodecError("length"))
    }

    pub(crate) fn text(&mut self, n: usize) -> Result<&'a str, CodecError> {
        std::str::from_utf8(self.take(n)?).map_err(|_| CodecError("text is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::LogStats;

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
    fn the_stored_form_has_no_room_to_spare() {
        // The cache copies a buffer with spare room into one of its size.
        for a in [sample(), LogAnswer::default()] {
            let stored: Vec<u8> = a.to_bytes().into();
            assert_eq!(stored.capacity(), stored.len());
        }
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
