//! Reading an NDJSON answer as it streams ([`Backend::send_ndjson`]).
//!
//! Each chunk is appended to a line-aligned segment as it arrives
//! ([`SegmentWriter`]); only a partial last line is ever copied. The byte
//! bound is checked before each chunk is kept, so an answer over
//! `max_response_bytes` is refused once it passes the bound, with at most
//! the bound in memory.
//!
//! [`Backend::send_ndjson`]: super::Backend::send_ndjson

use engine::ndjson::{SegmentWriter, Segments};
use http_body_util::BodyExt;

use super::{BackendError, error_chain};

/// Reads `body` (at most `limit` bytes; `declared` is its Content-Length).
///
/// # Errors
/// [`BackendError::TooLarge`] past `limit`, [`BackendError::Body`] when the
/// body breaks (reset, truncated chunked encoding).
pub(super) async fn read<B>(
    mut body: B,
    limit: usize,
    declared: Option<usize>,
) -> Result<Segments, BackendError>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Unpin,
    B::Error: std::error::Error + 'static,
{
    let mut out = SegmentWriter::new(declared.map(|n| n.min(FIRST_DECLARED_MAX)));
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BackendError::Body(error_chain(&e)))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if data.len() > limit - out.len() {
            return Err(BackendError::TooLarge {
                limit,
                declared: None,
            });
        }
        out.push(&data);
    }
    Ok(out.finish())
}

/// The largest first buffer a declared length gets up front: a larger
/// answer is segmented like an undeclared one, so a Content-Length alone
/// never reserves memory the data has not filled.
const FIRST_DECLARED_MAX: usize = 8 << 20;
