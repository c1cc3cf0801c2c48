//! Why the engine could not answer, kept typed until the service maps it
//! once to Loki's status and text (`proxy::error`).

use crate::work::Stopped;

/// Why a log or Drilldown evaluation failed. The metric operators have
/// their own [`crate::metric::EngineError`], whose texts are Loki's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The request is one Loki rejects with 400; the text is Loki's wording.
    #[error("{0}")]
    BadRequest(String),
    /// A VictoriaLogs answer the engine cannot read (a malformed row or
    /// stream): the service answers 502 with this text.
    #[error("{0}")]
    Backend(String),
    /// The request's deadline passed (or its caller left) mid-way.
    #[error(transparent)]
    Stopped(#[from] Stopped),
}

impl From<logql_parser::ParseError> for Error {
    fn from(e: logql_parser::ParseError) -> Self {
        Self::BadRequest(e.to_string())
    }
}
