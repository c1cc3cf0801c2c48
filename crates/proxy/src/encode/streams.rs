//! NDJSON from VictoriaLogs to Loki's `streams` answer.
//! STUB: the codec helper replaces this file; the signature is the contract.

use crate::direction::Direction;

/// How to build a streams answer.
#[derive(Debug, Clone)]
pub struct StreamsOptions {
    /// Entry order inside each stream.
    pub direction: Direction,
    /// Maximum entries over all streams.
    pub limit: usize,
    /// `X-Loki-Response-Encoding-Flags: categorize-labels` was sent.
    pub categorize: bool,
    /// Fields with this prefix are parser output (from the plan).
    pub parsed_prefix: Option<&'static str>,
}

/// Counters for the `stats` object and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamsSummary {
    /// Entries written.
    pub entries: usize,
    /// Streams written.
    pub streams: usize,
    /// Bytes of log lines written.
    pub bytes: usize,
}

/// Why a backend answer could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid response from VictoriaLogs: {0}")]
pub struct DecodeError(pub String);

/// Decodes VictoriaLogs NDJSON (modified in place by simd-json) and writes the whole
/// Loki `query_range` JSON body (envelope, `streams`, `stats`) to `out`.
///
/// # Errors
/// [`DecodeError`] on malformed NDJSON.
pub fn encode_streams(
    _ndjson: &mut [u8],
    _opts: &StreamsOptions,
    _out: &mut Vec<u8>,
) -> Result<StreamsSummary, DecodeError> {
    Err(DecodeError("stub".into()))
}
