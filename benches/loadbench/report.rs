//! The results as JSON and as a Markdown table with lokivl beside direct VictoriaLogs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::runner::{CellResult, Side};

/// CPU and memory of one process during one cell.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ProcUsage {
    /// `lokivl` or `victoria-logs`.
    pub(crate) name: String,
    /// User plus system CPU seconds spent during the cell.
    pub(crate) cpu_s: f64,
    /// Peak RSS, MiB: during the cell when `peak_is_cell_only`, else since start.
    pub(crate) peak_rss_mib: f64,
    /// Whether the peak was reset before the cell.
    pub(crate) peak_is_cell_only: bool,
}

/// A cell with the process usage measured around it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Cell {
    /// Load generator view.
    #[serde(flatten)]
    pub(crate) result: CellResult,
    /// Processes watched.
    pub(crate) procs: Vec<ProcUsage>,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    /// Free-form facts about the run (dataset, flags, machine).
    pub(crate) meta: BTreeMap<String, serde_json::Value>,
    /// Every cell, in run order.
    pub(crate) cells: Vec<Cell>,
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |v| format!("{v:.1}"))
}

fn fmt_errors(e: &BTreeMap<u16, u64>) -> String {
    if e.is_empty() {
        return "0".to_owned();
    }
    e.iter()
        .map(|(s, n)| {
            if *s == 0 {
                format!("io×{n}")
            } else {
                format!("{s}×{n}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn proc_of<'a>(c: &'a Cell, name: &str) -> Option<&'a ProcUsage> {
    c.procs.iter().find(|p| p.name == name)
}

/// The ratio `a / b`, or `–` when `b` is zero.
pub(crate) fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}", a / b)
    } else {
        "–".to_owned()
    }
}

/// Renders the Markdown table and, below it, the templates that failed.
pub(crate) fn markdown(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(
        "| workload | mode | conc | direct req/s | lokivl req/s | ratio | direct p99 ms | lokivl p50 ms | lokivl p90 ms | lokivl p99 ms | lokivl CPU s | lokivl CPU ms/req | VL CPU s (direct / via lokivl) | lokivl peak RSS MiB | errors direct | errors lokivl |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    let mut failures = Vec::new();
    for l in report
        .cells
        .iter()
        .filter(|c| c.result.side == Side::Lokivl)
    {
        let r = &l.result;
        let d = report.cells.iter().find(|c| {
            c.result.side == Side::Direct
                && c.result.workload == r.workload
                && c.result.mode == r.mode
                && c.result.concurrency == r.concurrency
        });
        let lk = proc_of(l, "lokivl");
        let vl_via = proc_of(l, "victoria-logs").map_or(0.0, |p| p.cpu_s);
        let vl_direct = d
            .and_then(|d| proc_of(d, "victoria-logs"))
            .map_or(0.0, |p| p.cpu_s);
        let d_ok = d.map_or(0.0, |d| d.result.ok_per_s);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {:.2} / {:.2} | {} | {} | {} |",
            r.workload,
            serde_json::to_value(r.mode)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            r.concurrency,
            d_ok,
            r.ok_per_s,
            ratio(r.ok_per_s, d_ok),
            fmt_opt(d.and_then(|d| d.result.p99_ms)),
            fmt_opt(r.p50_ms),
            fmt_opt(r.p90_ms),
            fmt_opt(r.p99_ms),
            lk.map_or_else(|| "–".to_owned(), |p| format!("{:.2}", p.cpu_s)),
            lk.map_or_else(
                || "–".to_owned(),
                |p| if r.requests > 0 {
                    format!("{:.3}", p.cpu_s * 1000.0 / r.requests as f64)
                } else {
                    "–".to_owned()
                }
            ),
            vl_direct,
            vl_via,
            lk.map_or_else(|| "–".to_owned(), |p| format!("{:.0}", p.peak_rss_mib)),
            d.map_or_else(|| "–".to_owned(), |d| fmt_errors(&d.result.errors)),
            fmt_errors(&r.errors),
        );
        for c in [Some(l), d].into_iter().flatten() {
            for t in &c.result.templates {
                if let Some(e) = &t.first_error {
                    let key = (
                        c.result.workload.clone(),
                        c.result.side,
                        t.name.clone(),
                        e.clone(),
                    );
                    if !failures.contains(&key) {
                        failures.push(key);
                    }
                }
            }
        }
    }
    if !failures.is_empty() {
        out.push_str("\nFailing templates (first error body):\n\n");
        for (w, side, t, e) in failures {
            let side = if side == Side::Lokivl {
                "lokivl"
            } else {
                "direct"
            };
            let e: String = e.chars().take(160).collect();
            let _ = writeln!(out, "- `{w}/{t}` ({side}): {}", e.replace('\n', " "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Mode;

    fn cell(side: Side, ok_per_s: f64, errors: &[(u16, u64)]) -> Cell {
        Cell {
            result: CellResult {
                workload: "small".to_owned(),
                side,
                mode: Mode::Cold,
                concurrency: 10,
                elapsed_s: 10.0,
                requests: (ok_per_s * 10.0) as u64,
                ok: (ok_per_s * 10.0) as u64,
                ok_per_s,
                p50_ms: Some(1.0),
                p90_ms: Some(2.0),
                p99_ms: Some(3.0),
                bytes: 0,
                errors: errors.iter().copied().collect(),
                templates: Vec::new(),
            },
            procs: vec![ProcUsage {
                name: "lokivl".to_owned(),
                cpu_s: 2.0,
                peak_rss_mib: 20.0,
                peak_is_cell_only: true,
            }],
        }
    }

    #[test]
    fn table_pairs_lokivl_with_direct() {
        let report = Report {
            meta: BTreeMap::new(),
            cells: vec![
                cell(Side::Direct, 200.0, &[]),
                cell(Side::Lokivl, 150.0, &[(400, 3), (0, 1)]),
            ],
        };
        let md = markdown(&report);
        let row = md.lines().nth(2).unwrap_or_default();
        assert!(
            row.starts_with("| small | cold | 10 | 200.0 | 150.0 | 0.75 |"),
            "{row}"
        );
        assert!(row.ends_with("| 0 | io×1 400×3 |"), "{row}");
        assert!(row.contains("| 2.00 | 1.333 |"), "{row}");
        assert_eq!(ratio(1.0, 0.0), "–");
    }
}
