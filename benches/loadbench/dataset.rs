//! A deterministic Kubernetes-style log dataset.
//!
//! Namespaces × services × pods, each pod with its main container and, for
//! some services, an `istio-proxy` sidecar. Services log JSON, logfmt or
//! access-log lines; every entry carries a level, a trace id, a duration and
//! a size. The same seed, size and time span always give the same entries, so
//! two runs measure the same data.

use std::fmt::Write as _;

use benches::Rng;

/// Namespaces, one set of services each.
pub(crate) const NAMESPACES: &[&str] =
    &["prod", "staging", "dev", "payments", "platform", "search"];

/// How a service writes its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// One JSON object per line.
    Json,
    /// `key=value` pairs.
    Logfmt,
    /// nginx-style combined access log.
    Access,
}

/// Services (the `app` and `service_name` labels), their format, and whether
/// their pods run an `istio-proxy` sidecar that writes access logs.
pub(crate) const SERVICES: &[(&str, Format, bool)] = &[
    ("checkout", Format::Json, true),
    ("cart", Format::Json, true),
    ("payments", Format::Json, true),
    ("catalog", Format::Json, false),
    ("users", Format::Json, true),
    ("billing-worker", Format::Logfmt, false),
    ("reindexer", Format::Logfmt, false),
    ("scheduler", Format::Logfmt, false),
    ("ingress-nginx", Format::Access, false),
    ("frontend", Format::Access, false),
];

const PATHS: &[&str] = &[
    "/api/v1/orders",
    "/api/v1/cart",
    "/api/v1/users/42",
    "/api/v1/products?page=2",
    "/healthz",
    "/api/v1/payments/charge",
];
const METHODS: &[&str] = &["GET", "GET", "GET", "POST", "PUT", "DELETE"];
const JOBS: &[&str] = &["reindex", "invoice", "cleanup", "sync", "export"];
const MESSAGES: &[&str] = &[
    "request done",
    "request done",
    "cache miss",
    "upstream timeout",
    "connection reset by peer",
    "retrying request",
];

/// Sizing of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spec {
    /// Seed of the generator.
    pub(crate) seed: u64,
    /// Number of log entries.
    pub(crate) lines: u64,
    /// Pods per service and namespace.
    pub(crate) pods_per_service: u32,
    /// Newest timestamp, Unix nanoseconds.
    pub(crate) end_ns: i64,
    /// Time covered, nanoseconds; entries spread evenly over `(end - span, end]`.
    pub(crate) span_ns: i64,
    /// Push the stream labels only (`namespace`, `app`, `pod`, `container`):
    /// no `service_name` label and no structured metadata, as VictoriaLogs
    /// stores what Promtail, Alloy or Fluent Bit send over the Loki protocol.
    pub(crate) stream_labels_only: bool,
}

/// One stream: its label values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stream {
    /// `namespace` label.
    pub(crate) namespace: &'static str,
    /// `app` and `service_name` labels.
    pub(crate) app: &'static str,
    /// `pod` label.
    pub(crate) pod: String,
    /// `container` label.
    pub(crate) container: &'static str,
    /// The line format of this container.
    pub(crate) format: Format,
}

/// One log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Index into [`Dataset::streams`].
    pub(crate) stream: usize,
    /// Unix nanoseconds.
    pub(crate) ts: i64,
    /// The log line.
    pub(crate) line: String,
    /// Structured metadata `trace_id`.
    pub(crate) trace_id: String,
    /// Structured metadata `detected_level` (as Loki's `discover_log_levels` adds it).
    pub(crate) level: &'static str,
}

/// The streams of a dataset and a generator of its entries.
#[derive(Debug)]
pub(crate) struct Dataset {
    spec: Spec,
    /// Every stream, in a fixed order.
    pub(crate) streams: Vec<Stream>,
}

impl Dataset {
    /// Lays out the streams for `spec`.
    pub(crate) fn new(spec: Spec) -> Self {
        let mut rng = Rng::new(spec.seed ^ 0x5eed);
        let mut streams = Vec::new();
        for &namespace in NAMESPACES {
            for &(app, format, sidecar) in SERVICES {
                let rs = rng.next_u64();
                for p in 0..spec.pods_per_service {
                    let pod = format!(
                        "{app}-{:08x}-{}",
                        rs as u32,
                        pod_suffix(rng.next_u64() ^ u64::from(p))
                    );
                    if sidecar {
                        streams.push(Stream {
                            namespace,
                            app,
                            pod: pod.clone(),
                            container: "istio-proxy",
                            format: Format::Access,
                        });
                    }
                    streams.push(Stream {
                        namespace,
                        app,
                        pod,
                        container: app,
                        format,
                    });
                }
            }
        }
        Self { spec, streams }
    }

    /// Number of distinct pods.
    pub(crate) fn pods(&self) -> usize {
        NAMESPACES.len() * SERVICES.len() * self.spec.pods_per_service as usize
    }

