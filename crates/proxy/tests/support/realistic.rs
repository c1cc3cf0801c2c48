//! The datasets the differential suites push, as real shippers store them.
//!
//! * [`Dataset::Current`]: the hand-made differential dataset
//!   ([`super::dataset::differential_entries`]), odd labels and structured
//!   metadata, pushed through Loki's push API to both servers.
//! * [`Dataset::StreamLabels`]: what Promtail, Alloy or Fluent Bit push with
//!   Kubernetes service discovery: the stream labels `namespace, app, pod,
//!   container, cluster, env` (one stream has no `app`) and nothing else: no
//!   `service_name`, no structured metadata, no `detected_level`. Lines mix
//!   JSON, logfmt and plain text with level words in every spelling and
//!   position Loki's level detection knows, and lines with none.
//! * [`Dataset::Otel`]: what an OpenTelemetry collector's `otlphttp`
//!   exporter sends: the same OTLP protobuf to Loki's `/otlp/v1/logs`
//!   (`service.name` → `service_name` label, `k8s.*` → labels, severity and
//!   attributes → structured metadata) and to VictoriaLogs'
//!   `/insert/opentelemetry/v1/logs` (resource attributes as stream fields
//!   `service.name`…, `severity_text`/`severity_number` in v1.51, one
//!   `severity` field in v1.26).
//!
//! Every entry lies in `[base, base + 10 min)`, like the current dataset, so
//! the suites' default ranges hold all of it.

use std::collections::BTreeMap;

use super::backend::VictoriaLogs;
use super::dataset::{self, Entry};
use super::loki::Loki;
use super::otlp;

/// Entries per stream (one every [`STEP_NS`]).
pub const PER_STREAM: i64 = 60;
/// Spacing between entries of one stream.
pub const STEP_NS: i64 = 10_000_000_000;

/// One of the datasets a differential suite runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dataset {
    Current,
    StreamLabels,
    Otel,
}

impl Dataset {
    /// Every dataset, the current one first.
    pub const ALL: [Dataset; 3] = [Dataset::Current, Dataset::StreamLabels, Dataset::Otel];

    /// The name in golden directories, data files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Dataset::Current => "current",
            Dataset::StreamLabels => "stream-labels",
            Dataset::Otel => "otel",
        }
    }

    /// Pushes the dataset starting at `base_ns` to Loki and VictoriaLogs,
    /// each through the endpoint its real shipper uses, and makes it
    /// searchable in VictoriaLogs.
    pub async fn push(self, base_ns: i64, loki: &Loki, vl: &VictoriaLogs) {
        match self {
            Dataset::Current | Dataset::StreamLabels => loki.push(self.loki_json(base_ns)).await,
            Dataset::Otel => {
                let body = otlp::encode(&otel_resources(base_ns));
                let status = loki
                    .post_bytes("/otlp/v1/logs", "application/x-protobuf", body)
                    .await;
                assert!(status == 204 || status == 200, "Loki OTLP push: {status}");
            }
        }
        self.push_victorialogs(base_ns, vl).await;
    }

    /// The VictoriaLogs half of [`Dataset::push`] (a golden top-up pushes
    /// only there).
    pub async fn push_victorialogs(self, base_ns: i64, vl: &VictoriaLogs) {
        match self {
            Dataset::Current | Dataset::StreamLabels => vl.ingest(self.loki_json(base_ns)).await,
            Dataset::Otel => vl.ingest_otlp(otlp::encode(&otel_resources(base_ns))).await,
        }
    }

    /// The Loki push body of the JSON datasets (OTel's is protobuf).
    fn loki_json(self, base_ns: i64) -> String {
        match self {
            Dataset::Current => dataset::push_body(&dataset::differential_entries(base_ns)),
            Dataset::StreamLabels => dataset::push_body(&stream_label_entries(base_ns)),
            Dataset::Otel => unreachable!("the OTel dataset is pushed as OTLP"),
        }
    }
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Odd sub-second parts keep nanosecond precision honest.
fn at(base_ns: i64, i: i64, offset_s: i64) -> i64 {
    base_ns + i * STEP_NS + offset_s * 1_000_000_000 + (i * 123_457_001) % 1_000_000_000
}

