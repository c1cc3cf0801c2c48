//! What the decoders read: one VictoriaLogs answer as it came (NDJSON
//! bytes), or rows lokivl already merged ([`super::RowSet`], a
//! multi-tenant fan-out), behind one trait so that nothing is printed to be
//! parsed again. [`super::Body`] holds any of them.

use bytes::BytesMut;

use super::objects::{LineError, for_each_object};
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
