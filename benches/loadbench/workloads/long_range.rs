//! `long_range`: 6–72 h log and metric queries.

use super::pair::{HOUR, QR, Template, VQ, VSR, data, vl};

/// The workload's request pairs.
pub(super) const TEMPLATES: &[Template] = &[
    Template {
        name: "logs_24h_filter",
        weight: 2,
        window_ns: 24 * HOUR,
        loki: data(
            QR,
            &[
                ("query", r#"{namespace="prod", app="payments"} |= "error""#),
                ("direction", "backward"),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "60000ms"),
            ],
        ),
        direct: vl(
            VQ,
            &[
                (
                    "query",
                    r#"{namespace="prod",app="payments"} _msg:~"error""#,
                ),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "logs_72h",
        weight: 1,
        window_ns: 72 * HOUR,
        loki: data(
            QR,
            &[
                ("query", r#"{app="reindexer"}"#),
                ("direction", "backward"),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "300000ms"),
            ],
        ),
        direct: vl(
            VQ,
            &[
                ("query", r#"{app="reindexer"}"#),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "count_by_ns_72h",
        weight: 1,
        window_ns: 72 * HOUR,
        loki: data(
            QR,
            &[
                (
                    "query",
                    r#"sum by (namespace) (count_over_time({app="checkout"}[5m]))"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "300000ms"),
            ],
        ),
        direct: vl(
            VSR,
            &[
                (
                    "query",
                    r#"{app="checkout"} | stats by (namespace) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5m"),
            ],
        ),
        note: "range = step, so one bucket per point; bucket alignment may differ from Loki's",
    },
    Template {
        name: "rate_6h",
        weight: 2,
        window_ns: 6 * HOUR,
        loki: data(
            QR,
            &[
                ("query", r#"rate({namespace="prod"} |= "error" [1m])"#),
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
                    r#"{namespace="prod"} _msg:~"error" | stats by (_stream) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "1m"),
            ],
        ),
        note: "the client divides each bucket count by 60 for rate",
    },
];
