//! What VictoriaLogs v1.26 and v1.51 read differently, checked against the
//! data: windows that do not start on a bucket boundary (the `offset` of
//! time buckets changed sign) and the query's `end` (inclusive and widened
//! to the last written unit on v1.26, exclusive on v1.51). lokivl must
//! answer Loki's `[start, end)` and `(t − range, t]` to the nanosecond on
//! both; the suite runs live on one release and replays the goldens of
//! each.

use serde_json::Value;

use super::get_json;
use crate::support::dataset::{BASE_NS, Entry};

const SEC: i64 = 1_000_000_000;

fn prod(e: &Entry) -> bool {
    e.stream.get("env").is_some_and(|v| v == "prod")
}

/// Log queries whose `end` lies on, just after or a whole second before an entry.
pub(super) async fn check_end(base: &str, entries: &[Entry]) {
    // `api` entries at +7.000123457 s and `api-gateway` at +1 s and +8.000123457 s.
    let api_1 = BASE_NS + 7 * SEC + 123_457;
    let ends = [
        BASE_NS + SEC,         // on the gateway entry: excluded
        BASE_NS + SEC + 1,     // one nanosecond after: included
        BASE_NS + 7 * SEC + 1, // v1.26 would widen `end` to the whole second
        api_1,                 // on the api entry: excluded
        api_1 + 1,             // included
        BASE_NS + 8 * SEC,     // a whole second with an entry 123 µs later
    ];
    let start = BASE_NS - SEC;
    for end in ends {
        let want = entries
            .iter()
            .filter(|e| prod(e) && e.time_ns >= start && e.time_ns < end)
            .count();
        let (s, e) = (start.to_string(), end.to_string());
        let got = get_json(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", r#"{env="prod"}"#),
                ("start", &s),
                ("end", &e),
                ("limit", "1000"),
            ],
        )
        .await;
        let n: usize = got["data"]["result"]
            .as_array()
            .expect("result")
            .iter()
            .map(|s| s["values"].as_array().expect("values").len())
            .sum();
        assert_eq!(n, want, "entries in [{start}, {end})");
    }
}

/// Entries of `{env="prod"}` in Loki's window `(t − 1m, t]`.
fn in_minute(entries: &[Entry], t: i64) -> usize {
    entries
        .iter()
        .filter(|e| prod(e) && e.time_ns > t - 60 * SEC && e.time_ns <= t)
        .count()
}

/// `sum(count_over_time(…[1m]))` at instants off the minute grid, on an
/// entry and just before one, and over a range (whose steps Loki aligns
/// to the step, so its windows start one nanosecond past a minute).
pub(super) async fn check_unaligned_windows(base: &str, entries: &[Entry]) {
    let query = r#"sum(count_over_time({env="prod"}[1m]))"#;
    let api_1 = BASE_NS + 7 * SEC + 123_457;
    for t in [
        BASE_NS + 3 * 60 * SEC + 57 * SEC + 1, // the issue's case: …:03:57.000000001
        api_1,                                 // the window's end on an entry: included
        api_1 - 1,
        BASE_NS + 8 * SEC,
    ] {
        let time = t.to_string();
        let got = get_json(
            base,
            "/loki/api/v1/query",
            &[("query", query), ("time", &time)],
        )
        .await;
        let want = in_minute(entries, t);
        assert!(want > 0, "the dataset has entries before {t}");
        assert_eq!(
            got["data"]["result"][0]["value"][1],
            Value::String(want.to_string()),
            "{query} at {t}: {got}"
        );
    }

    let start = BASE_NS + 57 * SEC + 1;
    let end = start + 4 * 60 * SEC;
    let (s, e) = (start.to_string(), end.to_string());
    let got = get_json(
        base,
        "/loki/api/v1/query_range",
        &[("query", query), ("start", &s), ("end", &e), ("step", "60")],
    )
    .await;
    let values: Vec<&Value> = got["data"]["result"][0]["values"]
        .as_array()
        .expect("one series")
        .iter()
        .map(|p| &p[1])
        .collect();
    // Loki aligns a metric range query's start down and its end up to the step.
    let first = start - start.rem_euclid(60 * SEC);
    let want: Vec<Value> = (0..6)
        .map(|k| Value::String(in_minute(entries, first + k * 60 * SEC).to_string()))
        .collect();
    assert_eq!(
        values,
        want.iter().collect::<Vec<_>>(),
        "{query} from {start} by 60 s"
    );
}
