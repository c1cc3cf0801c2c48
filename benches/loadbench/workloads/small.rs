//! `small`: label browser, series and short log queries.

use super::pair::{HOUR, MIN, QR, Template, VQ, data, loki, vl};

/// The workload's request pairs.
pub(super) const TEMPLATES: &[Template] = &[
    Template {
        name: "labels",
        weight: 2,
        window_ns: HOUR,
        loki: loki(
            "/loki/api/v1/labels",
            &[("start", "{start}"), ("end", "{end}")],
        ),
        direct: vl(
            "/select/logsql/stream_field_names",
            &[("query", "*"), ("start", "{start}"), ("end", "{end}")],
        ),
        note: "",
    },
    Template {
        name: "labels_query",
        weight: 1,
        window_ns: HOUR,
        loki: loki(
            "/loki/api/v1/labels",
            &[
                ("query", r#"{namespace="prod"}"#),
                ("start", "{start}"),
                ("end", "{end}"),
            ],
        ),
        direct: vl(
            "/select/logsql/stream_field_names",
            &[
                ("query", r#"{namespace="prod"}"#),
                ("start", "{start}"),
                ("end", "{end}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "label_values_app",
        weight: 2,
        window_ns: HOUR,
        loki: loki(
            "/loki/api/v1/label/app/values",
            &[("start", "{start}"), ("end", "{end}")],
        ),
        direct: vl(
            "/select/logsql/stream_field_values",
            &[
                ("field", "app"),
                ("query", "*"),
                ("start", "{start}"),
                ("end", "{end}"),
            ],
        ),
        note: "lokivl first asks stream_field_names whether the label is a stream field",
    },
    Template {
        name: "label_values_pod",
        weight: 1,
        window_ns: HOUR,
        loki: loki(
            "/loki/api/v1/label/pod/values",
            &[
                ("query", r#"{namespace="prod", app="checkout"}"#),
                ("start", "{start}"),
                ("end", "{end}"),
            ],
        ),
        direct: vl(
            "/select/logsql/stream_field_values",
            &[
                ("field", "pod"),
                ("query", r#"{namespace="prod",app="checkout"}"#),
                ("start", "{start}"),
                ("end", "{end}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "series",
        weight: 1,
        window_ns: HOUR,
        loki: loki(
            "/loki/api/v1/series",
            &[
                ("match[]", r#"{namespace="prod", app="checkout"}"#),
                ("start", "{start}"),
                ("end", "{end}"),
            ],
        ),
        direct: vl(
            "/select/logsql/streams",
            &[
                ("query", r#"{namespace="prod",app="checkout"}"#),
                ("start", "{start}"),
                ("end", "{end}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "logs_15m",
        weight: 2,
        window_ns: 15 * MIN,
        loki: data(
            QR,
            &[
                ("query", r#"{namespace="prod", app="checkout"}"#),
                ("direction", "backward"),
                ("limit", "100"),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "1000ms"),
            ],
        ),
        direct: vl(
            VQ,
            &[
                ("query", r#"{namespace="prod",app="checkout"}"#),
                ("limit", "100"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "logs_filter_1h",
        weight: 1,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                (
                    "query",
                    r#"{namespace="prod", app="checkout"} |= "timeout""#,
                ),
                ("direction", "backward"),
                ("limit", "100"),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "2000ms"),
            ],
        ),
        direct: vl(
            VQ,
            &[
                (
                    "query",
                    r#"{namespace="prod",app="checkout"} _msg:~"timeout""#,
                ),
                ("limit", "100"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "",
    },
];
