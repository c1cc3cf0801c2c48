//! The tail flags (flattened into [`crate::config::Config`]).

use std::time::Duration;

/// The smallest `--tail-max-line-bytes`: VictoriaLogs refuses to store a row
/// whose JSON form is over 2 MiB, so a lower bound would cut ordinary rows.
pub const MIN_LINE_BYTES: usize = 2 << 20;

/// `--tail-max-duration`, `--tail-max-concurrent`, `--tail-max-concurrent-total`,
/// `--tail-allowed-origins`, `--tail-refresh-interval`, `--tail-write-timeout`,
/// `--tail-max-line-bytes`.
#[derive(Debug, Clone, clap::Args)]
pub struct TailFlags {
    /// Loki's `tail_max_duration`: a tail is closed after this long.
    #[arg(long, env = "LOKIVL_TAIL_MAX_DURATION", default_value = "1h", value_parser = humantime::parse_duration)]
    pub tail_max_duration: Duration,
    /// Loki's `max_concurrent_tail_requests`: tails running at once per tenant.
    #[arg(long, env = "LOKIVL_TAIL_MAX_CONCURRENT", default_value_t = 10)]
    pub tail_max_concurrent: usize,
    /// Tails running at once over all tenants: each holds a socket, a
    /// VictoriaLogs connection and a query VictoriaLogs reruns every refresh.
    #[arg(long, env = "LOKIVL_TAIL_MAX_CONCURRENT_TOTAL", default_value_t = 100)]
    pub tail_max_concurrent_total: usize,
    /// Browser origins allowed to open a tail (comma-separated, `*` for any); requests
    /// without `Origin` and same-host origins are always allowed.
    #[arg(long, env = "LOKIVL_TAIL_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub tail_allowed_origins: Vec<String>,
    /// How often VictoriaLogs looks for new entries (its `refresh_interval`).
    #[arg(long, env = "LOKIVL_TAIL_REFRESH_INTERVAL", default_value = "1s", value_parser = humantime::parse_duration)]
    pub tail_refresh_interval: Duration,
    /// A client that has not taken a frame within this long (a stalled write, an unanswered ping) is disconnected.
    #[arg(long, env = "LOKIVL_TAIL_WRITE_TIMEOUT", default_value = "10s", value_parser = humantime::parse_duration)]
    pub tail_write_timeout: Duration,
    /// Longest NDJSON row read from VictoriaLogs' tail; a longer one ends the tail with close code 1011.
    #[arg(long, env = "LOKIVL_TAIL_MAX_LINE_BYTES", default_value_t = 16 << 20)]
    pub tail_max_line_bytes: usize,
}

/// Validated tail settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailSettings {
    /// Longest life of one tail.
    pub max_duration: Duration,
    /// Tails per tenant.
    pub max_concurrent: usize,
    /// Tails over all tenants.
    pub max_concurrent_total: usize,
    /// Allowed `Origin` values besides same-host ones.
    pub allowed_origins: Vec<String>,
    /// VictoriaLogs' polling period.
    pub refresh_interval: Duration,
    /// Longest stall of a write, and longest wait for a ping's answer.
    pub write_timeout: Duration,
    /// Longest NDJSON row buffered from VictoriaLogs.
    pub max_line_bytes: usize,
}

impl Default for TailSettings {
    fn default() -> Self {
        Self {
            max_duration: Duration::from_secs(3600),
            max_concurrent: 10,
            max_concurrent_total: 100,
            allowed_origins: Vec::new(),
            refresh_interval: Duration::from_secs(1),
            write_timeout: Duration::from_secs(10),
            max_line_bytes: 16 << 20,
        }
    }
}

impl TailFlags {
    /// Checks the values once.
    ///
    /// # Errors
    /// The reason, as text, for zero durations or a line bound below [`MIN_LINE_BYTES`].
    pub fn validate(&self) -> Result<TailSettings, String> {
        if self.tail_max_duration.is_zero() {
            return Err("--tail-max-duration must be greater than zero".to_owned());
        }
        if self.tail_refresh_interval < Duration::from_millis(100) {
            return Err("--tail-refresh-interval must be at least 100ms".to_owned());
        }
        if self.tail_write_timeout.is_zero() {
            return Err("--tail-write-timeout must be greater than zero".to_owned());
        }
        if self.tail_max_line_bytes < MIN_LINE_BYTES {
            return Err(format!(
                "--tail-max-line-bytes must be at least {MIN_LINE_BYTES} (VictoriaLogs stores rows of up to 2 MiB)"
            ));
        }
        Ok(TailSettings {
            max_duration: self.tail_max_duration,
            max_concurrent: self.tail_max_concurrent,
            max_concurrent_total: self.tail_max_concurrent_total,
            allowed_origins: self
                .tail_allowed_origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_owned())
                .filter(|o| !o.is_empty())
                .collect(),
            refresh_interval: self.tail_refresh_interval,
            write_timeout: self.tail_write_timeout,
            max_line_bytes: self.tail_max_line_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        tail: TailFlags,
    }

    fn parse(args: &[&str]) -> Result<TailSettings, String> {
        let mut argv = vec!["lokivl"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).unwrap().tail.validate()
    }

    #[test]
    fn defaults_and_bounds() {
        let s = parse(&[]).unwrap();
        assert_eq!(s.max_concurrent_total, 100);
        assert_eq!(s.write_timeout, Duration::from_secs(10));
        assert_eq!(s.max_line_bytes, 16 << 20);
        assert_eq!(s, TailSettings::default());
        assert!(parse(&["--tail-max-line-bytes", "1048576"]).is_err());
        assert!(parse(&["--tail-write-timeout", "0s"]).is_err());
    }
}
