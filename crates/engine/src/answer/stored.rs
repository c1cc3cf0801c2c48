//! A stored [`LogAnswer`] read where it lies: the window merge reads cached
//! windows through [`StoredLog`] instead of copying each into a new answer.
//!
//! Under many clients the windows a request merges are mostly cache hits,
//! and decoding each into its own text and record vectors held a second
//! copy of the cache's bytes for as long as the request ran (145 MB of a
//! 261 MB heap peak at 50 clients). A [`StoredLog`] holds the cache's own
//! buffer (shared, not copied) and the offsets of its sections; records are
//! read from the bytes when visited.
//!
//! The layout is checked once, when the [`StoredLog`] is made: every span
//! within its text or records and on character boundaries, so that a
//! foreign or truncated buffer is refused, never misread. The text's UTF-8
//! is checked when a [`StoredView`] is taken, once per merge, and only for
//! windows that are merged.

use std::ops::Range;

use bytes::Bytes;

use super::codec::{CodecError, ENTRY, PAIR, Reader, STREAM, VERSION};
use super::log::{Category, EntryRec, LogAnswer, LogStats, MAX_TEXT, Pair, Span, StreamRec};

/// A stored log answer, checked, kept as the bytes it was stored as.
#[derive(Debug, Clone)]
pub struct StoredLog {
    bytes: Bytes,
    layout: Layout,
}

/// Where each section of a checked buffer lies.
#[derive(Debug, Clone)]
struct Layout {
    categorized: bool,
    stats: LogStats,
    warnings: Vec<String>,
    text: Range<usize>,
    pairs: Range<usize>,
    entries: Range<usize>,
    streams: Range<usize>,
}

impl StoredLog {
    /// Checks `bytes` ([`LogAnswer::to_bytes`]'s form) and keeps them.
    ///
    /// # Errors
    /// [`CodecError`] for a truncated, foreign or inconsistent buffer.
    pub fn new(bytes: Bytes) -> Result<Self, CodecError> {
        let layout = Layout::check(&bytes)?;
        Ok(Self { bytes, layout })
    }

    /// Entries over all streams.
    pub fn len(&self) -> usize {
        self.layout.entry_count()
    }

    /// Whether the answer holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The answer's content, borrowed from the bytes.
    ///
    /// # Errors
    /// [`CodecError`] when the text is not UTF-8.
    pub fn view(&self) -> Result<StoredView<'_>, CodecError> {
        StoredView::new(&self.bytes, &self.layout)
    }
}

impl Layout {
    fn entry_count(&self) -> usize {
        self.entries.len() / ENTRY
    }

    fn check(bytes: &[u8]) -> Result<Self, CodecError> {
        let mut r = Reader::new(bytes);
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
        if len > MAX_TEXT {
            return Err(CodecError("text too long"));
        }
        let text = r.section(len)?;
        let t = &bytes[text.clone()];
        let in_text = |s: Span| {
            let r = s.range();
            r.start <= r.end && r.end <= t.len() && boundary(t, r.start) && boundary(t, r.end)
        };
        let n_pairs = r.len()?;
        let pairs = r.records(n_pairs, PAIR)?;
        for p in bytes[pairs.clone()].chunks_exact(PAIR) {
            let pair = read_pair(p).ok_or(CodecError("unknown category"))?;
            if !in_text(pair.name) || !in_text(pair.value) {
                return Err(CodecError("label out of range"));
            }
        }
        let within = |s: Span, n: usize| s.start <= s.end && s.end as usize <= n;
        let n_entries = r.len()?;
        let entries = r.records(n_entries, ENTRY)?;
        for e in bytes[entries.clone()].chunks_exact(ENTRY) {
            let e = read_entry(e);
            if !in_text(e.line) || !within(e.labels, n_pairs) {
                return Err(CodecError("entry out of range"));
            }
        }
        let n_streams = r.len()?;
        let streams = r.records(n_streams, STREAM)?;
        for s in bytes[streams.clone()].chunks_exact(STREAM) {
            let s = read_stream(s);
            if !within(s.labels, n_pairs) || !within(s.entries, n_entries) {
                return Err(CodecError("stream out of range"));
            }
        }
        if !r.at_end() {
            return Err(CodecError("trailing bytes"));
        }
        Ok(Self {
            categorized,
            stats,
            warnings,
            text,
            pairs,
            entries,
            streams,
        })
    }
}

