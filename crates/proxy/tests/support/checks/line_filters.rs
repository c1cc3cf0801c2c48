//! Line filters: `|=` is a literal substring, `|~` unanchored RE2, and `or`.

use super::log_query::check_log_query;
use super::model::{Model, keep_all, no_parse, stream_is};
use crate::support::dataset::Entry;

/// Runs these checks against lokivl at `base` over `window`.
pub(super) async fn check_line_filters(base: &str, entries: &[Entry], window: (i64, i64)) {
    let prod = stream_is("env", "prod");
    let worker = stream_is("app", "worker");

    // `|=` is a literal substring: brackets are not a regex class.
    let bracket = |e: &Entry| prod(e) && e.line.contains("[ERROR]");
    let m = Model {
        select: &bracket,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{env="prod"} |= "[ERROR]""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    let no_error = |e: &Entry| prod(e) && !e.line.contains("error");
    let m = Model {
        select: &no_error,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{env="prod"} != "error""#,
        &m,
        window,
        1000,
        false,
        true,
    )
    .await;
    let either =
        |e: &Entry| prod(e) && (e.line.contains("(retry)") || e.line.contains("items/7\""));
    let m = Model {
        select: &either,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{env="prod"} |= "(retry)" or "items/7\"""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;

    // Regex line filters are unanchored RE2.
    let five =
        |e: &Entry| worker(e) && (e.line.contains("status=500") || e.line.contains("status=503"));
    let m = Model {
        select: &five,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{app="worker"} |~ "status=5\\d\\d""#,
        &m,
        window,
        1000,
        true,
        false,
    )
    .await;
    let not_five =
        |e: &Entry| worker(e) && !(e.line.contains("status=500") || e.line.contains("status=503"));
    let m = Model {
        select: &not_five,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{app="worker"} !~ "status=5\\d\\d""#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
}
