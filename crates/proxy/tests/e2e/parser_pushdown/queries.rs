//! The metric queries both lokivl instances answer, as templates: `SEL` is
//! the stream selector, `PARSER` is `json` or `logfmt`. Each names the path
//! lokivl must take on clean raw JSON with the pushdown on, so the test
//! cannot pass by never pushing down.

/// The path a query takes on clean JSON stored raw, pushdown on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Path {
    /// One stats query with `unpack_json`, no row query.
    Pushed,
    /// A `sum` that needs no label and filters on none: the parser is
    /// dropped, VictoriaLogs counts, no `unpack_json`, no row query.
    NoParser,
    /// The proxy path (no finite label set, or a function VictoriaLogs
    /// does not compute as Loki does): a row query.
    Proxy,
    /// Not asserted (either path answers the same).
    Either,
}

/// `(template, path on clean raw JSON with the pushdown on)`.
pub(super) const QUERIES: &[(&str, Path)] = &[
    ("sum(rate(SEL | PARSER | status >= 400 [5m]))", Path::Pushed),
    ("sum(rate(SEL | PARSER [5m]))", Path::NoParser),
    (
        "sum(rate(SEL | PARSER | status >= 400 [5m])) / sum(rate(SEL | PARSER [5m]))",
        Path::Pushed,
    ),
    (
        "avg_over_time(SEL | PARSER | unwrap latency_ms [5m]) by (app)",
        Path::Pushed,
    ),
    (
        r#"max_over_time(SEL | PARSER | unwrap latency_ms | __error__="" [5m]) by (app)"#,
        Path::Pushed,
    ),
    (
        r#"sum by (method) (count_over_time(SEL | PARSER | method=~"POST|PUT" [1m]))"#,
        Path::Pushed,
    ),
    (
        r#"sum by (status) (count_over_time(SEL | PARSER | __error__="" [5m]))"#,
        Path::Pushed,
    ),
    (
        "sum(count_over_time(SEL | PARSER | status == 500 [5m]))",
        Path::Pushed,
    ),
    (
        "sum(count_over_time(SEL | PARSER | status != 200 [5m]))",
        Path::Pushed,
    ),
    (
        r#"sum by (level) (count_over_time(SEL | PARSER | level="error" [5m]))"#,
        Path::Pushed,
    ),
    (
        r#"sum(count_over_time(SEL |= "GET" | PARSER | latency_ms > 100 and method="GET" [5m]))"#,
        Path::Pushed,
    ),
    (
        "sum(bytes_over_time(SEL | PARSER | status >= 500 [5m]))",
        Path::Either,
    ),
    (
        r#"sum by (app) (stddev_over_time(SEL | PARSER | unwrap latency_ms | __error__="" [5m]))"#,
        Path::Either,
    ),
    ("rate(SEL | PARSER [5m])", Path::Proxy),
    (
        "quantile_over_time(0.99, SEL | PARSER | unwrap latency_ms [5m]) by (app)",
        Path::Proxy,
    ),
    (
        "sum by (app, status) (count_over_time(SEL | PARSER | status >= 500 [5m]))",
        Path::Pushed,
    ),
    (
        "sum by (method, level) (rate(SEL | PARSER | latency_ms >= 50 [5m]))",
        Path::Pushed,
    ),
    (
        r#"min_over_time(SEL | PARSER | unwrap latency_ms | __error__="" [5m]) by (method)"#,
        Path::Either,
    ),
    (
        "sum by (app) (sum_over_time(SEL | PARSER | status >= 400 | unwrap latency_ms [5m]))",
        Path::Either,
    ),
    (
        r#"sum(count_over_time(SEL | PARSER | status >= 400 or level="error" [5m]))"#,
        Path::Either,
    ),
    (
        "topk(2, sum by (method) (rate(SEL | PARSER [5m])))",
        Path::Pushed,
    ),
    (
        r#"sum by (status) (count_over_time(SEL | PARSER | status=~"5.." [5m]))"#,
        Path::Pushed,
    ),
    (
        r#"avg_over_time(SEL | PARSER | unwrap status | __error__="" [5m]) by (level)"#,
        Path::Either,
    ),
    (
        "sum by (app_extracted, kind_extracted) (count_over_time(SEL | PARSER [5m]))",
        Path::Either,
    ),
    (
        "sum by (level_extracted, level) (count_over_time(SEL | PARSER [5m]))",
        Path::Either,
    ),
    (
        "sum(count_over_time(SEL | PARSER | latency_ms > 100.5 [5m]))",
        Path::Either,
    ),
    (
        r#"sum(count_over_time(SEL | PARSER | __error__!="" [5m]))"#,
        Path::Either,
    ),
    (
        "sum by (__error__) (count_over_time(SEL | PARSER [5m]))",
        Path::Either,
    ),
    (
        "sum by (latency_ms) (count_over_time(SEL | PARSER | latency_ms < 10 [5m]))",
        Path::Either,
    ),
    (
        r#"sum by (status) (count_over_time(SEL | PARSER | status="" [5m]))"#,
        Path::Either,
    ),
    (
        "sum by (method) (count_over_time(SEL | PARSER | drop level [5m]))",
        Path::Either,
    ),
    (
        r#"sum by (level) (count_over_time(SEL | PARSER | line_format "{{.status}}" |= "5" [5m]))"#,
        Path::Either,
    ),
    (
        r#"sum by (status) (count_over_time(SEL | PARSER | status >= 400 | __error__="" [5m]))"#,
        Path::Pushed,
    ),
    // Loki refuses `by` here: both must give the same parse error.
    (
        "count_over_time(SEL | PARSER | status >= 400 [5m]) by (app)",
        Path::Either,
    ),
    // `without`, or no grouping: the label set is not finite.
    (
        "sum without (level) (count_over_time(SEL | PARSER | status >= 400 [5m]))",
        Path::Proxy,
    ),
    (
        "count_over_time(SEL | PARSER | status >= 400 [5m])",
        Path::Proxy,
    ),
    // Ranges that are not a multiple of the step, and an offset.
    (
        "sum by (status) (count_over_time(SEL | PARSER | status >= 400 [90s]))",
        Path::Pushed,
    ),
    (
        "sum(rate(SEL | PARSER | latency_ms > 100 [7m]))",
        Path::Pushed,
    ),
    (
        "sum by (method) (count_over_time(SEL | PARSER | status >= 400 [5m] offset 10m))",
        Path::Either,
    ),
    // Labels lokivl derives per entry, and stages after the parser that
    // the pushdown may refuse.
    (
        "sum by (detected_level, service_name) (count_over_time(SEL | PARSER | status >= 400 [5m]))",
        Path::Either,
    ),
    (
        r#"sum by (status) (count_over_time(SEL | PARSER | status >= 400 |= "GET" [5m]))"#,
        Path::Either,
    ),
    (
        "sum by (code) (count_over_time(SEL | PARSER | label_format code=status | code >= 400 [5m]))",
        Path::Either,
    ),
    (
        r#"last_over_time(SEL | PARSER | unwrap latency_ms | __error__="" [5m]) by (app)"#,
        Path::Either,
    ),
    (
        "sum by (status) (count_over_time(SEL | PARSER | status >= 400 [5m])) > 1",
        Path::Pushed,
    ),
];

/// The JSON query with a parameter list (`| json status="status"`), which
/// has no logfmt twin of the same meaning.
pub(super) const JSON_ONLY: &[(&str, Path)] = &[(
    r#"sum by (status, code) (count_over_time(SEL | json status="status", code="status" | status >= 400 [5m]))"#,
    Path::Either,
)];

/// `template` with `| __error__=""` closing each range's pipeline, as a
/// user keeps Loki from refusing a metric over lines the parser or a label
/// filter failed on (so dirty streams answer values, not only errors);
/// `None` when the template already filters on `__error__`. The pushed
/// path stays pushed; the parser-free `sum` now filters on a label.
pub(super) fn tolerant(template: &str, path: Path) -> Option<(String, Path)> {
    if template.contains("__error__") {
        return None;
    }
    let t = template
        .replace(" [5m]", r#" | __error__="" [5m]"#)
        .replace(" [1m]", r#" | __error__="" [1m]"#);
    let path = match path {
        Path::NoParser => Path::Either,
        p => p,
    };
    Some((t, path))
}

/// `template` with `sel` and `parser` filled in.
pub(super) fn fill(template: &str, sel: &str, parser: &str) -> String {
    template.replace("SEL", sel).replace("PARSER", parser)
}
