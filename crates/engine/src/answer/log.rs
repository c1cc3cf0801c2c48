//! [`LogAnswer`]: streams of entries with their labels, warnings and the
//! counters behind `stats`.
//!
//! All strings of an answer live in one buffer and records point into it
//! by range, so building an answer costs a few vector growths, not an
//! allocation per entry.

use std::ops::Range;

/// The category of an entry's own label (stream labels belong to the stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// Structured metadata stored with the entry.
    Metadata,
    /// A label produced by a parser or formatter.
    Parsed,
}

/// Counters of the work behind an answer, for its `stats.summary`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogStats {
    /// `totalBytesProcessed`: bytes of lines and fields read.
    pub bytes: u64,
    /// `totalLinesProcessed`: rows read from VictoriaLogs.
    pub lines: u64,
    /// `totalPostFilterLines`.
    pub post_filter_lines: u64,
    /// `totalStructuredMetadataBytesProcessed`.
    pub metadata_bytes: u64,
    /// `splits`: windows merged into the answer (0 when not split).
    pub splits: u64,
}

impl LogStats {
    /// Adds `other`'s counters (not `splits`).
    pub fn add(&mut self, other: &Self) {
        self.bytes += other.bytes;
        self.lines += other.lines;
        self.post_filter_lines += other.post_filter_lines;
        self.metadata_bytes += other.metadata_bytes;
    }
}

