//! The value checks run by the end-to-end suite, against real VictoriaLogs or
//! against its golden responses.
//!
//! Every expectation is computed from the dataset by a small model of Loki's
//! semantics (selector, line filters, parsers, label filters, ordering,
//! limit), so these checks assert the lines the data holds.

mod errors;
mod labels;
mod limits;
mod line_filters;
mod log_query;
mod model;
mod operational;
mod parsers;
mod releases;
mod selectors;
mod time_formats;

use serde_json::Value;

use super::client::{self, url};
use super::dataset::{self, BASE_NS};

/// Runs every check against lokivl at `base`.
pub async fn run_all(base: &str) {
    let entries = dataset::entries();
    let first = BASE_NS - 1_000_000_000;
    let last = dataset::last_ns(&entries) + 1_000_000_000;
    let (s, e) = (first.to_string(), last.to_string());
    let range = [("start", s.as_str()), ("end", e.as_str())];
    let window = (first, last);

    labels::check_labels(base, &range).await;
    selectors::check_selectors(base, &entries, window).await;
    line_filters::check_line_filters(base, &entries, window).await;
    parsers::check_parsers(base, &entries, window).await;
    limits::check_limits(base, &entries, window).await;
    time_formats::check_time_formats(base, &entries).await;
    releases::check_end(base, &entries).await;
    releases::check_unaligned_windows(base, &entries).await;
    errors::check_instant_and_errors(base).await;
    operational::check_operational(base).await;
}

/// GETs `path` and decodes the JSON of its 200 answer.
async fn get_json(base: &str, path: &str, params: &[(&str, &str)]) -> Value {
    let (status, _, body) = client::try_get(&url(base, path, params), &[])
        .await
        .map(client::Answer::parts)
        .expect("lokivl answers");
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).expect("valid JSON")
}
