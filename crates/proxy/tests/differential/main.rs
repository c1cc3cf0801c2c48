//! Differential suites: lokivl against a real Loki 3.7 (`LOKIVL_LOKI_BIN`) on
//! the same data, live or from the recorded goldens of each VictoriaLogs
//! release (the replays need no server).

#[path = "../support/mod.rs"]
mod support;

mod discovery;
mod drilldown;
mod errors;
mod loki;
mod replay;
mod tail;
