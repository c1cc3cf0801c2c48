//! Contract tests of the HTTP API against a fake VictoriaLogs (one module per
//! former `http_*` binary): lokivl's exact answers and the exact requests it
//! sends upstream. No external server needed.

#[path = "../support/mod.rs"]
mod support;

mod backend_credentials;
mod cache;
mod dialect;
mod discovery;
mod drilldown;
mod format_query;
mod json_depth;
mod limits_configured;
mod metadata;
mod metadata_discovery;
mod metric;
mod metric_discovery;
mod metric_limits;
mod overflow;
mod parser_pushdown;
mod query;
mod service;
mod tail;
mod tenant_fanout;
mod tenant_narrowing;
mod tenants;
mod ties;
mod volume_rows;
mod window_cancel;
mod windows;
