//! Stream selectors: both encodings and directions, anchored `=~`, `!=`.

use super::log_query::check_log_query;
use super::model::{Model, keep_all, no_parse, stream_is};
use crate::support::dataset::Entry;

/// Runs these checks against lokivl at `base` over `window`.
pub(super) async fn check_selectors(base: &str, entries: &[Entry], window: (i64, i64)) {
    let api = stream_is("app", "api");

    // Plain selector, both encodings, both directions, limit.
    for categorize in [false, true] {
        for backward in [true, false] {
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
                window,
                20,
                backward,
                categorize,
            )
            .await;
        }
    }

    // `=~` matches the whole value: `api` does not select `api-gateway`.
    let m = Model {
        select: &api,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{app=~"api"}"#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    let api_star = |e: &Entry| e.stream["app"].starts_with("api");
    let m = Model {
        select: &api_star,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{app=~"api.*"}"#,
        &m,
        window,
        1000,
        true,
        true,
    )
    .await;
    let not_api = |e: &Entry| e.stream["app"] != "api";
    let m = Model {
        select: &not_api,
        parse: &no_parse,
        keep: &keep_all,
    };
    check_log_query(
        base,
        entries,
        r#"{env=~".+", app!="api"}"#,
        &m,
        window,
        1000,
        true,
        false,
    )
    .await;
}
