//! Grafana Logs Drilldown's metadata: shared pieces of the `index/*`,
//! `detected_*` and `patterns` handlers.
//!
//! * [`discovery`]: Loki's ingest-time `service_name` and `detected_level`,
//!   derived at query time because VictoriaLogs does not add them.
//! * [`logs`]: fetching a bounded number of categorized entries, as Loki's
//!   detected-fields and patterns code reads them.
//! * [`fields`]: detected fields and values (type inference, parsers, JSON paths).
//! * [`drain`]: Drain log-pattern mining.
//! * [`humanize`]: Go's `go-humanize` byte parsing and printing, as Loki uses it.
//! * [`streams`]: the stream index (label sets with their synthesized labels).
//! * [`stats_rows`]: borrowed decoding of VictoriaLogs `stats` answers.

pub mod discovery;
pub mod drain;
pub mod fields;
pub mod humanize;
pub mod logs;
pub mod stats_rows;
pub mod streams;

/// The `X-Query-Tags` value Logs Drilldown sends on every call.
pub const DRILLDOWN_SOURCE: &str = "Source=grafana-lokiexplore-app";

/// Whether the request comes from Logs Drilldown (`X-Query-Tags: Source=grafana-lokiexplore-app`).
pub fn is_drilldown(headers: &http::HeaderMap) -> bool {
    headers
        .get_all("x-query-tags")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(DRILLDOWN_SOURCE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drilldown_tag() {
        let mut h = http::HeaderMap::new();
        assert!(!is_drilldown(&h));
        h.insert(
            "x-query-tags",
            http::HeaderValue::from_static("Source=grafana-lokiexplore-app"),
        );
        assert!(is_drilldown(&h));
        h.insert(
            "x-query-tags",
            http::HeaderValue::from_static("Source=logvolhist"),
        );
        assert!(!is_drilldown(&h));
    }
}
