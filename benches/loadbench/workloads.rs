//! Named workloads: weighted request templates, each written twice — the
//! Loki API call Grafana sends to lokivl, and the hand-written VictoriaLogs
//! request that computes the same answer.
//!
//! Parameter values may hold placeholders filled per request from its time
//! window: `{start}`/`{end}` (Unix ns), `{end1}` (`end − 1 ns`: Loki's log
//! range is `[start, end)`, VictoriaLogs' is inclusive), `{start_rfc}`/
//! `{end_rfc}` (RFC 3339 with milliseconds, as JavaScript's `toISOString()`).

/// Nanoseconds per minute.
const MIN: i64 = 60_000_000_000;
/// Nanoseconds per hour.
const HOUR: i64 = 60 * MIN;

/// Grafana's header on data queries.
const CATEGORIZE: (&str, &str) = ("X-Loki-Response-Encoding-Flags", "categorize-labels");
/// Logs Drilldown's query tag.
const DRILLDOWN: (&str, &str) = ("X-Query-Tags", "Source=grafana-lokiexplore-app");

/// One HTTP GET: a path, query parameters (values may hold placeholders) and headers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    /// Path, e.g. `/loki/api/v1/query_range`.
    pub(crate) path: &'static str,
    /// Query parameters.
    pub(crate) params: &'static [(&'static str, &'static str)],
    /// Extra request headers.
    pub(crate) headers: &'static [(&'static str, &'static str)],
}

/// A request template: the same question asked of lokivl and of VictoriaLogs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Template {
    /// Short name, unique in its workload.
    pub(crate) name: &'static str,
    /// Relative frequency in the workload.
    pub(crate) weight: u32,
    /// Length of the time window, nanoseconds.
    pub(crate) window_ns: i64,
    /// The Loki API call (to lokivl).
    pub(crate) loki: Call,
    /// The equivalent VictoriaLogs call.
    pub(crate) direct: Call,
    /// What the direct side leaves to the client, or how it differs.
    pub(crate) note: &'static str,
}

/// A named workload.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Workload {
    /// Name used on the command line and in reports.
    pub(crate) name: &'static str,
    /// Templates, picked at random by weight.
    pub(crate) templates: &'static [Template],
}

impl Workload {
    /// The longest window of any template.
    pub(crate) fn max_window(&self) -> i64 {
        self.templates
            .iter()
            .map(|t| t.window_ns)
            .max()
            .unwrap_or(0)
    }

    /// Picks a template for a random number `r`, by weight.
    pub(crate) fn pick(&self, r: u64) -> &'static Template {
        let total: u64 = self.templates.iter().map(|t| u64::from(t.weight)).sum();
        let mut x = r % total.max(1);
        for t in self.templates {
            if x < u64::from(t.weight) {
                return t;
            }
            x -= u64::from(t.weight);
        }
        &self.templates[0]
    }
}

const fn loki(path: &'static str, params: &'static [(&'static str, &'static str)]) -> Call {
    Call {
        path,
        params,
        headers: &[],
    }
}

const fn data(path: &'static str, params: &'static [(&'static str, &'static str)]) -> Call {
    Call {
        path,
        params,
        headers: &[CATEGORIZE],
    }
}

const fn drill(path: &'static str, params: &'static [(&'static str, &'static str)]) -> Call {
    Call {
        path,
        params,
        headers: &[CATEGORIZE, DRILLDOWN],
    }
}

const fn vl(path: &'static str, params: &'static [(&'static str, &'static str)]) -> Call {
    Call {
        path,
        params,
        headers: &[],
    }
}

const QR: &str = "/loki/api/v1/query_range";
const VQ: &str = "/select/logsql/query";
const VSR: &str = "/select/logsql/stats_query_range";

