//! `GET /loki/api/v1/drilldown-limits`: the limits Logs Drilldown reads at
//! start-up, in Loki's bare-object shape, with lokivl's real values.
//!
//! Drilldown hides the Patterns tab when `pattern_ingester_enabled` is false;
//! lokivl mines patterns on request, so it is true.

use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use logsql_ast::Discovery;

use super::json_response;
use super::status::LOKI_VERSION;
use crate::context::RequestContext;
use crate::params::QueryLimits;
use engine::discovery::LEVEL_FIELDS;

/// Loki's default `volume_max_series`, enforced by `index/volume`.
pub const VOLUME_MAX_SERIES: usize = 1000;

/// The configuration the answer reports.
#[derive(Debug, Clone, Copy)]
pub struct LimitsConfig {
    /// `--query-timeout`.
    pub query_timeout: Duration,
}

/// The answer body, with the per-query limits `q` and the discovery
/// settings `d` this router applies (Drilldown reads them to decide what to show).
pub fn body(c: LimitsConfig, q: QueryLimits, d: &Discovery) -> serde_json::Value {
    let timeout = i64::try_from(c.query_timeout.as_nanos()).unwrap_or(i64::MAX);
    // The OTel resource attributes Loki indexes by default, as lokivl maps them.
    let otlp_index_labels: Vec<&str> = logsql_ast::otel::INDEX_LABELS
        .iter()
        .map(|l| l.attribute)
        .collect();
    serde_json::json!({
        "limits": {
            "discover_log_levels": d.log_levels,
            "discover_service_name": d.service_name_labels,
            "log_level_fields": LEVEL_FIELDS,
            "max_entries_limit_per_query": q.max_entries_limit,
            "max_line_size_truncate": false,
            "max_query_bytes_read": "0B",
            "max_query_length": go::duration::Duration(q.max_query_length_ns).to_prometheus_string(),
            "max_query_lookback": "0s",
            "max_query_range": "0s",
            "max_query_series": q.max_query_series,
            "metric_aggregation_enabled": false,
            "otlp_config": {"resource_attributes": {"attributes_config": [
                {"action": "index_label", "attributes": otlp_index_labels}
            ]}},
            "pattern_persistence_enabled": false,
            "query_timeout": go::duration::Duration(timeout).to_prometheus_string(),
            "retention_period": "0s",
            "volume_enabled": true,
            "volume_max_series": VOLUME_MAX_SERIES,
        },
        "pattern_ingester_enabled": true,
        "version": LOKI_VERSION,
    })
}

/// `GET /loki/api/v1/drilldown-limits`: reports the limits and discovery
/// settings of the request's context, so the values are the configured ones.
pub async fn drilldown_limits(
    State(c): State<LimitsConfig>,
    Extension(ctx): Extension<RequestContext>,
) -> Response {
    let mut out = serde_json::to_vec(&body(c, ctx.limits(), ctx.discovery())).unwrap_or_default();
    out.push(b'\n');
    json_response(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_real_limits() {
        let b = body(
            LimitsConfig {
                query_timeout: Duration::from_secs(90),
            },
            QueryLimits::default(),
            &engine::discovery::loki_defaults(),
        );
        assert_eq!(b["limits"]["query_timeout"], "1m30s");
        assert_eq!(b["limits"]["max_query_length"], "30d1h");
        assert_eq!(b["limits"]["max_entries_limit_per_query"], 5000);
        assert_eq!(b["pattern_ingester_enabled"], true);
        assert_eq!(b["limits"]["discover_service_name"][0], "service");
        assert_eq!(b["limits"]["max_query_series"], 500);
        let q = QueryLimits {
            max_query_length_ns: 0,
            max_entries_limit: 20,
            max_query_series: 7,
            ..QueryLimits::default()
        };
        let b = body(
            LimitsConfig {
                query_timeout: Duration::from_secs(90),
            },
            q,
            &Discovery::default(),
        );
        assert_eq!(b["limits"]["max_query_length"], "0s");
        assert_eq!(b["limits"]["discover_log_levels"], false);
        assert_eq!(b["limits"]["discover_service_name"], serde_json::json!([]));
        assert_eq!(b["limits"]["max_entries_limit_per_query"], 20);
        assert_eq!(b["limits"]["max_query_series"], 7);
    }
}
