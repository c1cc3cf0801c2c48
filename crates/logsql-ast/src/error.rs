//! Why a LogQL expression cannot be lowered.

/// Why a LogQL expression cannot be lowered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LowerError {
    /// The construct is valid LogQL but has no exact LogsQL equivalent yet;
    /// the text names the construct.
    #[error("unsupported: {0}")]
    Unsupported(String),
}
