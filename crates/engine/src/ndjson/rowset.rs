//! Rows lokivl built itself (a multi-tenant fan-out merges its tenants'
//! answers into one), read by the decoders as if VictoriaLogs had sent them.
//!
//! All text lives in one buffer and every row and field is a range into
//! it, so a merged answer costs a few growing buffers, not an allocation
//! per row; nothing is printed as JSON to be parsed again.

use std::ops::Range;

use super::objects::LineError;
use super::source::Source;
use super::{DecodeError, Decoder, Row, Rows};

/// Rows of string fields, in order.
#[derive(Debug, Default, Clone)]
pub struct RowSet {
    /// The text of every name and value.
    text: String,
    /// The rows, in answer order.
    rows: Vec<SetRow>,
    /// `(name, value)` ranges into `text` of every row's fields.
    fields: Vec<(Range<usize>, Range<usize>)>,
}

#[derive(Debug, Clone)]
struct SetRow {
    /// `_time` in nanoseconds; `None` without one (`stats` rows).
    time: Option<i64>,
    /// This row's fields: a range into [`RowSet::fields`], sorted by name.
    fields: Range<usize>,
}

impl RowSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many rows it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it holds no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Starts a row with time `time`; the fields pushed next belong to it
    /// until [`RowSet::end_row`].
    pub fn begin_row(&mut self, time: Option<i64>) {
        let at = self.fields.len();
        self.rows.push(SetRow {
            time,
            fields: at..at,
        });
    }

    /// Adds a field to the row being built.
    pub fn push_field(&mut self, name: &str, value: &str) {
        self.push_field_with(name, |t| t.push_str(value));
    }

    /// Adds a field whose value `write` appends to the text buffer (built
    /// in place, e.g. a rewritten stream).
    pub fn push_field_with(&mut self, name: &str, write: impl FnOnce(&mut String)) {
        let n = self.text.len();
        self.text.push_str(name);
        let v = self.text.len();
        write(&mut self.text);
        self.fields.push((n..v, v..self.text.len()));
    }

    /// Ends the row being built: its fields are sorted by name (the order
    /// of a JSON object with sorted keys, which merged rows always had).
    pub fn end_row(&mut self) {
        let Some(row) = self.rows.last_mut() else {
            return;
        };
        row.fields.end = self.fields.len();
        let text = &self.text;
        self.fields[row.fields.clone()]
            .sort_unstable_by(|a, b| text[a.0.clone()].cmp(&text[b.0.clone()]));
    }

    /// Orders the rows by time, oldest first or (`newest_first`) newest
    /// first; rows of equal time keep their order. A row without time
    /// sorts as time 0.
    pub fn sort_by_time(&mut self, newest_first: bool) {
        let key = |r: &SetRow| r.time.unwrap_or(0);
        if newest_first {
            self.rows.sort_by_key(|r| std::cmp::Reverse(key(r)));
        } else {
            self.rows.sort_by_key(key);
        }
    }

    /// Keeps the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        self.rows.truncate(n);
    }

    /// The time of row `i` (`None` without `_time`).
    pub fn time(&self, i: usize) -> Option<i64> {
        self.rows.get(i).and_then(|r| r.time)
    }

    /// The fields of row `i`, sorted by name.
    pub fn fields(&self, i: usize) -> impl Iterator<Item = (&str, &str)> {
        let range = self.rows.get(i).map_or(0..0, |r| r.fields.clone());
        self.fields[range]
            .iter()
            .map(|(n, v)| (&self.text[n.clone()], &self.text[v.clone()]))
    }
}

