//! `--profile N`: each template of the chosen workloads sent N times, one
//! request at a time, to both sides, each time over a window of its own
//! (the cold windows), with the median latency per template.
//!
//! Under load the two cores are shared and a ratio says which side ran out,
//! not which request did; one at a time, the table shows which template
//! costs lokivl (and VictoriaLogs behind it) more than the direct query.

use std::fmt::Write as _;
use std::time::Instant;

use crate::client::Target;
use crate::runner::{Mode, Side, window};
use crate::workloads::Workload;

/// The median latency, milliseconds, of `reps` sends of each template on
/// each side, as a Markdown table; a template whose answers were not all
/// 2xx says how many were.
pub(crate) async fn profile(
    workloads: &[&'static Workload],
    lokivl: &Target,
    direct: &Target,
    data_end: i64,
    span_ns: i64,
    reps: u64,
) -> String {
    let mut out = String::from(
        "| workload | template | lokivl median ms | direct median ms | lokivl / direct | not 2xx (lokivl / direct) |\n|---|---|---:|---:|---:|---|\n",
    );
    for w in workloads {
        let wrap_ns = span_ns - w.max_window() - 60_000_000_000;
        for t in w.templates {
            let mut median = [0.0; 2];
            let mut failed = [0u64; 2];
            for (i, side) in [Side::Lokivl, Side::Direct].into_iter().enumerate() {
                let (target, call) = match side {
                    Side::Lokivl => (lokivl, t.loki),
                    Side::Direct => (direct, t.direct),
                };
                let mut ms = Vec::with_capacity(reps as usize);
                for n in 0..reps {
                    let (start, end) = window(Mode::Cold, n, data_end, wrap_ns, t.window_ns);
                    let req = call.render(start, end);
                    let sent = Instant::now();
                    let reply = target.get(&req.path_and_query, req.headers).await;
                    ms.push(sent.elapsed().as_secs_f64() * 1e3);
                    if !(200..300).contains(&reply.status) {
                        failed[i] += 1;
                    }
                }
                ms.sort_by(f64::total_cmp);
                median[i] = ms.get(ms.len() / 2).copied().unwrap_or(0.0);
            }
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} | {:.1} | {:.2} | {} / {} |",
                w.name,
                t.name,
                median[0],
                median[1],
                median[0] / median[1].max(1e-9),
                failed[0],
                failed[1]
            );
        }
    }
    out
}
