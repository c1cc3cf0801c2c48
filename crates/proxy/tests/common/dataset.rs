//! The deterministic dataset the end-to-end checks ingest and reason about.
//!
//! The checks compute every expected answer from these rows, so a test
//! compares lokivl's values with what the data holds, not with a copy of
//! lokivl's own output.

use std::collections::BTreeMap;

/// First entry time: 2025-01-15T10:00:00Z in nanoseconds.
pub const BASE_NS: i64 = 1_736_935_200_000_000_000;
/// Spacing between entries of one stream.
pub const STEP_NS: i64 = 7_000_000_000;
/// Entries per stream.
pub const PER_STREAM: i64 = 40;

/// One log entry as pushed to VictoriaLogs through its Loki endpoint.
#[derive(Debug, Clone)]
pub struct Entry {
    pub time_ns: i64,
    pub stream: BTreeMap<String, String>,
    pub line: String,
    pub metadata: BTreeMap<String, String>,
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The whole dataset, in no particular order.
pub fn entries() -> Vec<Entry> {
    let mut out = Vec::new();
    let levels = ["info", "warn", "error", "debug"];
    for i in 0..PER_STREAM {
        // Odd sub-second parts keep nanosecond precision honest.
        let t = BASE_NS + i * STEP_NS + (i * 123_457) % 1_000_000_000;
        let level = levels[(i % 4) as usize];
        let status = [200, 200, 500, 404, 503][(i % 5) as usize];

        // JSON lines with structured metadata on some entries.
        let mut md = BTreeMap::new();
        if i % 3 == 0 {
            md.insert("trace_id".to_string(), format!("t{:04x}", i * 7919));
        }
        out.push(Entry {
            time_ns: t,
            stream: labels(&[("app", "api"), ("env", "prod")]),
            line: format!(
                r#"{{"level":"{level}","status":{status},"msg":"request {i} done","path":"/v1/items/{i}"}}"#
            ),
            metadata: md,
        });

        // A stream whose name starts like `api`: catches unanchored regexes.
        out.push(Entry {
            time_ns: t + 1_000_000_000,
            stream: labels(&[("app", "api-gateway"), ("env", "prod")]),
            line: if i % 5 == 0 {
                format!("[ERROR] upstream timeout after {i}ms (retry)")
            } else {
                format!("routed request {i} to api error-free")
            },
            metadata: BTreeMap::new(),
        });

        // logfmt lines.
        out.push(Entry {
            time_ns: t + 2_000_000_000,
            stream: labels(&[("app", "worker"), ("env", "dev"), ("team", "data")]),
            line: format!(
                "level={level} job=export-{} status={status} took={}ms msg=\"batch {i} error count {}\"",
                i % 3,
                i * 10,
                i % 4
            ),
            metadata: BTreeMap::new(),
        });
    }
    out
}

/// The Loki push body for the dataset (JSON form, values as `[ns, line, {metadata}]`).
pub fn push_body(entries: &[Entry]) -> String {
    let mut streams: BTreeMap<Vec<(String, String)>, Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        let key: Vec<(String, String)> = e.stream.clone().into_iter().collect();
        streams.entry(key).or_default().push(e);
    }
    let streams: Vec<serde_json::Value> = streams
        .into_iter()
        .map(|(labels, es)| {
            let stream: serde_json::Map<String, serde_json::Value> = labels
                .into_iter()
                .map(|(k, v)| (k, serde_json::Value::String(v)))
                .collect();
            let values: Vec<serde_json::Value> = es
                .iter()
                .map(|e| {
                    let mut v = vec![
                        serde_json::Value::String(e.time_ns.to_string()),
                        serde_json::Value::String(e.line.clone()),
                    ];
                    if !e.metadata.is_empty() {
                        v.push(serde_json::to_value(&e.metadata).expect("metadata is a map"));
                    }
                    serde_json::Value::Array(v)
                })
                .collect();
            serde_json::json!({"stream": stream, "values": values})
        })
        .collect();
    serde_json::json!({ "streams": streams }).to_string()
}

/// Time of the newest entry.
pub fn last_ns(entries: &[Entry]) -> i64 {
    entries.iter().map(|e| e.time_ns).max().unwrap_or(BASE_NS)
}