    /// The entries, oldest first, in deterministic batches of at most `batch`.
    pub(crate) fn batches(&self, batch: usize) -> Batches<'_> {
        Batches {
            set: self,
            rng: Rng::new(self.spec.seed),
            next: 0,
            batch: batch.max(1),
        }
    }

    fn entry(&self, rng: &mut Rng, i: u64) -> Entry {
        let spec = &self.spec;
        let stream = rng.below(self.streams.len() as u64) as usize;
        let step = spec.span_ns / spec.lines.max(1) as i64;
        let jitter = rng.below(step.max(1) as u64) as i64;
        let ts = spec.end_ns - spec.span_ns + (i as i64) * step + jitter;
        let s = &self.streams[stream];
        let trace_id = format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64());
        let level = match rng.below(100) {
            0..10 => "debug",
            10..80 => "info",
            80..92 => "warn",
            _ => "error",
        };
        let method = METHODS[rng.below(METHODS.len() as u64) as usize];
        let path = PATHS[rng.below(PATHS.len() as u64) as usize];
        let dur_ms = 1 + rng.below(50) * rng.below(40);
        let bytes = 100 + rng.below(50_000);
        let msg = MESSAGES[rng.below(MESSAGES.len() as u64) as usize];
        let mut line = String::with_capacity(200);
        let (secs, nanos) = (ts.div_euclid(1_000_000_000), ts.rem_euclid(1_000_000_000));
        let when = benches::rfc3339(secs, nanos - nanos % 1_000_000);
        let (line_level, status) = match s.format {
            Format::Access => {
                let status = match level {
                    "error" => 500 + rng.below(4) as u32,
                    "warn" => 400 + rng.below(5) as u32,
                    _ => 200,
                };
                let level = match status {
                    500.. => "error",
                    400.. => "warn",
                    _ => "info",
                };
                (level, status)
            }
            _ => (level, if level == "error" { 500 } else { 200 }),
        };
        let _ = match s.format {
            Format::Json => write!(
                line,
                r#"{{"ts":"{when}","level":"{line_level}","msg":"{msg}","method":"{method}","path":"{path}","status":{status},"duration_ms":{dur_ms},"bytes":{bytes},"trace_id":"{trace_id}"}}"#
            ),
            Format::Logfmt => write!(
                line,
                r#"ts={when} level={line_level} msg="{msg}" job={} duration={dur_ms}ms bytes={bytes} trace_id={trace_id}"#,
                JOBS[rng.below(JOBS.len() as u64) as usize]
            ),
            Format::Access => write!(
                line,
                r#"10.{}.{}.{} - - [{when}] "{method} {path} HTTP/1.1" {status} {bytes} "-" "Go-http-client/1.1" {}.{:03}"#,
                rng.below(256),
                rng.below(256),
                rng.below(256),
                dur_ms / 1000,
                dur_ms % 1000
            ),
        };
        Entry {
            stream,
            ts,
            line,
            trace_id,
            level: line_level,
        }
    }
}

/// Iterator over the batches of a [`Dataset`].
#[derive(Debug)]
pub(crate) struct Batches<'a> {
    set: &'a Dataset,
    rng: Rng,
    next: u64,
    batch: usize,
}

impl Iterator for Batches<'_> {
    type Item = Vec<Entry>;

    fn next(&mut self) -> Option<Vec<Entry>> {
        let total = self.set.spec.lines;
        if self.next >= total {
            return None;
        }
        let n = (total - self.next).min(self.batch as u64);
        let mut out = Vec::with_capacity(n as usize);
        for i in self.next..self.next + n {
            out.push(self.set.entry(&mut self.rng, i));
        }
        self.next += n;
        Some(out)
    }
}

/// The five lowercase alphanumerics Kubernetes appends to a ReplicaSet pod name.
fn pod_suffix(mut x: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut s = String::with_capacity(5);
    for _ in 0..5 {
        s.push(char::from(ALPHABET[(x % ALPHABET.len() as u64) as usize]));
        x /= ALPHABET.len() as u64;
    }
    s
}

