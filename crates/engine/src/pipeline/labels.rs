//! A Loki-like labels builder: the label set of one entry as the pipeline
//! changes it, with Loki's three categories and its precedence rules
//! (grafana/loki `pkg/logql/log/labels.go`).
//!
//! * `base` holds the stream labels; `add` holds labels set by stages per
//!   category; `del` names removed labels.
//! * Setting a parsed label removes the same name from structured metadata
//!   and from the added stream labels; metadata does not replace a parsed
//!   label; a stream label does not replace either.
//! * `get` looks in the added labels (stream, metadata, parsed order), then
//!   honours deletions, then reads a non-empty base label.
//! * `__error__` / `__error_details__` live apart and are reported as parsed.

/// Which category a label belongs to, as in Loki's `categorize-labels` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// An indexed stream label.
    Stream = 0,
    /// Structured metadata stored with the entry.
    Metadata = 1,
    /// A label produced by a parser or formatter.
    Parsed = 2,
}

/// The name of Loki's error label.
pub const ERROR: &str = "__error__";
/// The name of Loki's error-details label.
pub const ERROR_DETAILS: &str = "__error_details__";
/// The label Loki's parsers add to an entry with a parser error when the
/// query asks for `__error__` (grouped on or filtered): such a metric sample
/// does not fail the query.
pub const PRESERVE_ERROR: &str = "__preserve_error__";
/// The suffix Loki gives a parsed label whose name is already a label.
pub const EXTRACTED: &str = "_extracted";

/// A list of labels that keeps the allocations of cleared entries for reuse.
/// Lookups are linear: an entry has a handful of labels, and a scan with
/// length-first string compares beats hashing at that size (a fingerprint
/// per slot was tried and measured slower).
#[derive(Debug, Default, Clone)]
pub(crate) struct Slots {
    items: Vec<(String, String)>,
    len: usize,
}

impl Slots {
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    pub(crate) fn as_slice(&self) -> &[(String, String)] {
        &self.items[..self.len]
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.as_slice().iter().position(|(n, _)| n == name)
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.position(name).map(|i| self.items[i].1.as_str())
    }

    /// Sets `name` to `value`, replacing an existing value.
    pub(crate) fn set(&mut self, name: &str, value: &str) {
        if let Some(i) = self.position(name) {
            set_string(&mut self.items[i].1, value);
            return;
        }
        self.push(name, value);
    }

    /// Adds `name` (with an empty value) unless present.
    pub(crate) fn insert(&mut self, name: &str) {
        if !self.contains(name) {
            self.push(name, "");
        }
    }

    /// Appends a new slot. The slot past the end usually still holds the
    /// name the previous entry put there (rows tend to share their keys), so
    /// an equal name is kept instead of copied again.
    fn push(&mut self, name: &str, value: &str) {
        if self.len == self.items.len() {
            self.items.push((String::new(), String::new()));
        }
        let (n, v) = &mut self.items[self.len];
        if n != name {
            set_string(n, name);
        }
        set_string(v, value);
        self.len += 1;
    }

    fn remove(&mut self, name: &str) {
        if let Some(i) = self.position(name) {
            // Keep the removed slot's allocations past the end.
            self.items[i..self.len].rotate_left(1);
            self.len -= 1;
        }
    }
}

/// The labels of one entry while the pipeline runs.
#[derive(Debug, Default, Clone)]
pub struct LabelsBuilder {
    base: Vec<(String, String)>,
    add: [Slots; 3],
    del: Vec<String>,
    err: String,
    err_details: String,
    /// Parsed names recorded since the entry started (Loki's parser hints
    /// `RecordExtracted`): later parsers skip these keys. Names still in
    /// `add[Parsed]` are not repeated here; only deleted ones are kept.
    extracted: Slots,
}

