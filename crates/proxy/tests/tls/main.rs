//! TLS on both sides: lokivl's HTTPS listener (with client certificates) and
//! an HTTPS VictoriaLogs, for queries and tails. No external server needed.

#[path = "../support/mod.rs"]
mod support;

mod backend;
mod listener;
mod tail;
