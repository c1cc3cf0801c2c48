//! `dashboard`: one Grafana time-series panel, "the last 6 hours" at a
//! 1-minute step, refreshed again and again. Each refresh moves the range;
//! through lokivl the closed step-aligned windows of earlier refreshes are
//! reused, VictoriaLogs answers every request in full.

use super::pair::{HOUR, QR, Template, VSR, data, vl};

/// The workload's request pairs.
pub(super) const TEMPLATES: &[Template] = &[Template {
    name: "rate_by_namespace_6h",
    weight: 1,
    window_ns: 6 * HOUR,
    loki: data(
        QR,
        &[
            (
                "query",
                r#"sum by (namespace) (rate({namespace=~".+"} |= "error" [5m]))"#,
            ),
            ("start", "{start}"),
            ("end", "{end}"),
            ("step", "60000ms"),
        ],
    ),
    direct: vl(
        VSR,
        &[
            (
                "query",
                r#"{namespace=~".+"} _msg:~"error" | stats by (namespace) count() hits"#,
            ),
            ("start", "{start}"),
            ("end", "{end}"),
            ("step", "1m"),
        ],
    ),
    note: "the client sums 5 one-minute buckets per step and divides by 300 for rate",
}];
