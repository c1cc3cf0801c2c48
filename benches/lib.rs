//! Inputs shared by lokivl's criterion benches.
//!
//! The benches live in `decode.rs` (NDJSON → Loki JSON) and `parse_lower.rs`
//! (LogQL → LogsQL). Data is generated here, deterministically, so every run
//! measures the same bytes without storing megabytes in the repository.
//!
//! ```
//! let body = benches::vl_ndjson(3);
//! assert_eq!(body.iter().filter(|&&b| b == b'\n').count(), 3);
//! ```

use std::fmt::Write as _;

/// LogQL queries measured by `parse_lower/<name>`: shapes Grafana and
/// Logs Drilldown send.
pub const QUERIES: &[(&str, &str)] = &[
    ("selector", r#"{app="api"}"#),
    (
        "selector_regex_filters",
        r#"{app="api", env=~"prod|dev"} |= "error" != "healthz""#,
    ),
    ("json_label_filter", r#"{app="api"} | json | status >= 500"#),
    (
        "logfmt_duration",
        r#"{app="api", namespace="prod"} | logfmt | duration > 250ms and level="error""#,
    ),
    (
        "drilldown_pipeline",
        r#"{service_name="checkout"} |~ "(?i)timeout" | json | logfmt | drop __error__, __error_details__ | detected_level="error""#,
    ),
];

/// A small deterministic generator (xorshift64*), so no `rand` dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeds the generator (a zero seed is replaced).
    pub fn new(seed: u64) -> Self {
        Self(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next pseudo-random number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

const APPS: &[&str] = &["api", "checkout", "payments", "gateway", "worker"];
const ENVS: &[&str] = &["prod", "dev"];
const LEVELS: &[&str] = &["info", "info", "info", "warn", "error", "debug"];
const PATHS: &[&str] = &[
    "/api/v1/orders",
    "/api/v1/users/42",
    "/healthz",
    "/api/v1/cart?item=7&qty=2",
];

/// A VictoriaLogs `/select/logsql/query` answer with `rows` lines, newest
/// first, shaped like real traffic: 10 streams (5 apps × 2 envs), stream
/// fields repeated as top-level fields, OTel-style structured metadata
/// (`trace_id`, `span_id`, dotted `k8s.pod.name`, `detected_level`) and
/// ~150-byte logfmt or JSON lines with the odd quote, `<`, `&` and unicode.
pub fn vl_ndjson(rows: usize) -> Vec<u8> {
    let mut rng = Rng::new(42);
    let mut out = String::with_capacity(rows * 480);
    let base: i64 = 1_795_321_267_000_000_000; // 2026-11-22T04:21:07Z
    for i in 0..rows {
        let app = APPS[rng.below(APPS.len() as u64) as usize];
        let env = ENVS[rng.below(ENVS.len() as u64) as usize];
        let level = LEVELS[rng.below(LEVELS.len() as u64) as usize];
        let path = PATHS[rng.below(PATHS.len() as u64) as usize];
        let status = [200, 200, 201, 404, 500][rng.below(5) as usize];
        let dur_ms = rng.below(2000);
        let ts = base - (i as i64) * 1_234_567 - rng.below(1000) as i64;
        let secs = ts.div_euclid(1_000_000_000);
        let nanos = ts.rem_euclid(1_000_000_000);
        let trace = rng.next_u64();
        let span = rng.next_u64() as u32;
        let pod = rng.below(4);

        let msg = if i % 2 == 0 {
            format!(
                r#"{{\"level\":\"{level}\",\"msg\":\"request done\",\"method\":\"GET\",\"path\":\"{path}\",\"status\":{status},\"duration_ms\":{dur_ms},\"user\":\"Jürgen <j@x>\"}}"#
            )
        } else {
            format!(
                r#"ts={secs} level={level} msg=\"handled request\" method=POST path={path} status={status} duration={dur_ms}ms bytes={}"#,
                rng.below(100_000)
            )
        };
        let _ = write!(
            out,
            concat!(
                r#"{{"_time":"{}","_stream_id":"00000000000000001a2b3c4d5e6f{:04x}","#,
                r#""_stream":"{{app=\"{app}\",env=\"{env}\",namespace=\"default\"}}","_msg":"{msg}","#,
                r#""app":"{app}","env":"{env}","namespace":"default","#,
                r#""trace_id":"{trace:016x}{trace:016x}","span_id":"{span:08x}","#,
                r#""k8s.pod.name":"{app}-7d9f8b6c4-{pod}","detected_level":"{level}"}}"#,
                "\n"
            ),
            rfc3339(secs, nanos),
            i % 10,
            app = app,
            env = env,
            msg = msg,
            trace = trace,
            span = span,
            pod = pod,
            level = level,
        );
    }
    out.into_bytes()
}

/// Formats `secs`/`nanos` since the epoch as VictoriaLogs does (UTC,
/// trailing fraction zeros trimmed).
pub fn rfc3339(secs: i64, nanos: i64) -> String {
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let mut s = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s.push('Z');
    s
}

/// Howard Hinnant's `civil_from_days`.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_matches_vl_format() {
        assert_eq!(
            rfc3339(1_795_321_267, 295_847_870),
            "2026-11-22T04:21:07.29584787Z"
        );
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400, 100_000_000), "2000-02-29T00:00:00.1Z");
    }

    #[test]
    fn generated_body_decodes_and_encodes() {
        let mut body = vl_ndjson(100);
        let opts = engine::encode::streams::StreamsOptions {
            direction: engine::direction::Direction::Backward,
            limit: 100,
            categorize: true,
            parsed_prefix: None,
        };
        let mut out = Vec::new();
        let summary = engine::encode::streams::encode_streams(&mut body, &opts, &mut out);
        assert_eq!(summary.map(|s| (s.entries, s.streams)), Ok((100, 10)));
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.contains(r#""k8s_pod_name":"#),
            "dotted names are sanitized"
        );
    }
}