/// A range of [`LogAnswer::text`] or of a record vector, in 32 bits: the
/// records of an answer (a label pair per label of every entry) outweigh
/// its text, and half-size offsets halve them. An answer holds at most
/// [`MAX_TEXT`] bytes of text ([`LogAnswer`] cuts it there, with a warning).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl Span {
    /// `start..end`; both within [`MAX_TEXT`] (checked by the caller).
    fn new(start: usize, end: usize) -> Self {
        debug_assert!(start <= end && end <= MAX_TEXT);
        Self {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The empty span at `at`.
    fn at(at: usize) -> Self {
        Self::new(at, at)
    }

    pub(crate) fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    pub(crate) fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub(crate) fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// The most text (and records of each kind) one answer holds: what a
/// [`Span`] can address.
pub(crate) const MAX_TEXT: usize = u32::MAX as usize;

/// The warning of an answer cut at [`MAX_TEXT`].
pub const CUT_WARNING: &str =
    "lokivl: the answer reached 4 GiB of text; the entries past that point are left out";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pair {
    pub(crate) name: Span,
    pub(crate) value: Span,
    pub(crate) category: Category,
}

/// A label name already in an answer's text, for later labels of the same
/// answer to share instead of writing it again (names repeat on every
/// entry). Made by [`LogAnswer::push_name`]; valid until the answer is
/// cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NameRef(Span);

/// The labels of an entry of an answer, for a later entry with the same
/// labels to share ([`LogAnswer::share_entry_labels`]). Valid until the
/// answer is cleared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LabelsRef(Span);

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamRec {
    /// Its labels: a range of `pairs`.
    pub(crate) labels: Span,
    /// Its entries: a range of `entries`.
    pub(crate) entries: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryRec {
    pub(crate) ts: i64,
    /// Loki's hash of the entry's base stream ([`crate::tie`]): which of
    /// several entries with one timestamp a limit keeps.
    pub(crate) origin: u64,
    pub(crate) line: Span,
    /// Its own labels: a range of `pairs`, sorted by name.
    pub(crate) labels: Span,
}

/// The answer of a log query: streams in the order Loki writes them (by
/// label-set string), each with its labels sorted by name and its entries
/// in the query's direction.
///
/// Without `categorize-labels` every label is a stream label and entries
/// carry none; with it, entries carry their structured metadata and parsed
/// labels. Built with [`LogAnswer::begin_stream`], [`LogAnswer::push_entry`]
/// and the `push_*_label` methods, in order.
///
/// An answer that would pass [`MAX_TEXT`] bytes of text is cut: the entry
/// (and a stream left without entries) being built is taken back, every
/// later push is ignored, and [`CUT_WARNING`] tells the client, as Loki's
/// partial answers do; every complete entry before the cut stays.
#[derive(Debug, Clone, Default)]
pub struct LogAnswer {
    pub(crate) text: String,
    pub(crate) pairs: Vec<Pair>,
    pub(crate) entries: Vec<EntryRec>,
    pub(crate) streams: Vec<StreamRec>,
    /// `categorize-labels` was requested: entries carry their own labels.
    pub categorized: bool,
    /// Warnings to pass on to the client, in order, without repeats.
    pub warnings: Vec<String>,
    /// The counters behind `stats`.
    pub stats: LogStats,
    /// The answer was cut ([`CUT_WARNING`]): pushes are ignored.
    pub(crate) cut: bool,
    /// [`MAX_TEXT`], lower in tests.
    pub(crate) limit: Option<usize>,
    /// The entry added last may get more labels.
    pub(crate) open_entry: bool,
}

/// Equal content: the same text, records, flags, warnings and counters
/// (how it was built, or what a builder may still add, aside).
impl PartialEq for LogAnswer {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
            && self.pairs == other.pairs
            && self.entries == other.entries
            && self.streams == other.streams
            && self.categorized == other.categorized
            && self.warnings == other.warnings
            && self.stats == other.stats
    }
}

impl Eq for LogAnswer {}

impl LogAnswer {
    /// An empty answer.
    pub fn new(categorized: bool) -> Self {
        Self {
            categorized,
            ..Self::default()
        }
    }

    /// An empty answer cut at `limit` bytes of text (and records of each
    /// kind) instead of [`MAX_TEXT`], to test the cut.
    #[cfg(test)]
    pub(crate) fn with_limit(categorized: bool, limit: usize) -> Self {
        Self {
            limit: Some(limit.min(MAX_TEXT)),
            ..Self::new(categorized)
        }
    }

    /// Empties the answer, keeping its buffers (for reuse).
    pub fn clear(&mut self, categorized: bool) {
        self.text.clear();
        self.pairs.clear();
        self.entries.clear();
        self.streams.clear();
        self.warnings.clear();
        self.stats = LogStats::default();
        self.categorized = categorized;
        self.cut = false;
        self.open_entry = false;
    }

    /// Reserves room for `text` bytes of strings and `entries` entries.
    pub fn reserve(&mut self, text: usize, entries: usize) {
        self.text.reserve(text);
        self.entries.reserve(entries);
    }

    /// Entries over all streams.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the answer holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The streams, in answer order.
    pub fn streams(&self) -> impl ExactSizeIterator<Item = StreamRef<'_>> + '_ {
        self.streams.iter().map(|rec| StreamRef { a: self, rec })
    }

    /// The `i`-th stream.
    pub fn stream(&self, i: usize) -> StreamRef<'_> {
        StreamRef {
            a: self,
            rec: &self.streams[i],
        }
    }

    /// Starts a stream; its labels follow, then its entries.
    pub fn begin_stream(&mut self) {
        self.open_entry = false;
        if !self.room_for_record(self.streams.len()) {
            return;
        }
        let (p, e) = (self.pairs.len(), self.entries.len());
        self.streams.push(StreamRec {
            labels: Span::at(p),
            entries: Span::at(e),
        });
    }

    /// Adds a label to the stream begun last (before its first entry).
    pub fn push_stream_label(&mut self, name: &str, value: &str) {
        self.push_stream_label_with(|t| t.push_str(name), value);
    }

    /// [`LogAnswer::push_stream_label`] with the name written by `name`
    /// (names that are built while writing, without a temporary string).
    pub fn push_stream_label_with(&mut self, name: impl FnOnce(&mut String), value: &str) {
        if !self.room_for_record(self.pairs.len()) {
            return;
        }
        let Some(pair) = self.pair(name, value, Category::Metadata) else {
            return;
        };
        self.pairs.push(pair);
        let end = self.pairs.len() as u32;
        if let Some(s) = self.streams.last_mut() {
            s.labels.end = end;
        }
    }

    /// Adds an entry to the stream begun last; its own labels follow.
    /// Its base stream is unknown (hash 0); see [`LogAnswer::push_entry_of`].
    pub fn push_entry(&mut self, ts: i64, line: &str) {
        self.push_entry_of(0, ts, line);
    }

    /// [`LogAnswer::push_entry`] for an entry of the base stream with
    /// Loki's hash `origin` ([`crate::tie::stream_hash`]), which decides
    /// where a later limit cuts among entries of one timestamp.
    pub fn push_entry_of(&mut self, origin: u64, ts: i64, line: &str) {
        self.open_entry = false;
        if !self.room_for_record(self.entries.len()) {
            return;
        }
        let Some(line) = self.push_text(line) else {
            return;
        };
        let p = self.pairs.len();
        self.entries.push(EntryRec {
            ts,
            origin,
            line,
            labels: Span::at(p),
        });
        let end = self.entries.len() as u32;
        if let Some(s) = self.streams.last_mut() {
            s.entries.end = end;
        }
        self.open_entry = true;
    }

    /// Adds a label of `category` to the entry added last (labels in name order).
    pub fn push_entry_label(&mut self, category: Category, name: &str, value: &str) {
        self.push_entry_label_with(category, |t| t.push_str(name), value);
    }

    /// [`LogAnswer::push_entry_label`] with the name written by `name`.
    pub fn push_entry_label_with(
        &mut self,
        category: Category,
        name: impl FnOnce(&mut String),
        value: &str,
    ) {
        let Some(pair) = self.pair(name, value, category) else {
            return;
        };
        self.push_entry_pair(pair);
    }

    /// Writes a label name into the text once, for any number of labels of
    /// this answer to share ([`LogAnswer::push_entry_label_named`]).
    pub(crate) fn push_name(&mut self, name: impl FnOnce(&mut String)) -> NameRef {
        NameRef(self.write_text(name).unwrap_or_default())
    }

    /// [`LogAnswer::push_entry_label`] with a name written before by
    /// [`LogAnswer::push_name`] (since the last [`LogAnswer::clear`]).
    pub(crate) fn push_entry_label_named(
        &mut self,
        category: Category,
        name: NameRef,
        value: &str,
    ) {
        debug_assert!(
            name.0.end as usize <= self.text.len(),
            "a NameRef of another answer"
        );
        let Some(value) = self.push_text(value) else {
            return;
        };
        self.push_entry_pair(Pair {
            name: name.0,
            value,
            category,
        });
    }

    fn push_entry_pair(&mut self, pair: Pair) {
        if !self.room_for_record(self.pairs.len()) {
            return;
        }
        self.pairs.push(pair);
        let end = self.pairs.len() as u32;
        if let Some(e) = self.entries.last_mut() {
            e.labels.end = end;
        }
    }

    /// The labels of the entry added last.
    pub(crate) fn entry_labels_ref(&self) -> LabelsRef {
        LabelsRef(self.entries.last().map_or(Span::default(), |e| e.labels))
    }

    /// Gives the entry added last (which has no labels yet, and gets none
    /// after) the labels of an earlier entry: the same names and values,
    /// and nothing written.
    pub(crate) fn share_entry_labels(&mut self, labels: &LabelsRef) {
        debug_assert!(
            labels.0.end as usize <= self.pairs.len(),
            "a LabelsRef of another answer"
        );
        if self.cut {
            // The entry added last is not the one being built.
            return;
        }
        if let Some(e) = self.entries.last_mut() {
            debug_assert!(e.labels.is_empty(), "the entry has labels of its own");
            e.labels = labels.0;
        }
    }

    /// Whether the answer was cut ([`CUT_WARNING`]).
    pub fn is_cut(&self) -> bool {
        self.cut
    }

    fn pair(
        &mut self,
        name: impl FnOnce(&mut String),
        value: &str,
        category: Category,
    ) -> Option<Pair> {
        let name = self.write_text(name)?;
        let value = self.push_text(value)?;
        Some(Pair {
            name,
            value,
            category,
        })
    }

    fn push_text(&mut self, s: &str) -> Option<Span> {
        self.write_text(|t| t.push_str(s))
    }

    /// Appends what `write` writes to the text; past the limit, takes it
    /// back and cuts the answer.
    fn write_text(&mut self, write: impl FnOnce(&mut String)) -> Option<Span> {
        if self.cut {
            return None;
        }
        let start = self.text.len();
        write(&mut self.text);
        if self.text.len() > self.limit() {
            self.text.truncate(start);
            self.cut_here();
            return None;
        }
        Some(Span::new(start, self.text.len()))
    }

    /// Whether a record vector of length `len` may grow by one; else cuts.
    fn room_for_record(&mut self, len: usize) -> bool {
        if self.cut {
            return false;
        }
        if len >= self.limit() {
            self.cut_here();
            return false;
        }
        true
    }

    fn limit(&self) -> usize {
        self.limit.unwrap_or(MAX_TEXT)
    }

    /// Cuts the answer: takes back the entry whose labels were being
    /// pushed (they may be incomplete) and a stream left without entries
    /// (its labels may be incomplete, or it would be written empty), then
    /// warns. What they wrote stays in the buffers, unreferenced.
    fn cut_here(&mut self) {
        self.cut = true;
        if std::mem::take(&mut self.open_entry) {
            self.entries.pop();
            let end = self.entries.len() as u32;
            if let Some(s) = self.streams.last_mut() {
                s.entries.end = end;
            }
        }
        if self.streams.last().is_some_and(|s| s.entries.is_empty()) {
            self.streams.pop();
        }
        self.warnings.push(CUT_WARNING.to_owned());
    }

    pub(crate) fn str(&self, r: Span) -> &str {
        &self.text[r.range()]
    }
}

/// One stream of a [`LogAnswer`].
#[derive(Debug, Clone, Copy)]
pub struct StreamRef<'a> {
    a: &'a LogAnswer,
    rec: &'a StreamRec,
}

