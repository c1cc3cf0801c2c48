//! Command-line flags.

use std::path::PathBuf;
use std::time::Duration;

use crate::runner::Mode;

/// Load benchmark: lokivl (Loki API) against VictoriaLogs called directly (LogsQL).
///
/// Starts VictoriaLogs and lokivl itself (`--vl-bin`, `--lokivl-bin`) or
/// attaches to running ones (`--vl-url`/`--vl-pid`, `--lokivl-url`/`--lokivl-pid`).
/// Only loopback addresses are accepted.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "loadbench")]
pub(crate) struct Args {
    /// VictoriaLogs binary to start (fresh data directory, long retention).
    #[arg(long)]
    pub(crate) vl_bin: Option<PathBuf>,
    /// Address the started VictoriaLogs listens on (`auto`: a free loopback port).
    #[arg(long, default_value = "auto")]
    pub(crate) vl_listen: String,
    /// Data directory of the started VictoriaLogs (wiped only if a previous loadbench created it).
    #[arg(long, default_value = "/tmp/loadbench/vl-data")]
    pub(crate) data_dir: PathBuf,
    /// URL of a running VictoriaLogs (instead of `--vl-bin`).
    #[arg(long)]
    pub(crate) vl_url: Option<String>,
    /// Pid of the running VictoriaLogs, for CPU and RSS.
    #[arg(long)]
    pub(crate) vl_pid: Option<u32>,
    /// lokivl binary to start (`cargo build --release -p proxy --bin lokivl`).
    #[arg(long)]
    pub(crate) lokivl_bin: Option<PathBuf>,
    /// Address the started lokivl listens on (`auto`: a free loopback port).
    #[arg(long, default_value = "auto")]
    pub(crate) lokivl_listen: String,
    /// URL of a running lokivl (instead of `--lokivl-bin`).
    #[arg(long)]
    pub(crate) lokivl_url: Option<String>,
    /// Pid of the running lokivl, for CPU and RSS.
    #[arg(long)]
    pub(crate) lokivl_pid: Option<u32>,
    /// Skip ingestion (the data is already there; give `--data-end`).
    #[arg(long)]
    pub(crate) no_ingest: bool,
    /// Newest timestamp of the dataset, Unix seconds (default: now, rounded down to the minute).
    #[arg(long)]
    pub(crate) data_end: Option<i64>,
    /// Push the stream labels only (no `service_name`, no structured metadata
    /// such as `detected_level`), as log shippers over the Loki protocol do;
    /// run the `drilldown_labels` workload on it.
    #[arg(long)]
    pub(crate) stream_labels_only: bool,
    /// Log entries to generate.
    #[arg(long, default_value_t = 300_000)]
    pub(crate) lines: u64,
    /// Time span of the dataset (must exceed the longest window, 72h).
    #[arg(long, default_value = "96h", value_parser = humantime::parse_duration)]
    pub(crate) span: Duration,
    /// Pods per service and namespace (6 namespaces × 10 services).
    #[arg(long, default_value_t = 32)]
    pub(crate) pods_per_service: u32,
    /// Seed of the dataset and of the request sequence.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Workloads to run (comma-separated): small, heavy, long_range, compute, drilldown, dashboard, drilldown_labels.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "small,heavy,long_range,compute,drilldown,dashboard"
    )]
    pub(crate) workloads: Vec<String>,
    /// Concurrencies (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "10,50")]
    pub(crate) concurrency: Vec<usize>,
    /// Modes (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "cold,warm")]
    pub(crate) modes: Vec<Mode>,
    /// How long each cell starts new requests.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub(crate) duration: Duration,
    /// Upper bound on requests per cell.
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) max_requests: u64,
    /// Per-request timeout.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub(crate) timeout: Duration,
    /// Instead of the cells: send each template of the chosen workloads N
    /// times, one request at a time, to both sides (cold windows) and print
    /// the median latency per template. lokivl is started with its cache
    /// off (`--cache-max-bytes 0`) when loadbench starts it.
    #[arg(long, default_value_t = 0)]
    pub(crate) profile: u64,
    /// Print every workload's request pairs (Loki call, VictoriaLogs call) as Markdown and exit.
    #[arg(long)]
    pub(crate) list: bool,
    /// Where the JSON results go.
    #[arg(long, default_value = "target/loadbench.json")]
    pub(crate) out: PathBuf,
}
