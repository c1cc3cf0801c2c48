//! The Drilldown requests `differential_drilldown` asks Loki and lokivl,
//! with Grafana's parameter shapes, and how each answer is compared.

/// How lokivl's answer is compared with Loki's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `index/stats`: `streams`, `chunks`, `entries` exact; `bytes` is
    /// Loki's KiB-rounded chunk size, so only "both zero or both not".
    Stats,
    /// `index/volume`: result type, series (labels) in order and timestamps
    /// exact; values are Loki's chunk-size estimates, so not compared.
    Volume,
    /// `index/volume_range`: result type and series set exact; lokivl's
    /// bucket timestamps must be among Loki's (Loki spreads a chunk's bytes
    /// over every step of the chunk's span, lokivl reports the steps with data).
    VolumeRange,
    /// `detected_labels`: the list sorted by label, exact.
    Labels,
    /// `detected_fields`: the fields sorted by label, exact (every key).
    Fields,
    /// `detected_field/{name}/values`: the value set and `limit`, exact.
    Values,
    /// `patterns`: envelope, each item's shape, and per level the total
    /// count of lines (tokenization differs; the counts must not).
    Patterns,
    /// `patterns` where Loki's pattern ingester prunes small clusters (it
    /// answers none for these 60 logfmt lines over five levels) while lokivl
    /// reports every cluster of the lines mined: envelope and shapes only.
    PatternsShape,
    /// `query`, `query_range`, `labels`: compared as the differential
    /// suites compare them (`support::compare`), exact.
    Query,
}

/// One request of the comparison.
pub(crate) struct Req {
    pub(crate) id: &'static str,
    pub(crate) path: &'static str,
    pub(crate) mode: Mode,
    /// `(key, value)`; values `@s`, `@e` are the range in ns, `@S`, `@E` in RFC3339.
    pub(crate) params: &'static [(&'static str, &'static str)],
}

