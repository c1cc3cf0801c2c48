//! [`Body`]: the one answer of `/select/logsql/query` the service hands the
//! engine, in whichever form it arrived (whole, streamed in segments, or
//! merged rows), decoded through [`Source`].

use bytes::BytesMut;

use super::objects::LineError;
use super::rowset::RowSet;
use super::segments::Segments;
use super::source::Source;
use super::{DecodeError, Decoder, Rows};

/// One answer of `/select/logsql/query` for a request: a VictoriaLogs body
/// as received (one tenant), or the rows of several tenants merged.
#[derive(Debug, Clone)]
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