impl<'a> StreamRef<'a> {
    /// The stream's labels, sorted by name.
    pub fn labels(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a str)> + Clone + 'a {
        let a = self.a;
        a.pairs[self.rec.labels.range()]
            .iter()
            .map(move |p| (a.str(p.name), a.str(p.value)))
    }

    /// The stream's entries, in the query's direction.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = EntryRef<'a>> + Clone + 'a {
        let a = self.a;
        a.entries[self.rec.entries.range()]
            .iter()
            .map(move |rec| EntryRef { a, rec, ts: rec.ts })
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.rec.entries.len()
    }

    /// Whether the stream has no entry.
    pub fn is_empty(&self) -> bool {
        self.rec.entries.is_empty()
    }
}

/// One entry of a [`LogAnswer`].
#[derive(Debug, Clone, Copy)]
pub struct EntryRef<'a> {
    a: &'a LogAnswer,
    rec: &'a EntryRec,
    /// Nanoseconds since the epoch.
    pub ts: i64,
}

impl<'a> EntryRef<'a> {
    /// Loki's hash of the entry's base stream (0 when unknown).
    pub fn origin(&self) -> u64 {
        self.rec.origin
    }

    /// The log line.
    pub fn line(&self) -> &'a str {
        self.a.str(self.rec.line)
    }

    /// The entry's own labels (categorized answers), sorted by name.
    pub fn labels(&self) -> impl Iterator<Item = (&'a str, &'a str, Category)> + Clone + 'a {
        let a = self.a;
        a.pairs[self.rec.labels.range()]
            .iter()
            .map(move |p| (a.str(p.name), a.str(p.value), p.category))
    }

    /// The labels of `category`, sorted by name.
    pub fn labels_of(
        &self,
        category: Category,
    ) -> impl Iterator<Item = (&'a str, &'a str)> + Clone + 'a {
        // Filtered before the strings are sliced out of the text.
        let a = self.a;
        a.pairs[self.rec.labels.range()]
            .iter()
            .filter(move |p| p.category == category)
            .map(move |p| (a.str(p.name), a.str(p.value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_entries_go_where_they_were_pushed() {
        let mut a = LogAnswer::new(true);
        a.begin_stream();
        a.push_stream_label("app", "a");
        a.push_entry(2, "l2");
        a.push_entry_label(Category::Metadata, "t", "1");
        a.push_entry_label(Category::Parsed, "x", "y");
        a.push_entry(1, "l1");
        a.begin_stream();
        a.push_stream_label_with(|t| t.push_str("env"), "b");
        a.push_entry(3, "l3");
        assert_eq!(a.len(), 3);
        let s: Vec<_> = a.streams().collect();
        assert_eq!(s[0].labels().collect::<Vec<_>>(), vec![("app", "a")]);
        let e: Vec<_> = s[0].entries().collect();
        assert_eq!((e[0].ts, e[0].line()), (2, "l2"));
        assert_eq!(
            e[0].labels_of(Category::Metadata).collect::<Vec<_>>(),
            vec![("t", "1")]
        );
        assert_eq!(
            e[0].labels_of(Category::Parsed).collect::<Vec<_>>(),
            vec![("x", "y")]
        );
        assert_eq!(e[1].labels().count(), 0);
        assert_eq!(s[1].labels().collect::<Vec<_>>(), vec![("env", "b")]);
        assert_eq!(s[1].entries().map(|e| e.line()).collect::<Vec<_>>(), ["l3"]);
    }

    #[test]
    fn records_are_half_size() {
        assert_eq!(std::mem::size_of::<Span>(), 8);
        assert_eq!(std::mem::size_of::<Pair>(), 20);
        assert_eq!(std::mem::size_of::<EntryRec>(), 32);
        assert_eq!(std::mem::size_of::<StreamRec>(), 16);
    }

    type Labels = Vec<(String, String)>;

    /// Each entry as (its stream's labels, its line, its own labels).
    fn entries_of(a: &LogAnswer) -> Vec<(Labels, String, Labels)> {
        a.streams()
            .flat_map(|s| {
                let stream: Labels = s.labels().map(|(n, v)| (n.into(), v.into())).collect();
                s.entries()
                    .map(|e| {
                        let own = e.labels().map(|(n, v, _)| (n.into(), v.into())).collect();
                        (stream.clone(), e.line().to_owned(), own)
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Builds two streams of three entries with two labels each; `a`
    /// holds what fits.
    fn build(a: &mut LogAnswer) {
        for s in ["s1", "s2"] {
            a.begin_stream();
            a.push_stream_label("app", s);
            for i in 0..3 {
                a.push_entry(i, &format!("{s} line {i}"));
                a.push_entry_label(Category::Metadata, "k", "v");
                let n = a.push_name(|t| t.push_str("trace"));
                a.push_entry_label_named(Category::Parsed, n, "abc");
            }
        }
    }

    #[test]
    fn an_answer_past_its_limit_keeps_its_whole_entries_and_warns() {
        let mut whole = LogAnswer::new(true);
        build(&mut whole);
        let all = entries_of(&whole);
        assert_eq!(all.len(), 6);
        assert!(!whole.is_cut() && whole.warnings.is_empty());
        // Every cut point: a prefix of whole entries, each complete.
        for limit in 0..whole.text.len() {
            let mut a = LogAnswer::with_limit(true, limit);
            build(&mut a);
            assert!(a.is_cut(), "{limit}");
            assert_eq!(a.warnings, [CUT_WARNING], "{limit}");
            let got = entries_of(&a);
            assert_eq!(got[..], all[..got.len()], "{limit}");
            assert!(a.streams().all(|s| !s.is_empty()), "{limit}");
            // Nothing more is taken after the cut.
            a.begin_stream();
            a.push_stream_label("app", "late");
            a.push_entry(9, "late");
            assert_eq!(entries_of(&a), got, "{limit}");
            assert_eq!(a.warnings.len(), 1);
        }
        // A record limit cuts the same way, stream labels included.
        let mut a = LogAnswer::with_limit(true, 5);
        build(&mut a);
        assert!(a.is_cut());
        assert!(entries_of(&a).len() < 6);
        let mut a = LogAnswer::with_limit(false, 2);
        a.begin_stream();
        a.push_stream_label("", "");
        a.push_stream_label("", "");
        a.push_stream_label("", "");
        assert!(a.is_cut());
        assert_eq!(a.pairs.len(), 2);
    }

    #[test]
    fn shared_labels_are_not_given_to_an_earlier_entry_after_a_cut() {
        let mut a = LogAnswer::with_limit(false, 20);
        a.begin_stream();
        a.push_entry(1, "one");
        a.push_entry_label(Category::Metadata, "k", "1");
        let first = a.entry_labels_ref();
        a.push_entry(2, "two");
        a.push_entry_label(Category::Metadata, "k", "2");
        a.push_entry(3, "a line too long to fit");
        a.share_entry_labels(&first);
        assert!(a.is_cut());
        let labels: Vec<Vec<_>> = a
            .stream(0)
            .entries()
            .map(|e| e.labels().map(|(_, v, _)| v).collect())
            .collect();
        assert_eq!(labels, [["1"], ["2"]]);
    }
}
