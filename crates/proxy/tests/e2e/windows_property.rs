//! Windows never change an answer: random `query_range` requests, asked of a
//! lokivl that splits them into cached windows (small split intervals) and of
//! one that runs them whole (cache off), must get the same answer, every time.
//!
//! Runs against a real VictoriaLogs (`LOKIVL_VL_BIN`); without it, skips with
//! one line. The cases are drawn from a seeded generator: each case has its
//! own seed, printed when it fails, and `LOKIVL_WINDOWS_SEED=<seed>
//! LOKIVL_WINDOWS_CASES=1` asks that case alone again. The data is fixed and
//! old (every window is closed), so both lokivls read the same logs. Both
//! synthesize `service_name` and `detected_level` as Loki's defaults do.
//! A second test does the same on data up to now, with ranges ending within
//! the freshness bound, each asked again 1–90 s later, so that live windows
//! are served from their cache extents plus a fresh tail.
//!
//! The data holds malformed JSON lines in a few short bands, so a `| json`
//! metric query errors exactly when its reach (the steps' windows, not the
//! split windows') touches a band.

use crate::support;

use std::fmt::Write as _;
use std::time::Duration;

use crate::support::backend::VictoriaLogs;
use crate::support::client::{self, url};
use serde_json::{Value, json};

/// 2025-01-15T00:00:00Z in nanoseconds: the first entry is a little after it.
const BASE: i64 = 1_736_899_200_000_000_000;
const SEC: i64 = 1_000_000_000;
const MIN: i64 = 60 * SEC;
/// The span the data covers.
const SPAN: i64 = 3 * 60 * MIN;
/// Cases asked by default (about 12 s in a debug build).
const DEFAULT_CASES: u64 = 250;
/// The seed of the first case by default.
const DEFAULT_SEED: u64 = 0x5EED_0001;
/// Split intervals of the splitting lokivls.
const INTERVALS_S: [u64; 5] = [60, 300, 420, 900, 1800];

/// `--cache-freshness` of the splitting lokivls of the near-now test, by
/// index: the short ones close steps while the test runs, so their extents
/// are written, read and grown from case to case.
const FRESHNESS_S: [u64; 5] = [20, 600, 5, 600, 45];
/// Near-now cases asked by default (each asked twice).
const DEFAULT_NEAR_CASES: u64 = 80;

/// SplitMix64: small, seedable, the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Whether the line at `t` (ns since `BASE`) of a `prod` stream is malformed:
/// two bands of 40 s.
fn in_bad_band(t: i64) -> bool {
    (47 * MIN..47 * MIN + 40 * SEC).contains(&t) || (131 * MIN..131 * MIN + 40 * SEC).contains(&t)
}

/// The pushed data from `base` on: five streams, an entry every 3–40 s each
/// (some exactly on whole seconds, so on step and bucket edges), JSON lines
/// with a level, a status and a latency, malformed lines in the bad bands.
fn push_body(base: i64) -> String {
    let streams = [
        json!({"namespace": "prod", "app": "api", "shard": "1"}),
        json!({"namespace": "prod", "app": "web", "shard": "2"}),
        json!({"namespace": "prod", "app": "db", "shard": "3"}),
        json!({"namespace": "dev", "app": "api", "shard": "4"}),
        json!({"namespace": "dev", "app": "batch", "shard": "5"}),
    ];
    let mut rng = Rng(42);
    let mut out = Vec::new();
    for (si, stream) in streams.iter().enumerate() {
        let prod = stream["namespace"] == "prod";
        let mut values = Vec::new();
        let mut t = (si as i64) * 1_300 * 1_000_000;
        let mut i = 0u64;
        while t < SPAN {
            let level = ["info", "warn", "error", "debug"][(i % 4) as usize];
            let status = [200, 200, 500, 404, 200, 503][(rng.below(6)) as usize];
            let latency = rng.below(5000) as f64 / 10.0;
            let line = if prod && in_bad_band(t) {
                format!("not json {{ {i}")
            } else {
                format!(
                    r#"{{"level":"{level}","status":{status},"latency":{latency},"msg":"req {i} {}"}}"#,
                    if status == 200 { "ok" } else { "failed" }
                )
            };
            values.push(json!([(base + t).to_string(), line]));
            // Whole seconds every fourth entry, odd nanoseconds otherwise.
            let gap = (3 + rng.below(38) as i64) * SEC;
            t += if i.is_multiple_of(4) {
                gap - t.rem_euclid(SEC)
            } else {
                gap + rng.below(1_000_000_000) as i64
            };
            i += 1;
        }
        out.push(json!({"stream": stream, "values": values}));
    }
    json!({ "streams": out }).to_string()
}

