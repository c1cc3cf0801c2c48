//! Fetch orchestration: what the service asks VictoriaLogs for, page by
//! page, before the engine evaluates the rows.
//!
//! * [`log`]: log queries whose plan has pipeline stages lokivl runs.
//! * [`drilldown`]: the categorized entries detected fields and patterns
//!   are computed from.

pub mod drilldown;
pub mod log;
