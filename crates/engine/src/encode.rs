//! Loki JSON encoders that write bytes directly.
//!
//! [`json`] holds the escaping and number writers every encoder shares,
//! [`stats`] Loki's `stats` tree, and [`streams`] the log-query answer built
//! from VictoriaLogs NDJSON.

pub mod json;
pub mod pipeline;
pub mod stats;
pub mod streams;
