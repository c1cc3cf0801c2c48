//! Runs one cell: a workload against one side, in one mode, at one
//! concurrency, for a fixed time.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use benches::Rng;
use serde::Serialize;

use crate::client::Target;
use crate::percentile;
use crate::workloads::Workload;

/// Which way the workload is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Side {
    /// Loki API calls to lokivl.
    Lokivl,
    /// The equivalent LogsQL calls straight to VictoriaLogs.
    Direct,
}

/// How request windows are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    /// Every request has a window no other request has: no cache or coalescing can help.
    Cold,
    /// Requests cycle over [`WARM_WINDOWS`] windows, as refreshing dashboards do.
    Warm,
}

/// Distinct windows per template in warm mode.
pub(crate) const WARM_WINDOWS: u64 = 4;
/// Cold windows move back by this many milliseconds per slot (not a round minute,
/// so no two windows share a cache bucket of whole minutes).
const COLD_SLOT_MS: i64 = 61_001;

/// The window `[start, end)` (Unix ns) of request number `n`.
///
/// Windows end at `data_end` minus an offset. Warm: offset `(n mod 4)` minutes.
/// Cold: slot `n mod k` of `k = wrap / 61.001 s` slots plus `n / k` ms, so
/// every `n` gets its own window while staying within `wrap` of `data_end`.
pub(crate) fn window(mode: Mode, n: u64, data_end: i64, wrap_ns: i64, len: i64) -> (i64, i64) {
    const MS: i64 = 1_000_000;
    let offset = match mode {
        Mode::Warm => (n % WARM_WINDOWS) as i64 * 60_000 * MS,
        Mode::Cold => {
            let slots = (wrap_ns / (COLD_SLOT_MS * MS)).max(1) as u64;
            ((n % slots) as i64 * COLD_SLOT_MS + (n / slots) as i64) * MS
        }
    };
    let end = data_end - offset;
    (end - len, end)
}

/// Everything one cell needs.
#[derive(Debug, Clone)]
pub(crate) struct CellSpec {
    /// The workload.
    pub(crate) workload: &'static Workload,
    /// The side.
    pub(crate) side: Side,
    /// The mode.
    pub(crate) mode: Mode,
    /// Requests in flight at once.
    pub(crate) concurrency: usize,
    /// How long new requests are started.
    pub(crate) duration: Duration,
    /// Upper bound on requests, whatever the duration.
    pub(crate) max_requests: u64,
    /// Newest data timestamp, Unix ns.
    pub(crate) data_end: i64,
    /// How far back cold windows may move, ns.
    pub(crate) wrap_ns: i64,
    /// Seed of the template choice (same for both sides, so both ask the same sequence).
    pub(crate) seed: u64,
}

/// Per-template outcome.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TemplateResult {
    /// Template name.
    pub(crate) name: String,
    /// Requests completed.
    pub(crate) requests: u64,
    /// 2xx answers.
    pub(crate) ok: u64,
    /// Median latency, ms.
    pub(crate) p50_ms: Option<f64>,
    /// 99th percentile latency, ms.
    pub(crate) p99_ms: Option<f64>,
    /// Non-2xx answers by status (`0` = transport error or timeout).
    pub(crate) errors: BTreeMap<u16, u64>,
    /// The first error body, cut to 300 bytes.
    pub(crate) first_error: Option<String>,
}

/// Outcome of one cell (process usage is added by the caller).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CellResult {
    /// Workload name.
    pub(crate) workload: String,
    /// Side.
    pub(crate) side: Side,
    /// Mode.
    pub(crate) mode: Mode,
    /// Concurrency.
    pub(crate) concurrency: usize,
    /// Wall time until the last request finished, s.
    pub(crate) elapsed_s: f64,
    /// Requests completed.
    pub(crate) requests: u64,
    /// 2xx answers.
    pub(crate) ok: u64,
    /// 2xx answers per second.
    pub(crate) ok_per_s: f64,
    /// Latency percentiles over all completed requests, ms.
    pub(crate) p50_ms: Option<f64>,
    /// 90th percentile, ms.
    pub(crate) p90_ms: Option<f64>,
    /// 99th percentile, ms.
    pub(crate) p99_ms: Option<f64>,
    /// Response bytes received.
    pub(crate) bytes: u64,
    /// Non-2xx answers by status.
    pub(crate) errors: BTreeMap<u16, u64>,
    /// Per template.
    pub(crate) templates: Vec<TemplateResult>,
}

/// One completed request.
struct Rec {
    template: usize,
    micros: u64,
    status: u16,
    bytes: usize,
    error: Option<String>,
}

