//! `compute`: metric queries over an hour.

use super::pair::{HOUR, QR, Template, VSR, data, vl};

/// The workload's request pairs.
pub(super) const TEMPLATES: &[Template] = &[
    Template {
        name: "sum_by_rate",
        weight: 2,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                ("query", r#"sum by (app) (rate({namespace="prod"}[1m]))"#),
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
                    r#"{namespace="prod"} | stats by (app) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "1m"),
            ],
        ),
        note: "the client divides by 60 for rate",
    },
    Template {
        name: "count_by_level",
        weight: 2,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                (
                    "query",
                    r#"sum by (detected_level) (count_over_time({namespace="prod"}[1m]))"#,
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
                    r#"{namespace="prod"} | stats by (detected_level) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "1m"),
            ],
        ),
        note: "",
    },
    Template {
        name: "quantile_by_pod",
        weight: 1,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                (
                    "query",
                    r#"quantile_over_time(0.99, {app="checkout"} | json | unwrap duration_ms [1m]) by (pod)"#,
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
                    r#"{app="checkout"} | unpack_json fields (duration_ms) | stats by (pod) quantile(0.99, duration_ms) q"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "1m"),
            ],
        ),
        note: "VictoriaLogs' quantile is an estimate; Loki's is exact",
    },
    Template {
        name: "topk_pods",
        weight: 1,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                (
                    "query",
                    r#"topk(5, sum by (pod) (rate({app="payments"}[5m])))"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "300000ms"),
            ],
        ),
        direct: vl(
            VSR,
            &[
                ("query", r#"{app="payments"} | stats by (pod) count() hits"#),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5m"),
            ],
        ),
        note: "the client keeps the top 5 per step",
    },
    Template {
        name: "instant_total",
        weight: 1,
        window_ns: HOUR,
        loki: data(
            "/loki/api/v1/query",
            &[
                ("query", r#"sum(count_over_time({namespace="prod"}[1h]))"#),
                ("direction", "backward"),
                ("time", "{end}"),
            ],
        ),
        direct: vl(
            "/select/logsql/stats_query",
            &[
                (
                    "query",
                    r#"{namespace="prod"} _time:({start_rfc}, {end_rfc}] | stats count() hits"#,
                ),
                ("time", "{end}"),
            ],
        ),
        note: "",
    },
];
