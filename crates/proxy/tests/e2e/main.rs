//! End-to-end suites against a real VictoriaLogs (`LOKIVL_VL_BIN`; each test
//! prints one `skipped:` line without it), the replay of the end-to-end
//! goldens (no server needed), and the soak test (`LOKIVL_SOAK=1`).

#[path = "../support/mod.rs"]
mod support;

mod cluster;
mod context_windows;
mod derived_levels_cost;
mod discovery;
mod drilldown;
mod golden_replay;
mod line_levels;
mod live_extents;
mod logfmt_guard;
mod metadata_discovery;
mod metric_discovery;
mod needle;
mod parser_pushdown;
mod push_passthrough;
mod shared_cache;
mod soak;
mod tail;
mod tenants;
mod victorialogs;
mod windows_property;
