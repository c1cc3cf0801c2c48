//! Two answers read as one: the rows of a first answer away from one
//! timestamp, then every row of a second answer that holds that timestamp
//! whole.
//!
//! A log query cut by `limit` through entries that share a timestamp needs
//! all of that timestamp's entries to keep the ones Loki keeps
//! ([`crate::tie`]). The first answer already holds every entry on the near
//! side of the cut, so only the tied timestamp is read again, not the whole
//! range up to it.

use super::objects::LineError;
use super::source::Source;
use super::{DecodeError, Decoder, Rows};

/// `first` without its rows at `tied_ns`, followed by `second` (the rows at
/// `tied_ns`, read whole).
#[derive(Debug)]
pub struct Spliced<A, B> {
    /// The answer cut through `tied_ns`.
    pub first: A,
    /// Every row at `tied_ns`.
    pub second: B,
    /// The timestamp the cut went through, in nanoseconds.
    pub tied_ns: i64,
}

impl<A: Source, B: Source> Source for Spliced<A, B> {
    fn rows_into<'a>(
        &'a mut self,
        decoder: &mut Decoder,
        out: &mut Rows<'a>,
    ) -> Result<(), DecodeError> {
        let from = out.rows.len();
        self.first.rows_into(decoder, out)?;
        let tied = self.tied_ns;
        // Drop the first answer's tied rows (rows `out` held before stay);
        // their fields stay unreferenced in `out.fields`, which rows index
        // by range.
        let mut i = 0;
        out.rows.retain(|r| {
            i += 1;
            i <= from || r.time_ns != tied
        });
        self.second.rows_into(decoder, out)
    }

    fn for_each_fields<'a, E>(
        &'a mut self,
        mut each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
    ) -> Result<(), Result<LineError, E>> {
        let tied = self.tied_ns;
        self.first.for_each_fields(|fields| {
            let at_tie = fields
                .iter()
                .any(|(n, v)| *n == "_time" && go::time::parse_rfc3339_nanos(v) == Some(tied));
            if at_tie { Ok(()) } else { each(fields) }
        })?;
        self.second.for_each_fields(each)
    }

    fn byte_len(&self) -> usize {
        self.first.byte_len() + self.second.byte_len()
    }

    fn row_count(&self) -> usize {
        self.first.row_count() + self.second.row_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t: &str, msg: &str) -> String {
        format!(r#"{{"_time":"{t}","_stream":"{{a=\"b\"}}","_msg":"{msg}","f":"{msg}"}}"#) + "\n"
    }

    /// The first answer's rows at the tie give way to the second answer's,
    /// through both decoding paths.
    #[test]
    fn the_tied_timestamp_comes_from_the_second_answer_only() {
        let first = line("2026-01-01T00:00:02Z", "newer") + &line("2026-01-01T00:00:01Z", "cut");
        let second = line("2026-01-01T00:00:01Z", "tie-a") + &line("2026-01-01T00:00:01Z", "tie-b");
        let tied_ns = go::time::parse_rfc3339_nanos("2026-01-01T00:00:01Z").unwrap();
        let mut s = Spliced {
            first: first.clone().into_bytes(),
            second: second.clone().into_bytes(),
            tied_ns,
        };
        let mut decoder = Decoder::new();
        let mut rows = Rows::new();
        s.rows_into(&mut decoder, &mut rows).unwrap();
        let msgs: Vec<&str> = rows.rows.iter().map(|r| r.msg).collect();
        assert_eq!(msgs, ["newer", "tie-a", "tie-b"]);
        assert_eq!(rows.fields_of(&rows.rows[1]), [("f", "tie-a")]);

        let mut s = Spliced {
            first: first.into_bytes(),
            second: second.into_bytes(),
            tied_ns,
        };
        let mut seen = Vec::new();
        s.for_each_fields(|fields| {
            seen.push(fields.iter().find(|(n, _)| *n == "f").unwrap().1.to_owned());
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(seen, ["newer", "tie-a", "tie-b"]);
    }
}