impl Source for RowSet {
    fn rows_into<'a>(
        &'a mut self,
        _decoder: &mut Decoder,
        out: &mut Rows<'a>,
    ) -> Result<(), DecodeError> {
        let this: &'a RowSet = self;
        for (i, r) in this.rows.iter().enumerate() {
            let start = out.fields.len();
            let mut row = Row {
                time_ns: 0,
                msg: "",
                stream: "{}",
                stream_id: "",
                fields: start..start,
            };
            for (name, value) in this.fields(i) {
                match name {
                    "_time" => {}
                    "_msg" => row.msg = value,
                    "_stream" => row.stream = value,
                    "_stream_id" => row.stream_id = value,
                    _ => out.fields.push((name, value)),
                }
            }
            let Some(t) = r.time else {
                out.fields.truncate(start);
                return Err(DecodeError(format!("line {}: missing _time", i + 1)));
            };
            row.time_ns = t;
            row.fields = start..out.fields.len();
            out.rows.push(row);
        }
        Ok(())
    }

    fn for_each_fields<'a, E>(
        &'a mut self,
        mut each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
    ) -> Result<(), Result<LineError, E>> {
        let this: &'a RowSet = self;
        let mut fields: Vec<(&'a str, &'a str)> = Vec::new();
        for i in 0..this.rows.len() {
            fields.clear();
            fields.extend(this.fields(i));
            each(&fields).map_err(Err)?;
        }
        Ok(())
    }

    fn byte_len(&self) -> usize {
        self.text.len()
    }

    fn row_count(&self) -> usize {
        self.rows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> RowSet {
        let mut s = RowSet::new();
        for (t, msg, tenant) in [
            (Some(3), "c", "a"),
            (Some(1), "a", "b"),
            (Some(3), "d", "b"),
        ] {
            s.begin_row(t);
            s.push_field("_time", "x");
            s.push_field("_msg", msg);
            s.push_field_with("_stream", |out| {
                out.push_str("{__tenant_id__=\"");
                out.push_str(tenant);
                out.push_str("\"}");
            });
            s.push_field("zeta", "z");
            s.push_field("__tenant_id__", tenant);
            s.end_row();
        }
        s
    }

    fn msgs(s: &mut RowSet) -> Vec<(i64, String)> {
        let mut rows = Rows::new();
        let mut dec = Decoder::new();
        s.rows_into(&mut dec, &mut rows).unwrap();
        rows.rows
            .iter()
            .map(|r| (r.time_ns, r.msg.to_owned()))
            .collect()
    }

    #[test]
    fn rows_decode_like_ndjson_with_sorted_fields() {
        let mut s = set();
        let mut rows = Rows::new();
        s.rows_into(&mut Decoder::new(), &mut rows).unwrap();
        let r = &rows.rows[0];
        assert_eq!(
            (r.time_ns, r.msg, r.stream),
            (3, "c", r#"{__tenant_id__="a"}"#)
        );
        assert_eq!(rows.fields_of(r), &[("__tenant_id__", "a"), ("zeta", "z")]);
    }

    #[test]
    fn sorting_is_stable_and_direction_aware() {
        let mut s = set();
        s.sort_by_time(true);
        assert_eq!(
            msgs(&mut s),
            [(3, "c".into()), (3, "d".into()), (1, "a".into())]
        );
        s.sort_by_time(false);
        assert_eq!(
            msgs(&mut s),
            [(1, "a".into()), (3, "c".into()), (3, "d".into())]
        );
        s.truncate(2);
        assert_eq!(s.len(), 2);
        assert_eq!(msgs(&mut s), [(1, "a".into()), (3, "c".into())]);
    }

    #[test]
    fn rows_without_time_are_stats_rows_not_log_rows() {
        let mut s = RowSet::new();
        s.begin_row(None);
        s.push_field("n", "5");
        s.end_row();
        let mut seen = Vec::new();
        s.for_each_fields(|f| {
            seen.push(f.to_vec());
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(seen, [vec![("n", "5")]]);
        let mut rows = Rows::new();
        let err = s.rows_into(&mut Decoder::new(), &mut rows).unwrap_err();
        assert_eq!(err.0, "line 1: missing _time");
    }
}