impl LabelsBuilder {
    /// Creates an empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a new entry whose stream labels are `stream` (Loki names).
    pub fn reset<'a>(&mut self, stream: impl IntoIterator<Item = (&'a str, &'a str)>) {
        let mut n = 0;
        for (k, v) in stream {
            if n == self.base.len() {
                self.base.push((String::new(), String::new()));
            }
            // Consecutive rows mostly share their stream: compare before copying.
            let (bk, bv) = &mut self.base[n];
            if bk != k {
                set_string(bk, k);
            }
            if bv != v {
                set_string(bv, v);
            }
            n += 1;
        }
        self.base.truncate(n);
        for a in &mut self.add {
            a.clear();
        }
        self.del.clear();
        self.err.clear();
        self.err_details.clear();
        self.extracted.clear();
    }

    /// Whether a parser already produced `name` for this entry; Loki's
    /// parsers then leave it alone, so the first parser wins.
    pub fn extracted(&self, name: &str) -> bool {
        self.add[Category::Parsed as usize].contains(name) || self.extracted.contains(name)
    }

    /// Adds structured metadata the way Loki's `Add` does: a name that is a
    /// stream label gets `_extracted`; error names set the error fields.
    pub fn add_metadata(&mut self, name: &str, value: &str) {
        if self.base_has(name) {
            let mut n = String::with_capacity(name.len() + EXTRACTED.len());
            n.push_str(name);
            n.push_str(EXTRACTED);
            self.set(Category::Metadata, &n, value);
            return;
        }
        match name {
            ERROR => set_string(&mut self.err, value),
            ERROR_DETAILS => set_string(&mut self.err_details, value),
            _ => self.set(Category::Metadata, name, value),
        }
    }

    /// Whether the stream labels hold `name`.
    pub fn base_has(&self, name: &str) -> bool {
        self.base.iter().any(|(n, _)| n == name)
    }

    /// Whether `name` was set in `category` by a stage (or as metadata).
    pub fn has_in(&self, name: &str, category: Category) -> bool {
        self.add[category as usize].contains(name)
    }

    /// Whether a parser must rename `name` to `name_extracted`.
    pub fn collides(&self, name: &str) -> bool {
        self.base_has(name) || self.has_in(name, Category::Metadata)
    }

    /// The value of `name`, as Loki's `Get`: `None` when missing (an empty
    /// stream label counts as missing, an empty added label does not).
    pub fn get(&self, name: &str) -> Option<&str> {
        for a in &self.add {
            if let Some(v) = a.get(name) {
                return Some(v);
            }
        }
        if self.del.iter().any(|d| d == name) {
            return None;
        }
        self.base
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    /// The value of `name` for string matchers: the error label reads the
    /// error, a missing label reads `""`.
    pub fn value(&self, name: &str) -> &str {
        if name == ERROR {
            return &self.err;
        }
        self.get(name).unwrap_or("")
    }

    /// The category `name` would be reported in, if it exists.
    pub fn category_of(&self, name: &str) -> Option<Category> {
        [Category::Stream, Category::Metadata, Category::Parsed]
            .into_iter()
            .find(|&c| self.add[c as usize].contains(name))
            .or_else(|| self.get(name).map(|_| Category::Stream))
    }

    /// Sets a label with Loki's category precedence.
    pub fn set(&mut self, category: Category, name: &str, value: &str) {
        match category {
            Category::Parsed => {
                self.add[Category::Metadata as usize].remove(name);
                self.add[Category::Stream as usize].remove(name);
            }
            Category::Metadata => {
                self.add[Category::Stream as usize].remove(name);
                if self.has_in(name, Category::Parsed) {
                    return;
                }
            }
            Category::Stream => {
                if self.has_in(name, Category::Metadata) || self.has_in(name, Category::Parsed) {
                    return;
                }
            }
        }
        self.add[category as usize].set(name, value);
    }

    /// Deletes a label from every category and hides the stream label.
    pub fn del(&mut self, name: &str) {
        // A parsed name stays "extracted" after its label is gone.
        if self.add[Category::Parsed as usize].contains(name) {
            self.extracted.insert(name);
        }
        for a in &mut self.add {
            a.remove(name);
        }
        self.del.push(name.to_owned());
    }

    /// Sets `__error__` (and `__error_details__` when `details` is given).
    pub fn set_err(&mut self, err: &str, details: Option<&str>) {
        set_string(&mut self.err, err);
        if let Some(d) = details {
            set_string(&mut self.err_details, d);
        }
    }

    /// The current error, `""` when none.
    pub fn err(&self) -> &str {
        &self.err
    }

    /// The current error details, `""` when none.
    pub fn err_details(&self) -> &str {
        &self.err_details
    }

    /// Whether an error is set.
    pub fn has_err(&self) -> bool {
        !self.err.is_empty()
    }

    /// Clears `__error__`.
    pub fn reset_err(&mut self) {
        self.err.clear();
    }

    /// Clears `__error_details__`.
    pub fn reset_err_details(&mut self) {
        self.err_details.clear();
    }

    /// Every label with its category, unsorted, as Loki's `UnsortedLabels`
    /// then `LabelsResult` categorise them (error labels are parsed). The
    /// names and values are borrowed from the builder, so a caller may keep
    /// them until it next changes the builder.
    pub fn for_each<'s>(&'s self, mut f: impl FnMut(&'s str, &'s str, Category)) {
        let meta = &self.add[Category::Metadata as usize];
        let parsed = &self.add[Category::Parsed as usize];
        let stream_add = &self.add[Category::Stream as usize];
        for (n, v) in &self.base {
            if self.del.iter().any(|d| d == n) || meta.contains(n) || parsed.contains(n) {
                continue;
            }
            f(n, stream_add.get(n).unwrap_or(v), Category::Stream);
        }
        for (n, v) in stream_add.as_slice() {
            if !self.base_has(n) && !meta.contains(n) && !parsed.contains(n) {
                f(n, v, Category::Stream);
            }
        }
        for (n, v) in meta.as_slice() {
            if !parsed.contains(n) {
                f(n, v, Category::Metadata);
            }
        }
        for (n, v) in parsed.as_slice() {
            f(n, v, Category::Parsed);
        }
        if !self.err.is_empty() {
            f(ERROR, &self.err, Category::Parsed);
        }
        if !self.err_details.is_empty() {
            f(ERROR_DETAILS, &self.err_details, Category::Parsed);
        }
    }
}

