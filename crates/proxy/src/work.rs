//! Bounded work per request: CPU-heavy steps run off the async workers
//! ([`cpu`]), stop at the request's deadline ([`stop`]), and read at most a
//! budget of rows over all the windows of a request ([`budget`]).
//!
//! On a small host a few requests that decode, filter and aggregate hundreds
//! of thousands of rows would otherwise occupy every tokio worker, so that
//! `/ready`, cache hits and even `accept` wait for them. Rows are read from
//! VictoriaLogs asynchronously; what is done with them runs here.

pub mod budget;
pub mod cpu;
pub mod stop;

pub use budget::{Budgets, RowBudget, WorkLimits};
pub use stop::{Deadline, Stop, Stopped};

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
