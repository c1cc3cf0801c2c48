//! Loki's time formats for `start`/`end`.

use serde_json::Value;

use crate::support::client::{self, url};
use crate::support::dataset::{BASE_NS, Entry};

/// Loki's time formats: RFC3339, seconds, float seconds, nanoseconds.
pub(super) async fn check_time_formats(base: &str, entries: &[Entry]) {
    let api_count = |start: i64, end: i64| {
        entries
            .iter()
            .filter(|e| e.stream["app"] == "api" && e.time_ns >= start && e.time_ns < end)
            .count()
    };
    let start_s = BASE_NS / 1_000_000_000 + 60; // 10 digits: seconds
    let end_s = start_s + 120;
    let cases = [
        (start_s.to_string(), end_s.to_string()),
        (format!("{start_s}.0"), format!("{end_s}.000")),
        (
            "2025-01-15T10:01:00Z".to_string(),
            "2025-01-15T10:03:00.000Z".to_string(),
        ),
        (
            "2025-01-15T11:01:00+01:00".to_string(),
            "2025-01-15T11:03:00+01:00".to_string(),
        ),
        (
            (start_s * 1_000_000_000).to_string(),
            (end_s * 1_000_000_000).to_string(),
        ),
    ];
    let want = api_count(start_s * 1_000_000_000, end_s * 1_000_000_000);
    assert!(want > 0);
    for (start, end) in cases {
        let u = url(
            base,
            "/loki/api/v1/query_range",
            &[
                ("query", r#"{app="api"}"#),
                ("start", &start),
                ("end", &end),
                ("limit", "1000"),
            ],
        );
        let (status, _, body) = client::try_get(&u, &[])
            .await
            .map(client::Answer::parts)
            .expect("lokivl answers");
        assert_eq!(status, 200, "{start}..{end}: {body}");
        let got: Value = serde_json::from_str(&body).expect("JSON");
        let n: usize = got["data"]["result"]
            .as_array()
            .expect("result")
            .iter()
            .map(|s| s["values"].as_array().expect("values").len())
            .sum();
        assert_eq!(n, want, "entries for start={start} end={end}");
    }
}
