//! Fetch orchestration: what the service asks VictoriaLogs for, page by
//! page, before the engine evaluates the rows.
//!
//! * [`direct`]: log queries VictoriaLogs answers whole, cut at the limit
//!   as Loki cuts among entries of one timestamp.
//! * [`log`]: log queries whose plan has pipeline stages lokivl runs.
//! * [`drilldown`]: the categorized entries detected fields and patterns
//!   are computed from.

pub mod direct;
pub mod drilldown;
pub mod log;