/// `small`: label browser, series and short log queries.
const SMALL: &[Template] = &[
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

/// `heavy`: parsers, label filters and `line_format` over an hour, limit 1000.
const HEAVY: &[Template] = &[
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

/// `long_range`: 6–72 h log and metric queries.
const LONG_RANGE: &[Template] = &[
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

/// `compute`: metric queries over an hour.
const COMPUTE: &[Template] = &[
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

/// `drilldown`: the requests Logs Drilldown sends for one service page.
const DRILLDOWN_T: &[Template] = &[
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

/// Every workload, in report order.
pub(crate) const WORKLOADS: &[Workload] = &[
    Workload {
        name: "small",
        templates: SMALL,
    },
    Workload {
        name: "heavy",
        templates: HEAVY,
    },
    Workload {
        name: "long_range",
        templates: LONG_RANGE,
    },
    Workload {
        name: "compute",
        templates: COMPUTE,
    },
    Workload {
        name: "drilldown",
        templates: DRILLDOWN_T,
    },
];

/// Looks a workload up by name.
pub(crate) fn by_name(name: &str) -> Option<&'static Workload> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// A concrete request: path with query string, and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// Path and query string.
    pub(crate) path_and_query: String,
    /// Headers to send.
    pub(crate) headers: &'static [(&'static str, &'static str)],
}

impl Call {
    /// Fills the placeholders for the window `[start, end)` (Unix ns).
    pub(crate) fn render(&self, start: i64, end: i64) -> Request {
        let subst = |v: &str| -> String {
            if !v.contains('{') || !v.contains('}') {
                return v.to_owned();
            }
            v.replace("{start}", &start.to_string())
                .replace("{end1}", &(end - 1).to_string())
                .replace("{end}", &end.to_string())
                .replace("{start_rfc}", &rfc3339_ms(start))
                .replace("{end_rfc}", &rfc3339_ms(end))
        };
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in self.params {
            q.append_pair(k, &subst(v));
        }
        Request {
            path_and_query: format!("{}?{}", self.path, q.finish()),
            headers: self.headers,
        }
    }
}

/// The request pairs of every workload as Markdown, for the documentation.
pub(crate) fn pairs_markdown() -> String {
    let mut out = String::new();
    for w in WORKLOADS {
        out.push_str(&format!("\n**{}**\n\n| template | weight | window | Loki API (lokivl) | LogsQL (direct) | note |\n|---|---:|---:|---|---|---|\n", w.name));
        for t in w.templates {
            let show = |c: &Call| {
                let q = c
                    .params
                    .iter()
                    .find(|(k, _)| *k == "query" || *k == "match[]")
                    .map_or(String::new(), |(k, v)| format!(" {k}=`{v}`"));
                let extra: Vec<String> = c
                    .params
                    .iter()
                    .filter(|(k, _)| matches!(*k, "limit" | "step" | "field"))
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                format!("`{}`{q} {}", c.path, extra.join(" ")).replace('|', "\\|")
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                t.name,
                t.weight,
                humantime_ns(t.window_ns),
                show(&t.loki),
                show(&t.direct),
                t.note
            ));
        }
    }
    out
}

fn humantime_ns(ns: i64) -> String {
    if ns % HOUR == 0 {
        format!("{}h", ns / HOUR)
    } else {
        format!("{}m", ns / MIN)
    }
}

/// RFC 3339 with exactly three fraction digits, as `Date.toISOString()`.
pub(crate) fn rfc3339_ms(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let ms = ns.rem_euclid(1_000_000_000) / 1_000_000;
    let whole = benches::rfc3339(secs, 0);
    format!("{}.{ms:03}Z", whole.trim_end_matches('Z'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_fills_placeholders_and_encodes() {
        let t = &SMALL[5];
        let r = t.direct.render(1_000_000_000, 2_000_000_000);
        assert_eq!(
            r.path_and_query,
            "/select/logsql/query?query=%7Bnamespace%3D%22prod%22%2Capp%3D%22checkout%22%7D&limit=100&start=1000000000&end=1999999999"
        );
        assert_eq!(
            rfc3339_ms(1_795_321_267_295_847_870),
            "2026-11-22T04:21:07.295Z"
        );
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn every_workload_is_named_weighted_and_loopback_free_of_hosts() {
        for w in WORKLOADS {
            assert!(!w.templates.is_empty());
            assert!(w.max_window() <= 72 * HOUR);
            for t in w.templates {
                assert!(t.weight > 0, "{}", t.name);
                assert!(t.loki.path.starts_with("/loki/api/v1/"), "{}", t.name);
                assert!(t.direct.path.starts_with("/select/logsql/"), "{}", t.name);
            }
        }
        let small = by_name("small").map(|w| w.templates.len());
        assert_eq!(small, Some(7));
        // Weights 2,1,2,1,1,2,1 → r = 0..10 covers every template in order.
        let w = by_name("small").unwrap_or(&WORKLOADS[0]);
        let picked: Vec<&str> = (0..10).map(|r| w.pick(r).name).collect();
        assert_eq!(
            picked,
            [
                "labels",
                "labels",
                "labels_query",
                "label_values_app",
                "label_values_app",
                "label_values_pod",
                "series",
                "logs_15m",
                "logs_15m",
                "logs_filter_1h"
            ]
        );
    }
}
