//! Label sets: parsing VictoriaLogs `_stream` values and printing Loki label strings.
//! STUB: the codec helper replaces this file.

use std::borrow::Cow;

/// Why a `_stream` value could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid _stream value: {0}")]
pub struct StreamParseError(pub String);

/// Parses a VictoriaLogs `_stream` value such as `{app="api",env="prod"}` into label pairs.
///
/// # Errors
/// [`StreamParseError`] when the value is not a label set.
pub fn parse_stream(_s: &str) -> Result<Vec<(Cow<'_, str>, Cow<'_, str>)>, StreamParseError> {
    Err(StreamParseError("stub".into()))
}