pub(crate) const REQS: &[Req] = &[
    Req {
        id: "stats.service",
        path: "/loki/api/v1/index/stats",
        mode: Mode::Stats,
        params: &[("query", r#"{service_name="checkout"}"#)],
    },
    Req {
        id: "stats.env",
        path: "/loki/api/v1/index/stats",
        mode: Mode::Stats,
        params: &[("query", r#"{env="prod"}"#)],
    },
    Req {
        id: "stats.regex",
        path: "/loki/api/v1/index/stats",
        mode: Mode::Stats,
        params: &[("query", r#"{service_name=~"check.*|front.*"}"#)],
    },
    Req {
        id: "stats.none",
        path: "/loki/api/v1/index/stats",
        mode: Mode::Stats,
        params: &[("query", r#"{service_name="nope"}"#)],
    },
    Req {
        id: "volume.services",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[("query", r#"{service_name=~".+"}"#), ("limit", "5000")],
    },
    Req {
        id: "volume.search",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[
            ("query", r#"{service_name=~"(?i).*CHECK.*"}"#),
            ("limit", "5000"),
        ],
    },
    Req {
        id: "volume.two_matchers",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[("query", r#"{service_name=~".+", env=~".+"}"#)],
    },
    Req {
        id: "volume.targets",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[
            ("query", r#"{service_name=~".+"}"#),
            ("targetLabels", "env,cluster"),
        ],
    },
    Req {
        id: "volume.target_env",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[
            ("query", r#"{service_name="checkout"}"#),
            ("targetLabels", "env"),
        ],
    },
    Req {
        id: "volume.labels",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[("query", r#"{env=~".+"}"#), ("aggregateBy", "labels")],
    },
    Req {
        id: "volume.labels_limit",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[
            ("query", r#"{service_name=~".+"}"#),
            ("aggregateBy", "labels"),
            ("limit", "2"),
        ],
    },
    Req {
        id: "volume.limit",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[("query", r#"{service_name=~".+"}"#), ("limit", "1")],
    },
    Req {
        id: "volume.labels_targets",
        path: "/loki/api/v1/index/volume",
        mode: Mode::Volume,
        params: &[
            ("query", r#"{service_name=~".+"}"#),
            ("aggregateBy", "labels"),
            ("targetLabels", "env,namespace"),
        ],
    },
    Req {
        id: "volume_range.services",
        path: "/loki/api/v1/index/volume_range",
        mode: Mode::VolumeRange,
        params: &[("query", r#"{service_name=~".+"}"#), ("step", "60000ms")],
    },
    Req {
        id: "volume_range.step5s",
        path: "/loki/api/v1/index/volume_range",
        mode: Mode::VolumeRange,
        params: &[
            ("query", r#"{service_name="payments"}"#),
            ("step", "5000ms"),
        ],
    },
    Req {
        id: "volume_range.labels",
        path: "/loki/api/v1/index/volume_range",
        mode: Mode::VolumeRange,
        params: &[
            ("query", r#"{service_name=~".+"}"#),
            ("aggregateBy", "labels"),
            ("step", "60000ms"),
        ],
    },
    Req {
        id: "volume_range.limit",
        path: "/loki/api/v1/index/volume_range",
        mode: Mode::VolumeRange,
        params: &[
            ("query", r#"{service_name=~".+"}"#),
            ("limit", "1"),
            ("step", "60000ms"),
        ],
    },
    Req {
        id: "labels.empty_query",
        path: "/loki/api/v1/detected_labels",
        mode: Mode::Labels,
        params: &[("query", "")],
    },
    Req {
        id: "labels.service",
        path: "/loki/api/v1/detected_labels",
        mode: Mode::Labels,
        params: &[("query", r#"{service_name="checkout"}"#)],
    },
    Req {
        id: "labels.regex",
        path: "/loki/api/v1/detected_labels",
        mode: Mode::Labels,
        params: &[("query", r#"{service_name=~"check.*|pay.*"}"#)],
    },
    Req {
        id: "fields.logfmt_pipeline",
        path: "/loki/api/v1/detected_fields",
        mode: Mode::Fields,
        params: &[(
            "query",
            r#"{service_name="checkout"} | json | logfmt | drop __error__, __error_details__"#,
        )],
    },
    Req {
        id: "fields.json_pipeline",
        path: "/loki/api/v1/detected_fields",
        mode: Mode::Fields,
        params: &[(
            "query",
            r#"{service_name="payments"} | json | logfmt | drop __error__, __error_details__"#,
        )],
    },
    Req {
        id: "fields.metadata_only",
        path: "/loki/api/v1/detected_fields",
        mode: Mode::Fields,
        params: &[("query", r#"{service_name="frontend"}"#), ("limit", "1000")],
    },
    Req {
        id: "values.logfmt",
        path: "/loki/api/v1/detected_field/status/values",
        mode: Mode::Values,
        params: &[("query", r#"{service_name="checkout"} | logfmt"#)],
    },
    Req {
        id: "values.json_path",
        path: "/loki/api/v1/detected_field/user_id/values",
        mode: Mode::Values,
        params: &[("query", r#"{service_name="payments"}"#), ("limit", "1000")],
    },
    Req {
        id: "values.metadata",
        path: "/loki/api/v1/detected_field/trace_id/values",
        mode: Mode::Values,
        params: &[("query", r#"{service_name="payments"}"#)],
    },
    Req {
        id: "values.detected_level",
        path: "/loki/api/v1/detected_field/detected_level/values",
        mode: Mode::Values,
        params: &[("query", r#"{service_name="checkout"}"#)],
    },
    Req {
        id: "patterns.logfmt",
        path: "/loki/api/v1/patterns",
        mode: Mode::PatternsShape,
        params: &[
            ("query", r#"{service_name="checkout"}"#),
            ("step", "5000ms"),
        ],
    },
    Req {
        id: "patterns.plain",
        path: "/loki/api/v1/patterns",
        mode: Mode::Patterns,
        params: &[
            ("query", r#"{service_name="frontend"}"#),
            ("step", "5000ms"),
        ],
    },
    Req {
        id: "patterns.json",
        path: "/loki/api/v1/patterns",
        mode: Mode::Patterns,
        params: &[
            ("query", r#"{service_name="payments"}"#),
            ("step", "60000ms"),
        ],
    },
];