/// Whether `i` (at most `t.len()`) starts a character of `t` or ends it:
/// on text that is UTF-8, what `str::is_char_boundary` says.
fn boundary(t: &[u8], i: usize) -> bool {
    t.get(i).is_none_or(|&b| b & 0xC0 != 0x80)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

fn span_at(b: &[u8], at: usize) -> Span {
    Span {
        start: u32_at(b, at),
        end: u32_at(b, at + 4),
    }
}

/// A stored pair (`PAIR` bytes); `None` for an unknown category.
fn read_pair(b: &[u8]) -> Option<Pair> {
    let category = match b.get(16) {
        Some(0) => Category::Metadata,
        Some(1) => Category::Parsed,
        _ => return None,
    };
    Some(Pair {
        name: span_at(b, 0),
        value: span_at(b, 8),
        category,
    })
}

/// A stored entry (`ENTRY` bytes).
fn read_entry(b: &[u8]) -> EntryRec {
    EntryRec {
        ts: u64_at(b, 0).cast_signed(),
        origin: u64_at(b, 8),
        line: span_at(b, 16),
        labels: span_at(b, 24),
    }
}

/// A stored stream (`STREAM` bytes).
fn read_stream(b: &[u8]) -> StreamRec {
    StreamRec {
        labels: span_at(b, 0),
        entries: span_at(b, 8),
    }
}

/// The content of a [`StoredLog`]: the same reading as a [`LogAnswer`]'s,
/// from the stored bytes.
#[derive(Debug, Clone, Copy)]
pub struct StoredView<'a> {
    text: &'a str,
    bytes: &'a [u8],
    layout: &'a Layout,
}

impl<'a> StoredView<'a> {
    /// The view of `bytes`, whose layout is `layout` (checked); the only
    /// check left is the text's UTF-8.
    fn new(bytes: &'a [u8], layout: &'a Layout) -> Result<Self, CodecError> {
        let text = std::str::from_utf8(&bytes[layout.text.clone()])
            .map_err(|_| CodecError("text is not UTF-8"))?;
        Ok(Self {
            text,
            bytes,
            layout,
        })
    }

    /// Entries over all streams.
    pub fn len(&self) -> usize {
        self.layout.entry_count()
    }

    /// Whether the answer holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `categorize-labels` was requested: entries carry their own labels.
    pub fn categorized(&self) -> bool {
        self.layout.categorized
    }

    /// Warnings to pass on, in order.
    pub fn warnings(&self) -> &'a [String] {
        &self.layout.warnings
    }

    /// The counters behind `stats`.
    pub fn stats(&self) -> LogStats {
        self.layout.stats
    }

    /// The streams, in answer order.
    pub fn streams(&self) -> impl ExactSizeIterator<Item = StoredStream<'a>> + 'a {
        let v = *self;
        (0..self.layout.streams.len() / STREAM).map(move |i| v.stream(i))
    }

    /// The `i`-th stream (an empty one past the last).
    pub fn stream(&self, i: usize) -> StoredStream<'a> {
        let rec = read_stream(self.record(&self.layout.streams, STREAM, i));
        StoredStream {
            v: *self,
            labels: rec.labels.range(),
            entries: rec.entries.range(),
        }
    }

    fn record(&self, section: &Range<usize>, size: usize, i: usize) -> &'a [u8] {
        let at = section.start + i * size;
        self.bytes
            .get(at..(at + size).min(section.end))
            .unwrap_or_default()
    }

    fn str(&self, s: Span) -> &'a str {
        self.text.get(s.range()).unwrap_or_default()
    }

    fn pair(&self, i: usize) -> (&'a str, &'a str, Category) {
        match read_pair(self.record(&self.layout.pairs, PAIR, i)) {
            Some(p) => (self.str(p.name), self.str(p.value), p.category),
            None => ("", "", Category::Metadata),
        }
    }

    /// A copy as a [`LogAnswer`], records and text as stored.
    pub fn to_answer(&self) -> LogAnswer {
        let records =
            |section: &Range<usize>, size: usize| self.bytes[section.clone()].chunks_exact(size);
        LogAnswer {
            text: self.text.to_owned(),
            pairs: records(&self.layout.pairs, PAIR)
                .filter_map(read_pair)
                .collect(),
            entries: records(&self.layout.entries, ENTRY)
                .map(read_entry)
                .collect(),
            streams: records(&self.layout.streams, STREAM)
                .map(read_stream)
                .collect(),
            categorized: self.layout.categorized,
            warnings: self.layout.warnings.clone(),
            stats: self.layout.stats,
            ..LogAnswer::default()
        }
    }
}

/// One stream of a [`StoredView`].
#[derive(Debug, Clone)]
pub struct StoredStream<'a> {
    v: StoredView<'a>,
    labels: Range<usize>,
    entries: Range<usize>,
}

impl<'a> StoredStream<'a> {
    /// The stream's labels, sorted by name.
    pub fn labels(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a str)> + Clone + 'a {
        let v = self.v;
        self.labels.clone().map(move |i| {
            let (n, value, _) = v.pair(i);
            (n, value)
        })
    }

    /// The stream's entries, in the query's direction.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = StoredEntry<'a>> + Clone + 'a {
        let v = self.v;
        self.entries.clone().map(move |i| {
            let rec = read_entry(v.record(&v.layout.entries, ENTRY, i));
            StoredEntry {
                v,
                ts: rec.ts,
                origin: rec.origin,
                line: rec.line,
                labels: rec.labels.range(),
            }
        })
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the stream has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One entry of a [`StoredView`].
#[derive(Debug, Clone)]
pub struct StoredEntry<'a> {
    v: StoredView<'a>,
    /// Nanoseconds since the epoch.
    pub ts: i64,
    origin: u64,
    line: Span,
    labels: Range<usize>,
}

impl<'a> StoredEntry<'a> {
    /// Loki's hash of the entry's base stream (0 when unknown).
    pub fn origin(&self) -> u64 {
        self.origin
    }

