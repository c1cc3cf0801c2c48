//! `heavy`: parsers, label filters and `line_format` over an hour, limit 1000.

use super::pair::{HOUR, QR, Template, VQ, data, vl};

/// The workload's request pairs.
pub(super) const TEMPLATES: &[Template] = &[
    Template {
        name: "json_status",
        weight: 2,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                ("query", r#"{app="checkout"} | json | status >= 500"#),
                ("direction", "backward"),
                ("limit", "1000"),
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
                    r#"{app="checkout"} | unpack_json | filter status:>=500"#,
                ),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "VictoriaLogs' unpack_json stands in for Loki's json parser (same fields on this data)",
    },
    Template {
        name: "logfmt_line_format",
        weight: 2,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                (
                    "query",
                    r#"{app="billing-worker"} | logfmt | level="error" | line_format "{{.msg}} took {{.duration}}""#,
                ),
                ("direction", "backward"),
                ("limit", "1000"),
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
                    r#"{app="billing-worker"} | unpack_logfmt | filter level:=error | format "<msg> took <duration>" as _msg"#,
                ),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "logfmt_duration",
        weight: 1,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                (
                    "query",
                    r#"{app=~"billing-worker|reindexer"} |~ "(?i)timeout|reset" | logfmt | duration > 500ms"#,
                ),
                ("direction", "backward"),
                ("limit", "1000"),
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
                    r#"{app=~"billing-worker|reindexer"} _msg:~"(?i)timeout|reset" | unpack_logfmt | filter duration:>500ms"#,
                ),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "pattern_access",
        weight: 1,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                (
                    "query",
                    r#"{app="ingress-nginx"} | pattern `<ip> - - [<_>] "<method> <path> <_>" <status> <size> <_>` | status >= 400"#,
                ),
                ("direction", "backward"),
                ("limit", "1000"),
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
                    r#"{app="ingress-nginx"} | extract '<ip> - - [<_>] "<method> <path> <_>" <status> <size> <_>' | filter status:>=400"#,
                ),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "",
    },
    Template {
        name: "json_line_format",
        weight: 1,
        window_ns: HOUR,
        loki: data(
            QR,
            &[
                (
                    "query",
                    r#"{namespace="prod", app="payments"} | json | line_format "{{.method}} {{.path}} {{.status}}""#,
                ),
                ("direction", "backward"),
                ("limit", "1000"),
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
                    r#"{namespace="prod",app="payments"} | unpack_json | format "<method> <path> <status>" as _msg"#,
                ),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "",
    },
];