fn set_string(s: &mut String, v: &str) {
    s.clear();
    s.push_str(v);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(b: &LabelsBuilder) -> Vec<(String, String, Category)> {
        let mut v = Vec::new();
        b.for_each(|n, val, c| v.push((n.to_owned(), val.to_owned(), c)));
        v.sort();
        v
    }

    #[test]
    fn parsed_beats_metadata_beats_stream() {
        let mut b = LabelsBuilder::new();
        b.reset([("app", "api"), ("env", "")]);
        b.add_metadata("app", "meta");
        b.add_metadata("trace_id", "t1");
        assert_eq!(b.get("app"), Some("api"));
        assert_eq!(b.get("app_extracted"), Some("meta"));
        assert_eq!(b.get("env"), None, "an empty stream label is missing");
        b.set(Category::Parsed, "trace_id", "p");
        b.set(Category::Metadata, "trace_id", "m");
        assert_eq!(b.get("trace_id"), Some("p"));
        assert_eq!(
            all(&b),
            vec![
                ("app".into(), "api".into(), Category::Stream),
                ("app_extracted".into(), "meta".into(), Category::Metadata),
                ("env".into(), "".into(), Category::Stream),
                ("trace_id".into(), "p".into(), Category::Parsed),
            ]
        );
    }

    #[test]
    fn parsed_names_stay_extracted_after_delete() {
        let mut b = LabelsBuilder::new();
        b.reset([("app", "api")]);
        assert!(!b.extracted("level"));
        b.set(Category::Parsed, "level", "info");
        b.set(Category::Metadata, "trace_id", "t");
        assert!(b.extracted("level"));
        assert!(!b.extracted("trace_id"), "metadata is not extracted");
        b.del("level");
        assert_eq!(b.get("level"), None);
        assert!(b.extracted("level"), "deleting keeps the parser hint");
        b.reset([("app", "api")]);
        assert!(!b.extracted("level"), "a new entry starts clean");
    }

    #[test]
    fn slots_set_find_and_remove() {
        let mut s = Slots::default();
        let long = "a_rather_long_label_name_x";
        for n in [
            "",
            "a",
            "abcdefg",
            "abcdefgh",
            long,
            "a_rather_long_label_name_y",
        ] {
            s.set(n, n);
        }
        for n in [
            "",
            "a",
            "abcdefg",
            "abcdefgh",
            long,
            "a_rather_long_label_name_y",
        ] {
            assert_eq!(s.get(n), Some(n), "{n:?}");
        }
        for n in [
            "b",
            "abcdefh",
            "abcdefgi",
            "a_rather_long_label_name_z",
            "\0",
        ] {
            assert!(!s.contains(n), "{n:?}");
        }
        s.remove("abcdefg");
        assert!(!s.contains("abcdefg"));
        assert_eq!(s.get(long), Some(long));
        s.set("new", "v");
        assert_eq!(s.as_slice().len(), 6);
        s.clear();
        assert!(!s.contains("a"));
        s.set("b", "1");
        assert_eq!(s.as_slice(), [("b".to_owned(), "1".to_owned())]);
    }

    #[test]
    fn delete_and_errors() {
        let mut b = LabelsBuilder::new();
        b.reset([("app", "api")]);
        b.set(Category::Parsed, "x", "");
        assert_eq!(b.get("x"), Some(""), "an empty parsed label exists");
        b.del("app");
        assert_eq!(b.get("app"), None);
        b.set_err("JSONParserErr", Some("boom"));
        assert_eq!(b.value(ERROR), "JSONParserErr");
        let v = all(&b);
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].0, ERROR);
        assert_eq!(v[1].0, ERROR_DETAILS);
        assert_eq!(v[1].2, Category::Parsed);
        b.reset([("a", "1")]);
        assert_eq!(all(&b), vec![("a".into(), "1".into(), Category::Stream)]);
    }
}
