//! Durations as LogQL writes them (`5m`, `1h30m`, `250ms`).
//!
//! Loki uses Go's `time.Duration` (signed nanoseconds) and Prometheus-style
//! units; `humantime` disagrees on units such as `y` and `M`, so LogQL
//! durations get their own type.

/// A signed span of time in nanoseconds, as Go's `time.Duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub i64);

impl Duration {
    /// The span in nanoseconds.
    pub fn as_nanos(self) -> i64 {
        self.0
    }

    /// The span in (fractional) seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}
