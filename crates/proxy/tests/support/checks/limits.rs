//! The limit over all streams, and the `[start, end)` bounds to the nanosecond.

use super::log_query::check_log_query;
use super::model::{Model, keep_all, no_parse, stream_is};
use crate::support::dataset::Entry;

/// Runs these checks against lokivl at `base` over `window`.
pub(super) async fn check_limits(base: &str, entries: &[Entry], window: (i64, i64)) {
    let api = stream_is("app", "api");

    // The limit caps entries over all streams, newest first.
    let any = |e: &Entry| !e.stream.is_empty();
    let m = Model {
        select: &any,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{env=~"prod|dev"}"#,
        &m,
        window,
        7,
        true,
        false,
    )
    .await;
    check_log_query(
        base,
        entries,
        r#"{env=~"prod|dev"}"#,
        &m,
        window,
        7,
        false,
        true,
    )
    .await;

    // `start` is inclusive and `end` exclusive, to the nanosecond.
    let mut api_times: Vec<i64> = entries
        .iter()
        .filter(|e| api(e))
        .map(|e| e.time_ns)
        .collect();
    api_times.sort();
    let m = Model {
        select: &api,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{app="api"}"#,
        &m,
        (api_times[3], api_times[9]),
        1000,
        true,
        true,
    )
    .await;
}
