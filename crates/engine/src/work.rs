//! Bounds on the work of one request, as the engine sees them: it polls a
//! [`Stop`] while it walks rows ([`stop`]) and reads at most a budget of rows
//! shared by all the windows of a request ([`budget`]).
//!
//! Where the work runs (the service's blocking pool) is not the engine's
//! concern; it only needs to notice, every few rows, that it should end.

pub mod budget;
pub mod stop;

pub use budget::{Budgets, RowBudget, WorkLimits};
pub use stop::{Deadline, Stop, Stopped};
