//! The evaluation steps of a query: `start`, `start + step`, … up to and including `end`.

/// Evaluation times in nanoseconds; an instant query is a grid of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// First evaluation time.
    pub start: i64,
    /// Distance between evaluation times (> 0).
    pub step: i64,
    /// Number of evaluation times (≥ 1).
    pub len: u32,
}

impl Grid {
    /// The steps of a range query; `end` is included when it falls on a step.
    pub fn range(start: i64, end: i64, step: i64) -> Self {
        let step = step.max(1);
        let n = if end < start {
            0
        } else {
            // Saturating: with --max-query-length 0 the bounds may be far apart.
            (end.saturating_sub(start) / step).saturating_add(1)
        };
        Self {
            start,
            step,
            len: u32::try_from(n).unwrap_or(u32::MAX),
        }
    }

    /// A single evaluation at `time`.
    pub fn instant(time: i64) -> Self {
        Self {
            start: time,
            step: 1,
            len: 1,
        }
    }

    /// The time of step `i`.
    pub fn time(&self, i: u32) -> i64 {
        self.start + i64::from(i) * self.step
    }

    /// The last evaluation time.
    pub fn last(&self) -> i64 {
        self.time(self.len.saturating_sub(1))
    }

    /// Whether this is an instant evaluation.
    pub fn is_instant(&self) -> bool {
        self.len == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_apart_bounds_do_not_overflow() {
        let g = Grid::range(i64::MIN + 1, i64::MAX, 1);
        assert_eq!(g.len, u32::MAX);
    }

    #[test]
    fn range_includes_end_on_step() {
        let g = Grid::range(100, 130, 15);
        assert_eq!(g.len, 3);
        assert_eq!(g.last(), 130);
        assert_eq!(Grid::range(100, 129, 15).len, 2);
        assert_eq!(Grid::range(100, 100, 15).len, 1);
    }
}