/// One random request.
#[derive(Debug)]
struct Case {
    path: &'static str,
    query: String,
    start: i64,
    end: i64,
    step_s: Option<i64>,
    limit: Option<u64>,
    direction: Option<&'static str>,
    /// Index into the splitting lokivls.
    split: usize,
}

fn metric_query(rng: &mut Rng) -> String {
    let range = *rng.pick(&["30s", "1m", "2m", "90s", "5m", "7m", "10s"]);
    let offset = if rng.chance(30) {
        format!(" offset {}", rng.pick(&["1m", "45s", "5m", "17s"]))
    } else {
        String::new()
    };
    let r = format!("[{range}]{offset}");
    let json = rng.chance(40);
    let sel = *rng.pick(&[
        r#"{namespace="prod"}"#,
        r#"{namespace=~"prod|dev"}"#,
        r#"{app="api"}"#,
        r#"{namespace="dev"}"#,
    ]);
    let pipe = if json { " | json" } else { "" };
    let filter = *rng.pick(&["", "", r#" |= "ok""#, r#" != "failed""#]);
    let log = format!("{sel}{filter}{pipe}");
    match rng.below(14) {
        0 => format!("count_over_time({log}{r})"),
        1 => format!("sum by (app) (rate({log}{r}))"),
        2 => format!("max by (app) (count_over_time({log}{r}))"),
        3 => format!("bytes_over_time({log}{r})"),
        4 => format!("sum by (namespace) (bytes_rate({log}{r}))"),
        5 => format!("sum by (level) (count_over_time({sel}{filter} | json{r}))"),
        6 => format!("sum by (app) (sum_over_time({sel} | json | unwrap latency{r}))"),
        7 => format!("max_over_time({sel} | json | unwrap latency{r}) by (app)"),
        8 => format!("sum(count_over_time({sel} | json | status >= 500{r}))"),
        9 => format!("avg_over_time({sel} | unwrap shard{r}) by (namespace)"),
        10 => format!("quantile_over_time(0.9, {sel} | json | unwrap latency{r}) by (app)"),
        11 => format!("sum by (detected_level) (count_over_time({log}{r}))"),
        12 => format!("sum by (service_name) (bytes_over_time({log}{r}))"),
        _ => format!("min by (namespace) (rate({log}{r}))"),
    }
}

/// The log queries of the cases.
const LOG_QUERIES: [&str; 5] = [
    r#"{namespace="prod"}"#,
    r#"{namespace="prod"} | json"#,
    r#"{namespace=~"prod|dev"} |= "ok""#,
    r#"{app="api"} | json | status >= 500"#,
    r#"{namespace="dev"} | json | line_format "{{.level}} {{.latency}}""#,
];

fn case(seed: u64) -> Case {
    let mut rng = Rng(seed);
    let split = rng.below(INTERVALS_S.len() as u64) as usize;
    // Starts from 10 minutes before the data to its end; some on whole minutes.
    let mut start = BASE - 10 * MIN + (rng.below((SPAN / SEC) as u64 + 600) as i64) * SEC;
    if rng.chance(70) {
        start += rng.below(1_000_000_000) as i64;
    }
    let len_s = *rng.pick(&[20, 61, 299, 300, 600, 1234, 1800, 3600, 5400, 7200]) as i64;
    let end = start
        + len_s * SEC
        + if rng.chance(50) {
            rng.below(SEC as u64) as i64
        } else {
            0
        };
    with_query(&mut rng, start, end, split, &LOG_QUERIES)
}

/// A case ending within the freshness bound of `now` (from 10 minutes
/// before it to a minute after), and how much later it is asked again
/// (1–90 s, start and end moved alike, as a refreshing dashboard does).
fn near_now_case(seed: u64, now: i64) -> (Case, i64) {
    let mut rng = Rng(seed);
    let split = rng.below(INTERVALS_S.len() as u64) as usize;
    let mut end = now - 10 * MIN + (rng.below(660) as i64) * SEC;
    if rng.chance(70) {
        end += rng.below(1_000_000_000) as i64;
    }
    let len_s = *rng.pick(&[300, 600, 1234, 1800, 3600, 5400, 7200, 10800]) as i64;
    let start = end - len_s * SEC - rng.below(SEC as u64) as i64;
    let later = (1 + rng.below(90) as i64) * SEC;
    let c = with_query(&mut rng, start, end, split, &LOG_QUERIES);
    (c, later)
}

/// A metric or log request over `[start, end]` for splitting lokivl `split`.
fn with_query(rng: &mut Rng, start: i64, end: i64, split: usize, logs: &[&str]) -> Case {
    if rng.chance(65) {
        let step_s = *rng.pick(&[1, 5, 10, 15, 30, 45, 60, 70, 90, 120, 300, 17]);
        Case {
            path: "/loki/api/v1/query_range",
            query: metric_query(rng),
            start,
            end,
            step_s: Some(step_s),
            limit: None,
            direction: None,
            split,
        }
    } else {
        Case {
            path: "/loki/api/v1/query_range",
            query: (*rng.pick(logs)).to_owned(),
            start,
            end,
            step_s: None,
            limit: Some(*rng.pick(&[1, 7, 50, 300, 5000])),
            direction: Some(*rng.pick(&["forward", "backward"])),
            split,
        }
    }
}

/// Status and the answer up to `"stats"` (which holds timings and split counts).
async fn ask(base: &str, c: &Case) -> (u16, String) {
    let (start, end) = (c.start.to_string(), c.end.to_string());
    let mut params = vec![("query", c.query.clone()), ("start", start), ("end", end)];
    if let Some(s) = c.step_s {
        params.push(("step", s.to_string()));
    }
    if let Some(l) = c.limit {
        params.push(("limit", l.to_string()));
    }
    if let Some(d) = c.direction {
        params.push(("direction", d.to_owned()));
    }
    let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, _, body) = client::try_get(&url(base, c.path, &params), &[])
        .await
        .map(client::Answer::parts)
        .expect("lokivl answers");
    let data = body
        .split(",\"stats\":")
        .next()
        .unwrap_or_default()
        .to_owned();
    (status, data)
}

/// The first difference between two answers, for the failure message.
fn first_difference(a: &str, b: &str) -> String {
    let (Ok(x), Ok(y)) = (
        serde_json::from_str::<Value>(&format!("{a}}}}}")),
        serde_json::from_str::<Value>(&format!("{b}}}}}")),
    ) else {
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let lo = at.saturating_sub(80);
        return format!(
            "at byte {at}:\n  split:   …{}\n  unsplit: …{}",
            a.get(lo..(at + 200).min(a.len())).unwrap_or(a),
            b.get(lo..(at + 200).min(b.len())).unwrap_or(b)
        );
    };
    let empty = Vec::new();
    let (rx, ry) = (
        x["data"]["result"].as_array().unwrap_or(&empty),
        y["data"]["result"].as_array().unwrap_or(&empty),
    );
    let mut out = format!("{} series split, {} unsplit", rx.len(), ry.len());
    for (sx, sy) in rx.iter().zip(ry) {
        if sx != sy {
            let _ = write!(out, "\n  split:   {sx}\n  unsplit: {sy}");
            break;
        }
    }
    out
}

/// Asks `c` of the unsplit lokivl and of its splitting one and fails on any
/// difference; returns whether the answer was a success.
async fn check(whole: &str, split: &[String], c: &Case, seed: u64, what: &str) -> bool {
    let (ws, wb) = ask(whole, c).await;
    let (ss, sb) = ask(&split[c.split], c).await;
    assert!(
        ws == ss && wb == sb,
        "{what} seed {seed}: split ({}s windows) answered {ss}, unsplit {ws}; rerun with \
         LOKIVL_WINDOWS_SEED={seed} LOKIVL_WINDOWS_CASES=1\n{c:#?}\n{}",
        INTERVALS_S[c.split],
        if ws == 200 && ss == 200 {
            first_difference(&sb, &wb)
        } else {
            format!("split: {sb}\nunsplit: {wb}")
        }
    );
    ws == 200
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The same property on ranges that end near now, where live windows are
/// served from their cache extents plus a fresh tail: each case is asked,
/// then asked again 1–90 s later, and both answers must equal the unsplit
/// ones. The data (three hours up to the test's start) is pushed once, so
/// every lokivl reads the same logs whatever it cached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn near_now_split_answers_equal_unsplit_answers() {
    let Some(bin) = std::env::var_os("LOKIVL_VL_BIN").map(std::path::PathBuf::from) else {
        eprintln!("skipped: LOKIVL_VL_BIN is not set (a VictoriaLogs binary)");
        return;
    };
    let now = || {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
    };
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(push_body(now() - SPAN)).await;
    let mut split = Vec::new();
    for (s, f) in INTERVALS_S.into_iter().zip(FRESHNESS_S) {
        split.push(
            support::start_lokivl_with(&vl.url, |c| {
                c.cache.windows.interval = Duration::from_secs(s);
                c.cache.freshness = Duration::from_secs(f);
                c.discovery = engine::discovery::loki_defaults();
            })
            .await,
        );
    }
    let whole = support::start_lokivl_with(&vl.url, |c| {
        c.cache.max_bytes = 0;
        c.discovery = engine::discovery::loki_defaults();
    })
    .await;
    let first = env_u64("LOKIVL_WINDOWS_SEED", DEFAULT_SEED);
    let cases = env_u64("LOKIVL_WINDOWS_CASES", DEFAULT_NEAR_CASES);
    let mut ok = 0;
    for seed in first..first + cases {
        let (mut c, later) = near_now_case(seed, now());
        ok += u64::from(check(&whole, &split, &c, seed, "near now").await);
        c.start += later;
        c.end += later;
        ok += u64::from(check(&whole, &split, &c, seed, "near now, later").await);
    }
    assert!(ok > 0, "no case answered");
    // The extents were used, or the check is weaker than it looks.
    let mut hits = 0.0;
    for base in &split {
        let text = client::try_get(&format!("{base}/metrics"), &[])
            .await
            .expect("metrics")
            .body;
        hits += text
            .lines()
            .filter(|l| l.contains(r#"endpoint="query_range_metric_extent""#))
            .filter(|l| l.contains(r#"outcome="hit""#))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>();
    }
    assert!(hits > 0.0, "no extent was read");
    eprintln!(
        "{cases} near-now cases from seed {first}, asked twice: {ok} answers, {hits} extent hits, all equal"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_answers_equal_unsplit_answers() {
    let Some(bin) = std::env::var_os("LOKIVL_VL_BIN").map(std::path::PathBuf::from) else {
        eprintln!("skipped: LOKIVL_VL_BIN is not set (a VictoriaLogs binary)");
        return;
    };
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(push_body(BASE)).await;
    let mut split = Vec::new();
    for s in INTERVALS_S {
        split.push(
            support::start_lokivl_with(&vl.url, |c| {
                c.cache.windows.interval = Duration::from_secs(s);
                c.discovery = engine::discovery::loki_defaults();
            })
            .await,
        );
    }
    let whole = support::start_lokivl_with(&vl.url, |c| {
        c.cache.max_bytes = 0;
        c.discovery = engine::discovery::loki_defaults();
    })
    .await;

    let first = env_u64("LOKIVL_WINDOWS_SEED", DEFAULT_SEED);
    let cases = env_u64("LOKIVL_WINDOWS_CASES", DEFAULT_CASES);
    let (mut ok, mut errors) = (0, 0);
    for seed in first..first + cases {
        let c = case(seed);
        if check(&whole, &split, &c, seed, "old").await {
            ok += 1;
        } else {
            errors += 1;
        }
    }
    // The generator must reach both outcomes, or the check is weaker than it looks.
    assert!(
        ok > 0 && (cases < 50 || errors > 0),
        "{ok} answers, {errors} errors"
    );
    eprintln!("{cases} cases from seed {first}: {ok} answers, {errors} errors, all equal");
}
