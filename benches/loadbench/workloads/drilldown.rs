//! `drilldown`: the requests Logs Drilldown sends for one service page.

use super::pair::{Call, DRILLDOWN, MIN, QR, Template, VQ, VSR, drill, vl};

/// The workload's request pairs.
pub(super) const TEMPLATES: &[Template] = &[
    Template {
        name: "service_volume",
        weight: 2,
        window_ns: 15 * MIN,
        loki: drill(
            QR,
            &[
                (
                    "query",
                    r#"sum by (detected_level) (count_over_time({service_name="checkout"} | drop __error__ [5s]))"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5000ms"),
            ],
        ),
        direct: vl(
            VSR,
            &[
                (
                    "query",
                    r#"{service_name="checkout"} | stats by (detected_level) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5s"),
            ],
        ),
        note: "",
    },
    Template {
        name: "service_logs",
        weight: 2,
        window_ns: 15 * MIN,
        loki: drill(
            QR,
            &[
                (
                    "query",
                    r#"{service_name="checkout"}      | json | logfmt | drop __error__, __error_details__  "#,
                ),
                ("direction", "backward"),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "1000ms"),
            ],
        ),
        direct: vl(
            VQ,
            &[
                ("query", r#"{service_name="checkout"} | unpack_json"#),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "logfmt after json adds nothing on JSON lines; only unpack_json is asked",
    },
    Template {
        name: "level_filter_logs",
        weight: 1,
        window_ns: 15 * MIN,
        loki: drill(
            QR,
            &[
                (
                    "query",
                    r#"{service_name="checkout"} | detected_level="error" or detected_level="warn" | json | logfmt | drop __error__, __error_details__"#,
                ),
                ("direction", "backward"),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "1000ms"),
            ],
        ),
        direct: vl(
            VQ,
            &[
                (
                    "query",
                    r#"{service_name="checkout"} (detected_level:=error or detected_level:=warn) | unpack_json"#,
                ),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "labels_tab_namespace",
        weight: 1,
        window_ns: 15 * MIN,
        loki: drill(
            QR,
            &[
                (
                    "query",
                    r#"sum(count_over_time({service_name="checkout", namespace!=""} [5s])) by (namespace)"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5000ms"),
            ],
        ),
        direct: vl(
            VSR,
            &[
                (
                    "query",
                    r#"{service_name="checkout",namespace!=""} | stats by (namespace) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5s"),
            ],
        ),
        note: "",
    },
    Template {
        name: "fields_tab_method",
        weight: 1,
        window_ns: 15 * MIN,
        loki: drill(
            QR,
            &[
                (
                    "query",
                    r#"sum by (method) (count_over_time({service_name="checkout"} | json | logfmt | drop __error__, __error_details__ | method!="" [5s]))"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5000ms"),
            ],
        ),
        direct: vl(
            VSR,
            &[
                (
                    "query",
                    r#"{service_name="checkout"} | unpack_json fields (method) | filter method:* | stats by (method) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5s"),
            ],
        ),
        note: "",
    },
    Template {
        name: "detected_labels",
        weight: 1,
        window_ns: 15 * MIN,
        loki: Call {
            path: "/loki/api/v1/detected_labels",
            params: &[
                ("query", ""),
                ("start", "{start_rfc}"),
                ("end", "{end_rfc}"),
            ],
            headers: &[DRILLDOWN],
        },
        direct: vl(
            VQ,
            &[
                (
                    "query",
                    "* | stats count_uniq(namespace) namespace, count_uniq(app) app, count_uniq(pod) pod, count_uniq(container) container, count_uniq(service_name) service_name",
                ),
                ("start", "{start_rfc}"),
                ("end", "{end_rfc}"),
            ],
        ),
        note: "cardinality of each known label",
    },
    Template {
        name: "detected_fields",
        weight: 1,
        window_ns: 15 * MIN,
        loki: Call {
            path: "/loki/api/v1/detected_fields",
            params: &[
                (
                    "query",
                    r#"{service_name="checkout"} | json | logfmt | drop __error__, __error_details__"#,
                ),
                ("start", "{start_rfc}"),
                ("end", "{end_rfc}"),
            ],
            headers: &[DRILLDOWN],
        },
        direct: vl(
            "/select/logsql/field_names",
            &[
                ("query", r#"{service_name="checkout"} | unpack_json"#),
                ("start", "{start_rfc}"),
                ("end", "{end_rfc}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "service_grid_volume",
        weight: 1,
        window_ns: 15 * MIN,
        loki: Call {
            path: "/loki/api/v1/index/volume",
            params: &[
                ("query", r#"{service_name=~".+"}"#),
                ("limit", "5000"),
                ("start", "{start_rfc}"),
                ("end", "{end_rfc}"),
            ],
            headers: &[DRILLDOWN],
        },
        direct: vl(
            VQ,
            &[
                (
                    "query",
                    r#"{service_name=~".+"} | stats by (service_name) sum_len(_msg) bytes"#,
                ),
                ("start", "{start_rfc}"),
                ("end", "{end_rfc}"),
            ],
        ),
        note: "volume in bytes per service",
    },
];