/// The stream-labels-only dataset (see the module doc).
pub fn stream_label_entries(base_ns: i64) -> Vec<Entry> {
    let mut out = Vec::new();
    let k8s = |ns: &str, app: &str, pod: &str, container: &str, env: &str| {
        let mut l = labels(&[
            ("namespace", ns),
            ("pod", pod),
            ("container", container),
            ("cluster", "eu-1"),
            ("env", env),
        ]);
        if !app.is_empty() {
            l.insert("app".into(), app.into());
        }
        l
    };
    let push = |out: &mut Vec<Entry>, t: i64, stream: BTreeMap<String, String>, line: String| {
        out.push(Entry {
            time_ns: t,
            stream,
            line,
            metadata: BTreeMap::new(),
        });
    };
    for i in 0..PER_STREAM {
        let status = [200, 200, 500, 404, 503, 201, 200][(i % 7) as usize];
        // Two checkout pods: JSON, the level under several keys and spellings.
        for (p, pod) in ["checkout-7d9f-abc12", "checkout-7d9f-xyz34"]
            .iter()
            .enumerate()
        {
            let j = i * 2 + p as i64;
            let lvl = match j % 12 {
                0 => r#""level":"info""#,
                1 => r#""level":"INFO""#,
                2 => r#""level":"Warning""#,
                3 => r#""level":"error""#,
                4 => r#""severity":"ERROR""#,
                5 => r#""lvl":"debug""#,
                6 => r#""level":"trace""#,
                7 => r#""level":"fatal""#,
                8 => r#""level":"critical""#,
                9 => r#""msg_kind":"audit""#,
                10 => r#""level":"err""#,
                _ => r#""Level":"Info""#,
            };
            push(
                &mut out,
                at(base_ns, i, p as i64),
                k8s("prod", "checkout", pod, "app", "production"),
                format!(
                    r#"{{{lvl},"msg":"order {j} placed","status":{status},"latency_ms":{lat},"user":{{"id":{uid}}},"path":"/cart/{j}"}}"#,
                    lat = j * 7 % 300,
                    uid = j % 9,
                ),
            );
        }
        // nginx: access lines (no level word) and error-log lines.
        let line = if i % 5 == 4 {
            format!(
                "2026/11/22 04:{:02}:{:02} [error] 12#12: *{i} connect() failed (111: Connection refused) while connecting to upstream",
                i / 6,
                (i * 10) % 60
            )
        } else {
            format!(
                r#"10.0.{}.{} - - [22/Nov/2026:04:{:02}:{:02} +0000] "GET /api/v1/items/{i} HTTP/1.1" {status} {} "-" "curl/8.{}""#,
                i % 3,
                i % 250,
                i / 6,
                (i * 10) % 60,
                200 + i * 97 % 5000,
                i % 5
            )
        };
        push(
            &mut out,
            at(base_ns, i, 2),
            k8s("prod", "nginx", "nginx-0", "nginx", "production"),
            line,
        );
        // worker: logfmt, the level under level/lvl/severity/LEVEL and none.
        let lvl = match i % 10 {
            0 => "level=info",
            1 => "level=WARN",
            2 => "lvl=error",
            3 => "severity=debug",
            4 => "level=warning",
            5 => "level=err",
            6 => "LEVEL=fatal",
            7 => "level=critical",
            8 => "level=Info",
            _ => "note=\"no level key, but the word error in the text\"",
        };
        push(
            &mut out,
            at(base_ns, i, 3),
            k8s("dev", "worker", "worker-0", "worker", "staging"),
            format!(
                "{lvl} job=export-{} status={status} took={}ms msg=\"batch {i} done\"",
                i % 3,
                i * 10
            ),
        );
        // frontend: plain text, level words first, bracketed, mid-line, none.
        let line = match i % 10 {
            0 => format!("INFO rendered page=cart in {}ms", i * 3),
            1 => "info: cache warmed".to_string(),
            2 => format!("Info - user {} logged in", i % 7),
            3 => format!("WARNING slow response from upstream: {}ms", i * 25),
            4 => "err: connection reset by peer".to_string(),
            5 => format!("trace span {i} started"),
            6 => format!("request {i} failed with error code 503"),
            7 => format!("GET /assets/app-{i}.js 200"),
            8 => format!(
                "\u{1b}[31mERROR\u{1b}[0m failed to render page=home user={}",
                i % 7
            ),
            _ => "[debug] hydration done".to_string(),
        };
        push(
            &mut out,
            at(base_ns, i, 4),
            k8s("dev", "frontend", "frontend-1", "web", "staging"),
            line,
        );
        // api-gateway: JSON and text in one stream.
        let line = match i % 3 {
            0 => format!(
                r#"{{"level":"warn","route":"/v2/pay","upstream":"10.0.3.{}","duration":"{}ms"}}"#,
                i % 4,
                i * 11
            ),
            1 => format!("[ERROR] upstream timeout after {i}ms (retry)"),
            _ => format!("routed request {i} to api error-free"),
        };
        push(
            &mut out,
            at(base_ns, i, 5),
            k8s("prod", "api-gateway", "gw-0", "envoy", "production"),
            line,
        );
        // A cron job without an `app` label: service_name comes from `container`.
        let line = match i % 5 {
            0 => format!("CRITICAL disk /dev/sda{} failing", i % 3),
            1 => format!("backup finished in {}s", i % 40),
            2 => "[WARN] retrying upload".to_string(),
            3 => format!("Fatal: cannot open snapshot {i}"),
            _ => "level=DEBUG msg=\"tick\"".to_string(),
        };
        push(
            &mut out,
            at(base_ns, i, 6),
            k8s("ops", "", "backup-28391", "cron", "production"),
            line,
        );
        // postgres: its own log prefix words, and a JSON `severity`.
        let line = match i % 5 {
            0 => format!(
                "2026-11-22 04:00:{:02} UTC [{i}] LOG:  checkpoint starting",
                i % 60
            ),
            1 => format!(
                "ERROR:  duplicate key value violates unique constraint \"orders_pkey\" ({i})"
            ),
            2 => "WARNING:  there is no transaction in progress".to_string(),
            3 => format!(r#"{{"severity":"ERROR","msg":"replica lag {i}s"}}"#),
            _ => "no level here at all".to_string(),
        };
        push(
            &mut out,
            at(base_ns, i, 7),
            k8s("ops", "postgres", "db-1", "postgres", "production"),
            line,
        );
    }
    out
}

/// `(SeverityText, SeverityNumber)` pairs as SDKs and collectors set them:
/// upper, lower and mixed case, long names, number only, neither.
const SEVERITIES: [(&str, u32); 10] = [
    ("INFO", 9),
    ("Information", 9),
    ("WARN", 13),
    ("Warning", 13),
    ("ERROR", 17),
    ("error", 17),
    ("DEBUG", 5),
    ("", 21),
    ("TRACE", 1),
    ("", 0),
];

/// The OTel dataset (see the module doc): three services with
/// `service.name`, one resource without it.
pub fn otel_resources(base_ns: i64) -> Vec<otlp::ResourceLogs> {
    use otlp::{Record, ResourceLogs, Value};
    let resource = |svc: &str, ns: &str, pod: &str| {
        let mut r = vec![
            ("k8s.namespace.name".to_string(), ns.to_string()),
            ("k8s.pod.name".to_string(), pod.to_string()),
        ];
        if !svc.is_empty() {
            r.insert(0, ("service.name".to_string(), svc.to_string()));
        }
        r
    };
    let mut out = vec![
        ResourceLogs {
            resource: resource("checkout", "prod", "checkout-0"),
            records: Vec::new(),
        },
        ResourceLogs {
            resource: resource("worker", "dev", "worker-0"),
            records: Vec::new(),
        },
        ResourceLogs {
            resource: resource("frontend", "dev", "frontend-1"),
            records: Vec::new(),
        },
        ResourceLogs {
            resource: resource("", "ops", "cron-1"),
            records: Vec::new(),
        },
    ];
    for i in 0..PER_STREAM {
        let status = [200, 200, 500, 404, 503, 201, 200][(i % 7) as usize];
        let (text, number) = SEVERITIES[(i % 10) as usize];
        let record = |offset_s: i64, body: String, attributes: Vec<(String, Value)>| Record {
            time_ns: at(base_ns, i, offset_s),
            severity_number: number,
            severity_text: text.to_string(),
            body,
            attributes,
        };
        out[0].records.push(record(
            0,
            format!(
                r#"{{"msg":"order {i} placed","status":{status},"latency_ms":{}}}"#,
                i * 7 % 300
            ),
            vec![
                ("http.status_code".into(), Value::Int(status)),
                ("user.id".into(), Value::Str(format!("u{}", i % 9))),
            ],
        ));
        out[1].records.push(record(
            1,
            format!(
                "job=export-{} status={status} took={}ms msg=\"batch {i} done\"",
                i % 3,
                i * 10
            ),
            vec![("job.attempt".into(), Value::Int(i % 3))],
        ));
        let line = match i % 4 {
            0 => format!("rendered page=cart in {}ms", i * 3),
            1 => "WARNING slow response from upstream".to_string(),
            2 => format!("request {i} failed with error code 503"),
            _ => "level=debug msg=\"hydration done\"".to_string(),
        };
        out[2].records.push(record(2, line, Vec::new()));
        out[3]
            .records
            .push(record(3, format!("backup step {i} finished"), Vec::new()));
    }
    out
}
