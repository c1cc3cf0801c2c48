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

/// A range of [`LogAnswer::text`] or of a record vector.
pub(crate) type Span = Range<usize>;

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
pub(crate) struct NameRef {
    start: usize,
    end: usize,
}

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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
}

impl LogAnswer {
    /// An empty answer.
    pub fn new(categorized: bool) -> Self {
        Self {
            categorized,
            ..Self::default()
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
        let (p, e) = (self.pairs.len(), self.entries.len());
        self.streams.push(StreamRec {
            labels: p..p,
            entries: e..e,
        });
    }

    /// Adds a label to the stream begun last (before its first entry).
    pub fn push_stream_label(&mut self, name: &str, value: &str) {
        self.push_stream_label_with(|t| t.push_str(name), value);
    }

    /// [`LogAnswer::push_stream_label`] with the name written by `name`
    /// (names that are built while writing, without a temporary string).
    pub fn push_stream_label_with(&mut self, name: impl FnOnce(&mut String), value: &str) {
        let pair = self.pair(name, value, Category::Metadata);
        self.pairs.push(pair);
        if let Some(s) = self.streams.last_mut() {
            s.labels.end = self.pairs.len();
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
        let line = self.push_text(line);
        let p = self.pairs.len();
        self.entries.push(EntryRec {
            ts,
            origin,
            line,
            labels: p..p,
        });
        if let Some(s) = self.streams.last_mut() {
            s.entries.end = self.entries.len();
        }
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
        let pair = self.pair(name, value, category);
        self.pairs.push(pair);
        if let Some(e) = self.entries.last_mut() {
            e.labels.end = self.pairs.len();
        }
    }

    /// Writes a label name into the text once, for any number of labels of
    /// this answer to share ([`LogAnswer::push_entry_label_named`]).
    pub(crate) fn push_name(&mut self, name: impl FnOnce(&mut String)) -> NameRef {
        let start = self.text.len();
        name(&mut self.text);
        NameRef {
            start,
            end: self.text.len(),
        }
    }

    /// [`LogAnswer::push_entry_label`] with a name written before by
    /// [`LogAnswer::push_name`] (since the last [`LogAnswer::clear`]).
    pub(crate) fn push_entry_label_named(
        &mut self,
        category: Category,
        name: NameRef,
        value: &str,
    ) {
        debug_assert!(name.end <= self.text.len(), "a NameRef of another answer");
        let value = self.push_text(value);
        self.pairs.push(Pair {
            name: name.start..name.end,
            value,
            category,
        });
        if let Some(e) = self.entries.last_mut() {
            e.labels.end = self.pairs.len();
        }
    }

    /// The labels of the entry added last.
    pub(crate) fn entry_labels_ref(&self) -> LabelsRef {
        LabelsRef(self.entries.last().map_or(0..0, |e| e.labels.clone()))
    }

    /// Gives the entry added last (which has no labels yet, and gets none
    /// after) the labels of an earlier entry: the same names and values,
    /// and nothing written.
    pub(crate) fn share_entry_labels(&mut self, labels: &LabelsRef) {
        debug_assert!(
            labels.0.end <= self.pairs.len(),
            "a LabelsRef of another answer"
        );
        if let Some(e) = self.entries.last_mut() {
            debug_assert!(e.labels.is_empty(), "the entry has labels of its own");
            e.labels = labels.0.clone();
        }
    }

    /// Copies `entry` (from this or another answer) into the stream begun last.
    pub fn push_entry_from(&mut self, entry: &EntryRef<'_>) {
        self.push_entry_of(entry.origin(), entry.ts, entry.line());
        for (n, v, c) in entry.labels() {
            self.push_entry_label(c, n, v);
        }
    }

    fn pair(&mut self, name: impl FnOnce(&mut String), value: &str, category: Category) -> Pair {
        let start = self.text.len();
        name(&mut self.text);
        let name = start..self.text.len();
        let value = self.push_text(value);
        Pair {
            name,
            value,
            category,
        }
    }

    fn push_text(&mut self, s: &str) -> Span {
        let start = self.text.len();
        self.text.push_str(s);
        start..self.text.len()
    }

    pub(crate) fn str(&self, r: &Span) -> &str {
        &self.text[r.clone()]
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
        a.pairs[self.rec.labels.clone()]
            .iter()
            .map(move |p| (a.str(&p.name), a.str(&p.value)))
    }

    /// The stream's entries, in the query's direction.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = EntryRef<'a>> + Clone + 'a {
        let a = self.a;
        a.entries[self.rec.entries.clone()]
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
        self.a.str(&self.rec.line)
    }

    /// The entry's own labels (categorized answers), sorted by name.
    pub fn labels(&self) -> impl Iterator<Item = (&'a str, &'a str, Category)> + Clone + 'a {
        let a = self.a;
        a.pairs[self.rec.labels.clone()]
            .iter()
            .map(move |p| (a.str(&p.name), a.str(&p.value), p.category))
    }

    /// The labels of `category`, sorted by name.
    pub fn labels_of(
        &self,
        category: Category,
    ) -> impl Iterator<Item = (&'a str, &'a str)> + Clone + 'a {
        // Filtered before the strings are sliced out of the text.
        let a = self.a;
        a.pairs[self.rec.labels.clone()]
            .iter()
            .filter(move |p| p.category == category)
            .map(move |p| (a.str(&p.name), a.str(&p.value)))
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
}