/// Runs one cell against `target`.
pub(crate) async fn run_cell(target: &Target, spec: &CellSpec) -> CellResult {
    let counter = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + spec.duration;
    let mut tasks = tokio::task::JoinSet::new();
    for worker in 0..spec.concurrency {
        let target = target.clone();
        let spec = spec.clone();
        let counter = counter.clone();
        tasks.spawn(async move {
            let mut rng = Rng::new(spec.seed.wrapping_add(worker as u64 * 0x9E37_79B9));
            let mut recs = Vec::new();
            while Instant::now() < deadline {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                if n >= spec.max_requests {
                    break;
                }
                let r = rng.next_u64();
                let ti = index_of(spec.workload, r);
                let t = &spec.workload.templates[ti];
                let (start, end) = window(spec.mode, n, spec.data_end, spec.wrap_ns, t.window_ns);
                let call = match spec.side {
                    Side::Lokivl => t.loki,
                    Side::Direct => t.direct,
                };
                let req = call.render(start, end);
                let sent = Instant::now();
                let reply = target.get(&req.path_and_query, req.headers).await;
                let micros = sent.elapsed().as_micros() as u64;
                let ok = (200..300).contains(&reply.status);
                recs.push(Rec {
                    template: ti,
                    micros,
                    status: reply.status,
                    bytes: reply.body.len(),
                    error: (!ok).then(|| {
                        let b = &reply.body[..reply.body.len().min(300)];
                        String::from_utf8_lossy(b).trim().to_owned()
                    }),
                });
            }
            recs
        });
    }
    let mut recs = Vec::new();
    while let Some(done) = tasks.join_next().await {
        if let Ok(mut r) = done {
            recs.append(&mut r);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    summarize(spec, recs, elapsed)
}

fn index_of(w: &Workload, r: u64) -> usize {
    let picked = w.pick(r);
    w.templates
        .iter()
        .position(|t| t.name == picked.name)
        .unwrap_or(0)
}

fn summarize(spec: &CellSpec, recs: Vec<Rec>, elapsed: f64) -> CellResult {
    let ms = |r: &Rec| r.micros as f64 / 1000.0;
    let mut all: Vec<f64> = recs.iter().map(ms).collect();
    let [p50, p90, p99] = percentile::summary(&mut all);
    let mut errors = BTreeMap::new();
    let mut templates = Vec::new();
    for (i, t) in spec.workload.templates.iter().enumerate() {
        let mine: Vec<&Rec> = recs.iter().filter(|r| r.template == i).collect();
        let mut lat: Vec<f64> = mine.iter().map(|r| ms(r)).collect();
        let [t50, _, t99] = percentile::summary(&mut lat);
        let mut terr = BTreeMap::new();
        for r in mine.iter().filter(|r| r.error.is_some()) {
            *terr.entry(r.status).or_insert(0) += 1;
            *errors.entry(r.status).or_insert(0) += 1;
        }
        templates.push(TemplateResult {
            name: t.name.to_owned(),
            requests: mine.len() as u64,
            ok: mine.iter().filter(|r| r.error.is_none()).count() as u64,
            p50_ms: t50,
            p99_ms: t99,
            errors: terr,
            first_error: mine.iter().find_map(|r| r.error.clone()),
        });
    }
    let ok = recs.iter().filter(|r| r.error.is_none()).count() as u64;
    CellResult {
        workload: spec.workload.name.to_owned(),
        side: spec.side,
        mode: spec.mode,
        concurrency: spec.concurrency,
        elapsed_s: elapsed,
        requests: recs.len() as u64,
        ok,
        ok_per_s: if elapsed > 0.0 {
            ok as f64 / elapsed
        } else {
            0.0
        },
        p50_ms: p50,
        p90_ms: p90,
        p99_ms: p99,
        bytes: recs.iter().map(|r| r.bytes as u64).sum(),
        errors,
        templates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000_000_000;

    #[test]
    fn warm_windows_repeat_cold_windows_do_not() {
        let end = 1_795_320_000_000_000_000;
        let wrap = 24 * 60 * MIN;
        let warm: Vec<_> = (0..8)
            .map(|n| window(Mode::Warm, n, end, wrap, MIN))
            .collect();
        assert_eq!(warm[0], warm[4]);
        assert_eq!(warm[1], (end - 2 * MIN, end - MIN));
        let mut cold: Vec<_> = (0..20_000)
            .map(|n| window(Mode::Cold, n, end, wrap, MIN))
            .collect();
        assert!(
            cold.iter()
                .all(|&(s, e)| e <= end && e - s == MIN && end - e < wrap + MIN)
        );
        cold.sort_unstable();
        cold.dedup();
        assert_eq!(cold.len(), 20_000, "every cold request has its own window");
    }
}