/// A Loki push body (JSON) for `entries`: stream labels `namespace`, `app`,
/// `service_name`, `pod`, `container`; structured metadata `trace_id` and
/// `detected_level`.
pub(crate) fn push_body(set: &Dataset, entries: &[Entry]) -> Vec<u8> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| (entries[i].stream, entries[i].ts));
    let mut out = Vec::with_capacity(entries.len() * 320);
    out.extend_from_slice(b"{\"streams\":[");
    let mut current = usize::MAX;
    for (k, &i) in order.iter().enumerate() {
        let e = &entries[i];
        if e.stream != current {
            if k > 0 {
                out.extend_from_slice(b"]},");
            }
            current = e.stream;
            let s = &set.streams[e.stream];
            let service = if set.spec.stream_labels_only {
                String::new()
            } else {
                format!(r#""service_name":"{}","#, s.app)
            };
            let _ = write!(
                Buf(&mut out),
                r#"{{"stream":{{"namespace":"{}","app":"{}",{service}"pod":"{}","container":"{}"}},"values":["#,
                s.namespace,
                s.app,
                s.pod,
                s.container
            );
        } else {
            out.push(b',');
        }
        let _ = write!(Buf(&mut out), r#"["{}","#, e.ts);
        json_string(&mut out, &e.line);
        if set.spec.stream_labels_only {
            out.push(b']');
        } else {
            let _ = write!(
                Buf(&mut out),
                r#",{{"trace_id":"{}","detected_level":"{}"}}]"#,
                e.trace_id,
                e.level
            );
        }
    }
    if !order.is_empty() {
        out.extend_from_slice(b"]}");
    }
    out.extend_from_slice(b"]}");
    out
}

/// `fmt::Write` over a byte vector.
struct Buf<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Buf<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Appends `s` as a JSON string literal.
fn json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(Buf(out), "\\u{:04x}", c as u32);
            }
            c => {
                let mut b = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec {
            seed: 7,
            lines: 2_000,
            pods_per_service: 3,
            end_ns: 1_795_320_000_000_000_000,
            span_ns: 3_600_000_000_000,
            stream_labels_only: false,
        }
    }

    #[test]
    fn stream_labels_only_pushes_no_service_name_and_no_metadata() {
        let set = Dataset::new(Spec {
            stream_labels_only: true,
            ..spec()
        });
        let batch = set.batches(50).next().unwrap_or_default();
        let v: serde_json::Value =
            serde_json::from_slice(&push_body(&set, &batch)).unwrap_or_default();
        let streams = v["streams"].as_array().cloned().unwrap_or_default();
        assert!(!streams.is_empty());
        for s in &streams {
            let labels = s["stream"].as_object().cloned().unwrap_or_default();
            let names: Vec<&str> = labels.keys().map(String::as_str).collect();
            assert_eq!(names, ["app", "container", "namespace", "pod"]);
            for value in s["values"].as_array().cloned().unwrap_or_default() {
                assert_eq!(value.as_array().map(Vec::len), Some(2));
            }
        }
    }

    #[test]
    fn same_seed_same_entries_other_seed_other_entries() {
        let a: Vec<Entry> = Dataset::new(spec()).batches(300).flatten().collect();
        let b: Vec<Entry> = Dataset::new(spec()).batches(700).flatten().collect();
        assert_eq!(a, b, "batch size must not change the data");
        let other = Dataset::new(Spec { seed: 8, ..spec() });
        let c: Vec<Entry> = other.batches(300).flatten().collect();
        assert_ne!(a, c);
    }

    #[test]
    fn shape_streams_times_and_formats() {
        let set = Dataset::new(spec());
        // 6 namespaces × 10 services × 3 pods, 4 services with a sidecar.
        assert_eq!(set.pods(), 180);
        assert_eq!(set.streams.len(), 180 + 6 * 4 * 3);
        let entries: Vec<Entry> = set.batches(500).flatten().collect();
        assert_eq!(entries.len(), 2_000);
        let s = spec();
        assert!(
            entries
                .iter()
                .all(|e| e.ts > s.end_ns - s.span_ns && e.ts <= s.end_ns)
        );
        assert!(entries.windows(2).all(|w| w[0].ts <= w[1].ts));
        let of = |f: Format| {
            entries
                .iter()
                .filter(|e| set.streams[e.stream].format == f)
                .count()
        };
        assert!(of(Format::Json) > 500 && of(Format::Logfmt) > 300 && of(Format::Access) > 300);
        let json = entries
            .iter()
            .find(|e| set.streams[e.stream].format == Format::Json)
            .map(|e| serde_json::from_str::<serde_json::Value>(&e.line));
        let json = json.and_then(Result::ok).unwrap_or_default();
        assert!(
            json["duration_ms"].is_u64() && json["trace_id"].as_str().map(str::len) == Some(32)
        );
        let errors = entries.iter().filter(|e| e.level == "error").count();
        assert!(
            (100..300).contains(&errors),
            "about 8% errors, got {errors}"
        );
    }

    #[test]
    fn push_body_is_valid_loki_json() {
        let set = Dataset::new(spec());
        let batch = set.batches(50).next().unwrap_or_default();
        let body = push_body(&set, &batch);
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let streams = v["streams"].as_array().cloned().unwrap_or_default();
        let values: usize = streams
            .iter()
            .map(|s| s["values"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!(values, 50);
        let first = &streams[0];
        assert_eq!(first["stream"]["app"], first["stream"]["service_name"]);
        assert_eq!(
            first["values"][0][2]["trace_id"].as_str().map(str::len),
            Some(32)
        );
    }
}
