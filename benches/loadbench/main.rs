//! `loadbench`: lokivl against VictoriaLogs called directly, on standard workloads.
//!
//! One run: start (or attach to) VictoriaLogs and lokivl, write a
//! deterministic Kubernetes-style dataset, then for every workload, mode and
//! concurrency run the workload straight against VictoriaLogs (LogsQL) and
//! through lokivl (Loki API), reading each process's CPU time and peak RSS
//! from `/proc` around every cell. Results go to a JSON file and, as a
//! Markdown table with the lokivl/direct ratio, to stdout.

mod cli;
mod client;
mod dataset;
mod ingest;
mod percentile;
mod procs;
mod procstat;
mod profile;
mod report;
mod runner;
mod workloads;

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use clap::Parser as _;
use serde_json::json;

use crate::client::Target;
use crate::procs::Proc;
use crate::report::{Cell, ProcUsage, Report};
use crate::runner::{CellSpec, Side};

fn main() -> anyhow::Result<()> {
    let args = cli::Args::parse();
    if args.list {
        print!("{}", workloads::pairs_markdown());
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    runtime.block_on(run(args))
}

const MINUTE_NS: i64 = 60_000_000_000;

async fn run(args: cli::Args) -> anyhow::Result<()> {
    let chosen: Vec<&'static workloads::Workload> = args
        .workloads
        .iter()
        .map(|n| workloads::by_name(n).with_context(|| format!("unknown workload {n:?}")))
        .collect::<anyhow::Result<_>>()?;
    let pool = args.concurrency.iter().copied().max().unwrap_or(1) + 8;
    let span_ns = i64::try_from(args.span.as_nanos()).context("--span too large")?;

    // VictoriaLogs.
    let mut vl = match (&args.vl_bin, &args.vl_url) {
        (Some(bin), _) => {
            procs::fresh_data_dir(&args.data_dir)?;
            let listen = procs::listen_addr(&args.vl_listen)?;
            let vl_args = vec![
                format!("-httpListenAddr={listen}"),
                format!("-storageDataPath={}", args.data_dir.display()),
                "-retentionPeriod=100y".to_owned(),
                "-loggerLevel=ERROR".to_owned(),
            ];
            Proc::start("victoria-logs", format!("http://{listen}"), bin, &vl_args)?
        }
        (None, Some(url)) => Proc::attached("victoria-logs", url.clone(), args.vl_pid),
        (None, None) => bail!("give --vl-bin or --vl-url"),
    };
    let vl_target = Target::new(&vl.url, args.timeout, pool)?;
    vl.wait_ready(&vl_target, "/health", Duration::from_secs(30))
        .await?;

    // Dataset.
    let data_end = match args.data_end {
        Some(s) => s * 1_000_000_000,
        None => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .context("clock before 1970")?;
            let now = i64::try_from(now.as_nanos()).context("clock")?;
            now - now % MINUTE_NS
        }
    };
    let spec = dataset::Spec {
        seed: args.seed,
        lines: args.lines,
        pods_per_service: args.pods_per_service,
        end_ns: data_end,
        span_ns,
        stream_labels_only: args.stream_labels_only,
    };
    let set = dataset::Dataset::new(spec);
    if args.no_ingest {
        if args.data_end.is_none() {
            bail!("--no-ingest needs --data-end (the dataset's newest timestamp, Unix seconds)");
        }
    } else {
        eprintln!(
            "dataset: {} entries over {:?}, {} pods, {} streams, ending {}",
            args.lines,
            args.span,
            set.pods(),
            set.streams.len(),
            workloads::rfc3339_ms(data_end)
        );
        ingest::ingest(&vl_target, &set, 10_000, 2).await?;
    }
    let stored = ingest::count(&vl_target).await?;
    eprintln!("VictoriaLogs holds {stored} entries");

    // lokivl.
    let mut lokivl = match (&args.lokivl_bin, &args.lokivl_url) {
        (Some(bin), _) => {
            let listen = procs::listen_addr(&args.lokivl_listen)?;
            let a = vec![
                "--backend".to_owned(),
                vl.url.clone(),
                "--listen".to_owned(),
                listen.clone(),
                "--log-level".to_owned(),
                "warn".to_owned(),
            ];
            // A profile times each request's own work, not a cache.
            let a = if args.profile > 0 {
                [a, vec!["--cache-max-bytes".to_owned(), "0".to_owned()]].concat()
            } else {
                a
            };
            Proc::start("lokivl", format!("http://{listen}"), bin, &a)?
        }
        (None, Some(url)) => Proc::attached("lokivl", url.clone(), args.lokivl_pid),
        (None, None) => bail!("give --lokivl-bin or --lokivl-url"),
    };
    let lokivl_target = Target::new(&lokivl.url, args.timeout, pool)?;
    lokivl
        .wait_ready(
            &lokivl_target,
            "/loki/api/v1/status/buildinfo",
            Duration::from_secs(30),
        )
        .await?;

    if args.profile > 0 {
        let table = profile::profile(
            &chosen,
            &lokivl_target,
            &vl_target,
            data_end,
            span_ns,
            args.profile,
        )
        .await;
        print!("{table}");
        drop(lokivl);
        drop(vl);
        return Ok(());
    }

    let watched = [&lokivl, &vl];
    let mut cells = Vec::new();
    for (wi, w) in chosen.iter().enumerate() {
        let wrap_ns = span_ns - w.max_window() - MINUTE_NS;
        if wrap_ns <= 0 {
            bail!(
                "--span must exceed the longest window of {} plus a minute",
                w.name
            );
        }
        for &mode in &args.modes {
            for &conc in &args.concurrency {
                for side in [Side::Direct, Side::Lokivl] {
                    let cell = CellSpec {
                        workload: w,
                        side,
                        mode,
                        concurrency: conc,
                        duration: args.duration,
                        max_requests: args.max_requests,
                        data_end,
                        wrap_ns,
                        seed: args.seed ^ ((wi as u64) << 32) ^ conc as u64,
                    };
                    let target = match side {
                        Side::Lokivl => &lokivl_target,
                        Side::Direct => &vl_target,
                    };
                    let before: Vec<_> = watched
                        .iter()
                        .map(|p| {
                            p.pid
                                .map(|pid| (procstat::reset_peak(pid), procstat::sample(pid)))
                        })
                        .collect();
                    let result = runner::run_cell(target, &cell).await;
                    let mut usage = Vec::new();
                    for (p, b) in watched.iter().zip(before) {
                        let (Some(pid), Some((reset, Some(b)))) = (p.pid, b) else {
                            continue;
                        };
                        if side == Side::Direct && p.name == "lokivl" {
                            continue;
                        }
                        if let Some(a) = procstat::sample(pid) {
                            usage.push(ProcUsage {
                                name: p.name.to_owned(),
                                cpu_s: a.cpu_seconds - b.cpu_seconds,
                                peak_rss_mib: a.peak_rss_kib as f64 / 1024.0,
                                peak_is_cell_only: reset,
                            });
                        }
                    }
                    eprintln!(
                        "{:>10} {:?} {:?} c={conc}: {:.1} ok/s, p99 {:.1} ms, errors {:?}",
                        w.name,
                        side,
                        mode,
                        result.ok_per_s,
                        result.p99_ms.unwrap_or(0.0),
                        result.errors
                    );
                    cells.push(Cell {
                        result,
                        procs: usage,
                    });
                }
            }
        }
    }

    let mut meta = BTreeMap::new();
    meta.insert("lines".to_owned(), json!(args.lines));
    meta.insert("stored_entries".to_owned(), json!(stored));
    meta.insert(
        "span".to_owned(),
        json!(humantime::format_duration(args.span).to_string()),
    );
    meta.insert("pods".to_owned(), json!(set.pods()));
    meta.insert("streams".to_owned(), json!(set.streams.len()));
    meta.insert("seed".to_owned(), json!(args.seed));
    meta.insert(
        "data_end".to_owned(),
        json!(workloads::rfc3339_ms(data_end)),
    );
    meta.insert(
        "duration_per_cell".to_owned(),
        json!(humantime::format_duration(args.duration).to_string()),
    );
    meta.insert(
        "cpus".to_owned(),
        json!(std::thread::available_parallelism().map_or(0, |n| n.get())),
    );
    let report = Report { meta, cells };
    if let Some(dir) = args.out.parent() {
        std::fs::create_dir_all(dir).ok();
    }
    std::fs::write(&args.out, serde_json::to_vec_pretty(&report)?)
        .with_context(|| format!("writing {}", args.out.display()))?;
    eprintln!("results written to {}", args.out.display());
    print!("{}", report::markdown(&report));
    drop(lokivl);
    drop(vl);
    Ok(())
}
