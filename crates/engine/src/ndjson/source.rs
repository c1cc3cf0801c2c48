//! What the decoders read: one VictoriaLogs answer as it came (NDJSON
//! bytes), or rows lokivl already merged ([`RowSet`], a multi-tenant
//! fan-out), behind one trait so that nothing is printed to be parsed again.

use bytes::BytesMut;

use super::objects::{LineError, for_each_object};
use super::rowset::RowSet;
use super::segments::Segments;
use super::{DecodeError, Decoder, Rows};

/// A source of VictoriaLogs rows.
pub trait Source {
    /// Appends the log rows to `out` (see [`Decoder::decode`]).
    ///
    /// # Errors
    /// [`DecodeError`] for a row that is not a log entry.
    fn rows_into<'a>(
        &'a mut self,
        decoder: &mut Decoder,
        out: &mut Rows<'a>,
    ) -> Result<(), DecodeError>;

    /// Calls `each` with every row's string fields (`stats` rows, which may
    /// have no `_time`).
    ///
    /// # Errors
    /// `Err(Ok(_))` for a line that is not a JSON object, `Err(Err(e))`
    /// when `each` fails.
    fn for_each_fields<'a, E>(
        &'a mut self,
        each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
    ) -> Result<(), Result<LineError, E>>;

    /// The size of the answer in bytes, to size the work on it.
    fn byte_len(&self) -> usize;

    /// How many rows (NDJSON lines) it holds, for row budgets.
    fn row_count(&self) -> usize;
}

impl Source for [u8] {
    fn rows_into<'a>(
        &'a mut self,
        decoder: &mut Decoder,
        out: &mut Rows<'a>,
    ) -> Result<(), DecodeError> {
        decoder.decode_ndjson(self, out)
    }

    fn for_each_fields<'a, E>(
        &'a mut self,
        each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
    ) -> Result<(), Result<LineError, E>> {
        for_each_object(self, each)
    }

    fn byte_len(&self) -> usize {
        self.len()
    }

    fn row_count(&self) -> usize {
        memchr::memchr_iter(b'\n', self).count()
    }
}

/// Forwards to the byte slice of a byte container.
macro_rules! bytes_source {
    ($t:ty) => {
        impl Source for $t {
            fn rows_into<'a>(
                &'a mut self,
                decoder: &mut Decoder,
                out: &mut Rows<'a>,
            ) -> Result<(), DecodeError> {
                self[..].rows_into(decoder, out)
            }

            fn for_each_fields<'a, E>(
                &'a mut self,
                each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
            ) -> Result<(), Result<LineError, E>> {
                self[..].for_each_fields(each)
            }

            fn byte_len(&self) -> usize {
                self.len()
            }

            fn row_count(&self) -> usize {
                self[..].row_count()
            }
        }
    };
}

bytes_source!(Vec<u8>);
bytes_source!(BytesMut);

/// One answer of `/select/logsql/query` for a request: a VictoriaLogs body
/// as received (one tenant), or the rows of several tenants merged.
#[derive(Debug)]
pub enum Body {
    /// NDJSON as VictoriaLogs sent it; decoded in place.
    Ndjson(BytesMut),
    /// NDJSON as VictoriaLogs streamed it, in line-aligned segments
    /// ([`Segments`]); decoded in place.
    Segments(Segments),
    /// Rows already decoded and merged by lokivl.
    Rows(RowSet),
}

impl Default for Body {
    fn default() -> Self {
        Self::Ndjson(BytesMut::new())
    }
}

impl From<BytesMut> for Body {
    fn from(b: BytesMut) -> Self {
        Self::Ndjson(b)
    }
}

impl From<Segments> for Body {
    fn from(s: Segments) -> Self {
        Self::Segments(s)
    }
}

impl From<RowSet> for Body {
    fn from(r: RowSet) -> Self {
        Self::Rows(r)
    }
}

impl Source for Body {
    fn rows_into<'a>(
        &'a mut self,
        decoder: &mut Decoder,
        out: &mut Rows<'a>,
    ) -> Result<(), DecodeError> {
        match self {
            Self::Ndjson(b) => b.rows_into(decoder, out),
            Self::Segments(s) => s.rows_into(decoder, out),
            Self::Rows(r) => r.rows_into(decoder, out),
        }
    }

    fn for_each_fields<'a, E>(
        &'a mut self,
        each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
    ) -> Result<(), Result<LineError, E>> {
        match self {
            Self::Ndjson(b) => b.for_each_fields(each),
            Self::Segments(s) => s.for_each_fields(each),
            Self::Rows(r) => r.for_each_fields(each),
        }
    }

    fn byte_len(&self) -> usize {
        match self {
            Self::Ndjson(b) => b.len(),
            Self::Segments(s) => s.byte_len(),
            Self::Rows(r) => r.byte_len(),
        }
    }

    fn row_count(&self) -> usize {
        match self {
            Self::Ndjson(b) => b[..].row_count(),
            Self::Segments(s) => s.row_count(),
            Self::Rows(r) => r.row_count(),
        }
    }
}