    /// The log line.
    pub fn line(&self) -> &'a str {
        self.v.str(self.line)
    }

    /// The entry's own labels (categorized answers), sorted by name.
    pub fn labels(&self) -> impl Iterator<Item = (&'a str, &'a str, Category)> + Clone + 'a {
        let v = self.v;
        self.labels.clone().map(move |i| v.pair(i))
    }
}

/// [`LogAnswer::from_bytes`]: a copy of what `bytes` hold.
pub(crate) fn read(bytes: &[u8]) -> Result<LogAnswer, CodecError> {
    let layout = Layout::check(bytes)?;
    Ok(StoredView::new(bytes, &layout)?.to_answer())
}

impl LogAnswer {
    /// Copies `entry` (from a stored answer) into the stream begun last.
    pub fn push_stored_entry(&mut self, entry: &StoredEntry<'_>) {
        self.push_entry_of(entry.origin(), entry.ts, entry.line());
        for (n, v, c) in entry.labels() {
            self.push_entry_label(c, n, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::EntryRef;

    fn sample() -> LogAnswer {
        let mut a = LogAnswer::new(true);
        a.warnings.push("w".into());
        a.stats.lines = 3;
        a.begin_stream();
        a.push_stream_label("app", "a");
        a.push_stream_label("env", "é");
        a.push_entry_of(7, 30, "l3 <");
        a.push_entry(10, "ünï");
        a.push_entry_label(Category::Metadata, "t", "]");
        a.push_entry_label(Category::Parsed, "x", "y");
        a.begin_stream();
        a.push_stream_label("app", "b");
        a.push_entry_of(0xfeed_beef_1234, 20, "l2");
        a
    }

    type Entry = (i64, u64, String, Vec<(String, String, Category)>);

    fn own(e: &EntryRef<'_>) -> Entry {
        let labels = e.labels().map(|(n, v, c)| (n.into(), v.into(), c));
        (e.ts, e.origin(), e.line().into(), labels.collect())
    }

    fn stored(e: &StoredEntry<'_>) -> Entry {
        let labels = e.labels().map(|(n, v, c)| (n.into(), v.into(), c));
        (e.ts, e.origin(), e.line().into(), labels.collect())
    }

    #[test]
    fn a_stored_answer_reads_as_the_answer_it_was() {
        let a = sample();
        let log = StoredLog::new(a.to_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let v = log.view().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((log.len(), v.len()), (3, 3));
        assert!(v.categorized());
        assert_eq!(v.warnings(), ["w"]);
        assert_eq!(v.stats(), a.stats);
        assert_eq!(v.streams().len(), a.streams().len());
        for (s, t) in a.streams().zip(v.streams()) {
            assert_eq!(
                s.labels().collect::<Vec<_>>(),
                t.labels().collect::<Vec<_>>()
            );
            assert_eq!(s.len(), t.len());
            let e: Vec<_> = s.entries().map(|e| own(&e)).collect();
            assert_eq!(e, t.entries().map(|e| stored(&e)).collect::<Vec<_>>());
        }
        assert_eq!(v.to_answer(), a);
        let mut copy = LogAnswer::new(true);
        copy.begin_stream();
        for e in v.stream(0).entries() {
            copy.push_stored_entry(&e);
        }
        let first: Vec<_> = a.stream(0).entries().map(|e| own(&e)).collect();
        let copied: Vec<_> = copy.stream(0).entries().map(|e| own(&e)).collect();
        assert_eq!(first, copied);
    }

    #[test]
    fn the_stored_buffer_is_kept_not_copied() {
        let bytes = sample().to_bytes();
        let at = bytes.as_ptr();
        let log = StoredLog::new(bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(log.bytes.as_ptr(), at);
    }

    #[test]
    fn broken_buffers_are_refused() {
        let stored = sample().to_bytes();
        for cut in 0..stored.len() {
            assert!(StoredLog::new(stored.slice(..cut)).is_err(), "{cut}");
        }
        // A span inside a character ("é" is two bytes).
        let a = sample();
        let e = a.text.find('é').unwrap_or_else(|| panic!("no é"));
        let mut bad = a.clone();
        bad.pairs[1].value.end = (e + 1) as u32;
        assert!(StoredLog::new(bad.to_bytes()).is_err());
        // An entry past the pairs, a stream past the entries.
        let mut bad = a.clone();
        bad.entries[0].labels.end = 99;
        assert!(StoredLog::new(bad.to_bytes()).is_err());
        let mut bad = a;
        bad.streams[1].entries.end = 4;
        assert!(StoredLog::new(bad.to_bytes()).is_err());
        // Text that is not UTF-8 passes the layout, not the view.
        let mut raw = sample().to_bytes().to_vec();
        let at = raw
            .windows(2)
            .position(|w| w == "é".as_bytes())
            .unwrap_or_else(|| panic!("no é"));
        raw[at] = 0xff;
        raw[at + 1] = b'e';
        let log = StoredLog::new(Bytes::from(raw));
        assert!(log.is_ok_and(|l| l.view().is_err()));
    }
}
