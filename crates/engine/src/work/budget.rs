//! Per-request bounds on rows read, shared by every window and every range
//! aggregation of one request.
//!
//! A long range is cut into windows that are evaluated in parallel and
//! cached one by one (the service's `window`). Were the bounds per window, a
//! request over N windows could read N times as much as an unsplit one. A
//! request creates one [`Budgets`] and hands a clone (a shared counter) to
//! each of its windows; rows served from the cache are not read, so they
//! cost nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Rows read at most per request where lokivl runs the pipeline (log and
/// metric queries alike).
pub const DEFAULT_MAX_ROWS: usize = 500_000;
/// Raw samples read at most per request for `quantile_over_time`,
/// `first_over_time`, `last_over_time` and `rate_counter`.
pub const DEFAULT_MAX_RAW_SAMPLES: usize = 1_000_000;

/// The per-request bounds a router enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkLimits {
    /// Rows read per request when the pipeline runs in lokivl.
    pub max_rows: usize,
    /// Raw samples read per request for the functions that need every value.
    pub max_raw_samples: usize,
}

impl Default for WorkLimits {
    fn default() -> Self {
        Self {
            max_rows: DEFAULT_MAX_ROWS,
            max_raw_samples: DEFAULT_MAX_RAW_SAMPLES,
        }
    }
}

/// A count of rows one request may still read, shared by its windows.
#[derive(Debug, Clone)]
pub struct RowBudget(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    max: usize,
    spent: AtomicUsize,
}

impl RowBudget {
    /// A fresh budget of `max` rows.
    pub fn new(max: usize) -> Self {
        Self(Arc::new(Inner {
            max,
            spent: AtomicUsize::new(0),
        }))
    }

    /// The bound, for messages.
    pub fn max(&self) -> usize {
        self.0.max
    }

    /// Rows that may still be read.
    pub fn remaining(&self) -> usize {
        self.0
            .max
            .saturating_sub(self.0.spent.load(Ordering::Relaxed))
    }

    /// Records `n` rows read; `false` when the request has now read more
    /// than the bound (the caller refuses or stops).
    pub fn spend(&self, n: usize) -> bool {
        let before = self.0.spent.fetch_add(n, Ordering::Relaxed);
        before.saturating_add(n) <= self.0.max
    }
}

/// The budgets of one request.
#[derive(Debug, Clone)]
pub struct Budgets {
    /// Rows read where lokivl runs the pipeline.
    pub rows: RowBudget,
    /// Raw samples read for quantiles, first, last and `rate_counter`.
    pub raw_samples: RowBudget,
}

impl Budgets {
    /// Fresh budgets for one request.
    pub fn new(limits: &WorkLimits) -> Self {
        Self {
            rows: RowBudget::new(limits.max_rows),
            raw_samples: RowBudget::new(limits.max_raw_samples),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_count() {
        let a = RowBudget::new(10);
        let b = a.clone();
        assert!(a.spend(6));
        assert_eq!(b.remaining(), 4);
        assert!(b.spend(4));
        assert_eq!(a.remaining(), 0);
        assert!(!a.spend(1));
        assert_eq!(b.remaining(), 0);
        assert_eq!(b.max(), 10);
    }
}
