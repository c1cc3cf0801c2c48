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

/// Entries per stream of the differential dataset.
pub const DIFF_PER_STREAM: i64 = 60;
/// Spacing between entries of one stream in the differential dataset.
pub const DIFF_STEP_NS: i64 = 10_000_000_000;

/// The differential dataset (Loki vs lokivl), starting at `base_ns`.
///
/// Loki only answers for recent data in the reference set-up, so the
/// harness picks the base at record time and stores it in the golden files;
/// the same base always yields the same entries. Kubernetes-style streams
/// carry JSON (flat, nested, arrays, escapes, dashed and dotted keys),
/// logfmt (quoted, empty and bare keys, durations, byte sizes), access logs
/// with IPv4/IPv6 clients, ANSI-coloured lines and lines that are not JSON,
/// with `trace_id`/`span_id` structured metadata on some entries.
pub fn differential_entries(base_ns: i64) -> Vec<Entry> {
    let mut out = Vec::new();
    let levels = ["info", "warn", "error", "debug", "info"];
    let methods = ["GET", "POST", "GET", "DELETE", "PUT", "GET"];
    for i in 0..DIFF_PER_STREAM {
        // Odd sub-second parts keep nanosecond precision honest.
        let t = base_ns + i * DIFF_STEP_NS + (i * 123_457_001) % 1_000_000_000;
        let level = levels[(i % 5) as usize];
        let status = [200, 200, 500, 404, 503, 201, 200][(i % 7) as usize];
        let method = methods[(i % 6) as usize];

        // Two checkout pods with JSON lines.
        for (p, pod) in ["checkout-7d9f-abc12", "checkout-7d9f-xyz34"]
            .iter()
            .enumerate()
        {
            let j = i * 2 + p as i64;
            let mut md = BTreeMap::new();
            if j % 3 == 0 {
                md.insert("trace_id".to_string(), format!("{:016x}", j * 7_919_001));
            }
            if j % 4 == 1 {
                md.insert("span_id".to_string(), format!("s{j}"));
            }
            let line = if j % 11 == 5 {
                // A truncated object: `| json` reports JSONParserErr.
                format!(r#"{{"level":"{level}","msg":"cut off {j}"#)
            } else {
                format!(
                    concat!(
                        r#"{{"level":"{level}","msg":"order {j} \"placed\" by user\\{p}","status":{status},"#,
                        r#""latency_ms":{lat},"took":"{took}ms","size":"{kb}KB","ok":{ok},"#,
                        r#""user":{{"id":{uid},"name":"u{uid}","geo":{{"country":"{cc}"}},"tags":["a","b{j}"]}},"#,
                        r#""http.method":"{method}","req-id":"r-{j}","items":[{j},{k}]}}"#
                    ),
                    level = level,
                    j = j,
                    p = p,
                    status = status,
                    lat = format_args!("{}.{}", j * 3 % 97, j % 10),
                    took = j * 37 % 1200,
                    kb = j % 9 + 1,
                    ok = status < 400,
                    uid = j % 13,
                    cc = ["de", "us", "fr"][(j % 3) as usize],
                    method = method,
                    k = j * 2,
                )
            };
            out.push(Entry {
                time_ns: t + p as i64 * 1_500_000_000,
                stream: labels(&[
                    ("namespace", "prod"),
                    ("app", "checkout"),
                    ("pod", pod),
                    ("container", "app"),
                ]),
                line,
                metadata: md,
            });
        }

        // nginx access logs with IPv4 and IPv6 clients.
        let ip = match i % 6 {
            0 => "10.0.1.12".to_string(),
            1 => format!("10.0.2.{}", i % 250),
            2 => "192.168.7.3".to_string(),
            3 => "2001:db8::1".to_string(),
            4 => format!("172.16.{}.9", i % 20),
            _ => "10.0.1.200".to_string(),
        };
        out.push(Entry {
            time_ns: t + 3_000_000_000,
            stream: labels(&[("namespace", "prod"), ("app", "nginx"), ("pod", "nginx-0")]),
            line: format!(
                r#"{ip} - - [22/Nov/2026:04:{mm:02}:{ss:02} +0000] "{method} /api/v1/items/{i}?q=a&b=<c> HTTP/1.1" {status} {bytes} "-" "curl/8.{v}" 0.{rt:03}"#,
                mm = i / 6,
                ss = (i * 10) % 60,
                bytes = 200 + i * 97 % 5000,
                v = i % 5,
                rt = i * 13 % 1000,
            ),
            metadata: BTreeMap::new(),
        });

        // logfmt worker lines: quoted values, empty values, bare keys,
        // durations, byte sizes and a key that collides with a stream label.
        let extra = match i % 4 {
            0 => " dry_run".to_string(),
            1 => " note=".to_string(),
            2 => format!(" err=\"disk \\\"{}\\\" full\"", i % 3),
            _ => String::new(),
        };
        out.push(Entry {
            time_ns: t + 4_000_000_000,
            stream: labels(&[
                ("namespace", "dev"),
                ("app", "worker"),
                ("pod", "worker-0"),
                ("team", "data"),
            ]),
            line: format!(
                "level={level} app=exporter job=export-{} status={status} took={}ms size={}.{}KiB duration={}s msg=\"batch {i} error count {}\"{extra}",
                i % 3,
                i * 10,
                i % 7 + 1,
                i % 10,
                i % 5,
                i % 4
            ),
            metadata: if i % 5 == 0 {
                labels(&[("trace_id", &format!("w{i:04}"))])
            } else {
                BTreeMap::new()
            },
        });

        // Frontend: ANSI colours, multi-word errors and plain text.
        let line = match i % 4 {
            0 => format!(
                "\u{1b}[31mERROR\u{1b}[0m failed to render page=home user={} took=1.{}s",
                i % 7,
                i % 10
            ),
            1 => format!("\u{1b}[32mINFO\u{1b}[0m rendered page=cart in {}ms", i * 3),
            2 => format!("connection reset by peer while fetching /assets/app-{i}.js"),
            _ => format!("WARN slow response from upstream api-gateway: {}ms", i * 25),
        };
        out.push(Entry {
            time_ns: t + 5_000_000_000,
            stream: labels(&[
                ("namespace", "dev"),
                ("app", "frontend"),
                ("pod", "frontend-1"),
            ]),
            line,
            metadata: BTreeMap::new(),
        });

        // A gateway whose name starts like `api`, mixing JSON and text.
        let line = if i % 3 == 0 {
            format!(
                r#"{{"level":"{level}","route":"/v2/pay","upstream":"10.0.3.{}","duration":"{}ms"}}"#,
                i % 4,
                i * 11
            )
        } else if i % 3 == 1 {
            format!("[ERROR] upstream timeout after {i}ms (retry)")
        } else {
            format!("routed request {i} to api error-free")
        };
        out.push(Entry {
            time_ns: t + 6_000_000_000,
            stream: labels(&[
                ("namespace", "prod"),
                ("app", "api-gateway"),
                ("pod", "gw-0"),
            ]),
            line,
            metadata: if i % 4 == 0 {
                labels(&[("trace_id", &format!("g{i:04}"))])
            } else {
                BTreeMap::new()
            },
        });

        // An ops stream whose service_name comes from `container` (no app),
        // with level words in plain lines and a `severity` metadata field.
        let line = match i % 5 {
            0 => format!("CRITICAL disk /dev/sda{} failing", i % 3),
            1 => format!("backup finished in {}s", i % 40),
            2 => "[WARN] retrying upload".to_string(),
            3 => format!("Fatal: cannot open snapshot {i}"),
            _ => "level=DEBUG msg=\"tick\"".to_string(),
        };
        out.push(Entry {
            time_ns: t + 7_000_000_000,
            stream: labels(&[
                ("namespace", "ops"),
                ("container", "cron"),
                ("job", "backup"),
            ]),
            line,
            metadata: if i % 6 == 1 {
                labels(&[("severity", "warn")])
            } else {
                BTreeMap::new()
            },
        });

        // A stream with none of the service_name candidates (unknown_service)
        // and level keys of several spellings.
        let line = match i % 4 {
            0 => format!(r#"{{"severity":"ERROR","msg":"replica lag {i}s"}}"#),
            1 => r#"{"lvl":"warning","msg":"slow query"}"#.to_string(),
            2 => format!("ts={i} msg=\"checkpoint\" LEVEL=info"),
            _ => "no level here at all".to_string(),
        };
        out.push(Entry {
            time_ns: t + 8_000_000_000,
            stream: labels(&[("namespace", "ops"), ("host", "db-1")]),
            line,
            metadata: BTreeMap::new(),
        });
    }
    out
}
