//! Recognizing Grafana Logs Drilldown's requests. What Drilldown's
//! metadata is computed from lives in `engine::drilldown`; fetching its
//! entries in [`crate::query::drilldown`].

/// go-humanize byte sizes, for the texts of [`crate::error::ApiError`].
pub use engine::drilldown::humanize;

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
