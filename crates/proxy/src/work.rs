//! Bounded work per request: CPU-heavy steps run off the async workers
//! ([`cpu`]), stop at the request's deadline ([`stop`]), and read at most a
//! budget of rows over all the windows of a request ([`budget`]).
//!
//! On a small host a few requests that decode, filter and aggregate hundreds
//! of thousands of rows would otherwise occupy every tokio worker, so that
//! `/ready`, cache hits and even `accept` wait for them. Rows are read from
//! VictoriaLogs asynchronously; what is done with them runs here.

pub mod cpu;

pub use engine::work::{Budgets, Deadline, RowBudget, Stop, Stopped, WorkLimits, budget, stop};

/// What bounds the work of one request: its row budgets (one per request,
/// shared by its windows and range aggregations) and its deadline.
#[derive(Debug, Clone)]
pub struct Work {
    /// Rows and raw samples the request may still read.
    pub budgets: Budgets,
    /// When the request must be answered by.
    pub deadline: Deadline,
}

impl Work {
    /// Fresh budgets from `limits`, and the request's deadline.
    pub fn new(limits: &WorkLimits, deadline: Deadline) -> Self {
        Self {
            budgets: Budgets::new(limits),
            deadline,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn stopped_work_answers_lokis_query_timeout() {
        let e: crate::error::ApiError = Stopped(Duration::from_secs(60)).into();
        assert_eq!(e.status(), http::StatusCode::GATEWAY_TIMEOUT);
        assert!(e.to_string().starts_with("request timed out"), "{e}");
    }
}
