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

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use bytes::Bytes;
    use engine::ndjson::{Decoder, Rows, Source};
    use hyper::body::Frame;

    use super::*;

    /// A body that yields `chunks` one frame each, then `fail` if set.
    struct Chunks {
        chunks: VecDeque<Bytes>,
        fail: Option<std::io::Error>,
    }

    impl hyper::body::Body for Chunks {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
            if let Some(c) = self.chunks.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(c))));
            }
            Poll::Ready(self.fail.take().map(Err))
        }
    }

    fn body(text: &str, chunk: usize) -> Chunks {
        Chunks {
            chunks: text
                .as_bytes()
                .chunks(chunk)
                .map(Bytes::copy_from_slice)
                .collect(),
            fail: None,
        }
    }

    fn lines(n: usize) -> String {
        (0..n)
            .map(|i| format!("{{\"_time\":\"2026-11-22T04:21:07Z\",\"_msg\":\"line {i}\"}}\n"))
            .collect()
    }

    #[tokio::test]
    async fn reads_every_line_up_to_the_byte_bound() {
        let text = lines(5000);
        let mut seg = read(body(&text, 1000), text.len(), None).await.unwrap();
        assert_eq!((seg.byte_len(), seg.row_count()), (text.len(), 5000));
        assert!(seg.segment_count() > 1);
        let mut rows = Rows::new();
        Decoder::new().decode(&mut seg, &mut rows).unwrap();
        assert_eq!(rows.rows.len(), 5000);
        assert_eq!(rows.rows[4999].msg, "line 4999");
    }

    #[tokio::test]
    async fn one_byte_past_the_bound_is_refused() {
        let text = lines(100);
        let err = read(body(&text, 333), text.len() - 1, None)
            .await
            .unwrap_err();
        assert!(
            matches!(err, BackendError::TooLarge { declared: None, .. }),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn a_broken_body_is_a_body_error() {
        let mut b = body(&lines(10), 50);
        b.fail = Some(std::io::Error::other("connection reset"));
        let err = read(b, 1 << 20, None).await.unwrap_err();
        assert!(
            matches!(&err, BackendError::Body(m) if m.contains("connection reset")),
            "{err:?}"
        );
    }
}
