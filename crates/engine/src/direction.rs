//! The order of entries in a log query answer.

/// Loki's `direction` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Direction {
    /// Newest first (Loki's default).
    #[default]
    Backward,
    /// Oldest first.
    Forward,
}
