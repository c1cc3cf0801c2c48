//! Parsers and label filters: parsed values and label categories.

use super::log_query::check_log_query;
use super::model::{Labels, Model, parse_json, parse_logfmt, stream_is};
use crate::support::dataset::Entry;

/// Runs these checks against lokivl at `base` over `window`.
pub(super) async fn check_parsers(base: &str, entries: &[Entry], window: (i64, i64)) {
    let api = stream_is("app", "api");
    let worker = stream_is("app", "worker");

    // Parsers and label filters: values and label categories.
    let level_error = |l: &Labels| l.get("level").is_some_and(|v| v == "error");
    let m = Model {
        select: &api,
        parse: &parse_json,
        keep: &level_error,
    };
    check_log_query(
        base,
        entries,
        r#"{app="api"} | json | level="error""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    check_log_query(
        base,
        entries,
        r#"{app="api"} | json | level="error""#,
        &m,
        window,
        1000,
        true,
        false,
    )
    .await;
    let status_5xx = |l: &Labels| {
        l.get("status")
            .and_then(|v| v.parse::<f64>().ok())
            .is_some_and(|v| v >= 500.0)
    };
    let m = Model {
        select: &worker,
        parse: &parse_logfmt,
        keep: &status_5xx,
    };
    check_log_query(
        base,
        entries,
        r#"{app="worker"} | logfmt | status >= 500"#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    check_log_query(
        base,
        entries,
        r#"{app="worker"} | logfmt | status >= 500"#,
        &m,
        window,
        1000,
        false,
        false,
    )
    .await;
    let job_re = |l: &Labels| {
        l.get("job")
            .is_some_and(|v| v == "export-1" || v == "export-2")
    };
    let m = Model {
        select: &worker,
        parse: &parse_logfmt,
        keep: &job_re,
    };
    check_log_query(
        base,
        entries,
        r#"{app="worker"} | logfmt | job=~"export-[12]""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
}
