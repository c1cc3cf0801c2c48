//! A Logs Drilldown walk-through for one service (`checkout`): every request
//! Grafana's Logs Drilldown app sends from the service list to the
//! patterns tab (grafana/logs-drilldown `ServiceSelectionScene`,
//! `ServiceScene`, the labels, fields and patterns tabs; the shapes are in
//! /work/shared/design/grafana-loki-api.md section 4), asked of Loki and
//! lokivl on a realistic dataset where `service_name` and `detected_level`
//! are discovered, never stored. Metric ranges use a 10 s interval over
//! the 12-minute range, so lokivl's windowed variants split them.

use super::requests::{Mode, Req};

/// The walk-through's requests. Resource calls get RFC3339 times, data
/// queries ns times and the categorize-labels flag (see `time_params`).
pub(crate) const WALK: &[Req] = &[
    // Service list: the grid of services, then one volume panel per card.
    Req {
        id: "wt.service_list",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[("query", r#"{service_name=~".+"}"#), ("limit", "5000")],
    },
    Req {
        id: "wt.service_search",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[
            ("query", r#"{service_name=~"(?i).*check.*"}"#),
            ("limit", "5000"),
        ],
    },
    Req {
        id: "wt.card_levels",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum by (detected_level) (count_over_time({ service_name="checkout" } [10s]))"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.card_logs",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            ("query", "{service_name=`checkout` }"),
            ("limit", "100"),
            ("direction", "backward"),
        ],
    },
    // Service scene: volume histogram by level, logs, count badge.
    Req {
        id: "wt.volume_levels",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum by (detected_level) (count_over_time({service_name="checkout"} | drop __error__ [10s]))"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.logs",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"{service_name="checkout"}       | json | logfmt | drop __error__, __error_details__  "#,
            ),
            ("limit", "1000"),
            ("direction", "backward"),
        ],
    },
    Req {
        id: "wt.logs_levels",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"{service_name="checkout"} | detected_level="error" or detected_level="warn"    | json | logfmt | drop __error__, __error_details__  "#,
            ),
            ("limit", "1000"),
            ("direction", "backward"),
        ],
    },
    Req {
        id: "wt.logs_line_filter",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"{service_name="checkout"}   |~ "(?i)placed" | json | logfmt | drop __error__, __error_details__  "#,
            ),
            ("limit", "1000"),
            ("direction", "forward"),
        ],
    },
    Req {
        id: "wt.logs_field_filter",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"{service_name="checkout"}     | json | logfmt | drop __error__, __error_details__ | status="500" or status="503" "#,
            ),
            ("limit", "1000"),
            ("direction", "backward"),
        ],
    },
    Req {
        id: "wt.count",
        path: "/loki/api/v1/query",
        mode: Mode::Query,
        params: &[(
            "query",
            r#"sum(count_over_time({service_name="checkout"} | json | logfmt | drop __error__, __error_details__ [720s]))"#,
        )],
    },
    // Labels tab.
    Req {
        id: "wt.detected_labels_empty",
        path: "/loki/api/v1/detected_labels",
        mode: Mode::Labels,
        params: &[("query", "")],
    },
    Req {
        id: "wt.detected_labels",
        path: "/loki/api/v1/detected_labels",
        mode: Mode::Labels,
        params: &[("query", r#"{service_name="checkout"}"#)],
    },
    Req {
        id: "wt.labels",
        path: "/loki/api/v1/labels",
        mode: Mode::Query,
        params: &[("query", r#"{service_name="checkout"}"#)],
    },
    Req {
        id: "wt.label_namespace",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum(count_over_time({service_name="checkout", namespace!=""} [10s])) by (namespace)"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.label_pod",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum(count_over_time({service_name="checkout", pod!=""} [10s])) by (pod)"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.label_env",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum(count_over_time({service_name="checkout", env!=""} [10s])) by (env)"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.label_k8s_pod",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum(count_over_time({service_name="checkout", k8s_pod_name!=""} [10s])) by (k8s_pod_name)"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.label_detected_level",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum(count_over_time({service_name="checkout"} | detected_level!="" [10s])) by (detected_level)"#,
            ),
            ("step", "10000ms"),
        ],
    },
    // Fields tab: the list, one panel per field, the value pickers.
    Req {
        id: "wt.detected_fields",
        path: "/loki/api/v1/detected_fields",
        mode: Mode::Fields,
        params: &[(
            "query",
            r#"{service_name="checkout"} | json | logfmt | drop __error__, __error_details__"#,
        )],
    },
    Req {
        id: "wt.field_status",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum by (status) (count_over_time({service_name="checkout"} | json | logfmt | drop __error__, __error_details__ | status!="" [10s]))"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.field_level",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum by (level) (count_over_time({service_name="checkout"} | json | logfmt | drop __error__, __error_details__ | level!="" [10s]))"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.field_latency",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"avg_over_time({service_name="checkout"} | json | logfmt | drop __error__, __error_details__ | latency_ms!="" | unwrap latency_ms | __error__="" [10s]) by ()"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.field_severity_text",
        path: "/loki/api/v1/query_range",
        mode: Mode::Query,
        params: &[
            (
                "query",
                r#"sum by (severity_text) (count_over_time({service_name="checkout"} | severity_text!="" | json | logfmt | drop __error__, __error_details__ [10s]))"#,
            ),
            ("step", "10000ms"),
        ],
    },
    Req {
        id: "wt.values_status",
        path: "/loki/api/v1/detected_field/status/values",
        mode: Mode::Values,
        params: &[(
            "query",
            r#"{service_name="checkout"} | json | logfmt | drop __error__, __error_details__"#,
        )],
    },
    Req {
        id: "wt.values_level",
        path: "/loki/api/v1/detected_field/detected_level/values",
        mode: Mode::Values,
        params: &[("query", r#"{service_name="checkout"}"#)],
    },
    Req {
        id: "wt.values_user_id",
        path: "/loki/api/v1/detected_field/user_id/values",
        mode: Mode::Values,
        params: &[("query", r#"{service_name="checkout"}"#), ("limit", "1000")],
    },
    // Patterns tab.
    Req {
        id: "wt.patterns",
        path: "/loki/api/v1/patterns",
        mode: Mode::Patterns,
        params: &[
            ("query", r#"{service_name="checkout"}"#),
            ("step", "10000ms"),
        ],
    },
];
