//! Faults and hostile input: a faulty VictoriaLogs (hung, slow, garbage,
//! truncated, killed), the circuit breaker, request limits, malformed
//! requests and the tail bounds. No external server needed.

#[path = "../support/mod.rs"]
mod support;

mod backend;
mod bad_input;
mod breaker;
mod limits;
mod tail_bounds;
