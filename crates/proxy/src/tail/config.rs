//! The tail flags (flattened into [`crate::config::Config`]).

use std::time::Duration;

/// `--tail-max-duration`, `--tail-max-concurrent`, `--tail-allowed-origins`, `--tail-refresh-interval`.
#[derive(Debug, Clone, clap::Args)]
pub struct TailFlags {
    /// Loki's `tail_max_duration`: a tail is closed after this long.
    #[arg(long, env = "LOKIVL_TAIL_MAX_DURATION", default_value = "1h", value_parser = humantime::parse_duration)]
    pub tail_max_duration: Duration,
    /// Loki's `max_concurrent_tail_requests`: tails running at once per tenant.
    #[arg(long, env = "LOKIVL_TAIL_MAX_CONCURRENT", default_value_t = 10)]
    pub tail_max_concurrent: usize,
    /// Browser origins allowed to open a tail (comma-separated, `*` for any); requests
    /// without `Origin` and same-host origins are always allowed.
    #[arg(long, env = "LOKIVL_TAIL_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub tail_allowed_origins: Vec<String>,
    /// How often VictoriaLogs looks for new entries (its `refresh_interval`).
    #[arg(long, env = "LOKIVL_TAIL_REFRESH_INTERVAL", default_value = "1s", value_parser = humantime::parse_duration)]
    pub tail_refresh_interval: Duration,
}

/// Validated tail settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailSettings {
    /// Longest life of one tail.
    pub max_duration: Duration,
    /// Tails per tenant.
    pub max_concurrent: usize,
    /// Allowed `Origin` values besides same-host ones.
    pub allowed_origins: Vec<String>,
    /// VictoriaLogs' polling period.
    pub refresh_interval: Duration,
}

impl Default for TailSettings {
    fn default() -> Self {
        Self {
            max_duration: Duration::from_secs(3600),
            max_concurrent: 10,
            allowed_origins: Vec::new(),
            refresh_interval: Duration::from_secs(1),
        }
    }
}

impl TailFlags {
    /// Checks the values once.
    ///
    /// # Errors
    /// The reason, as text, for zero durations.
    pub fn validate(&self) -> Result<TailSettings, String> {
        if self.tail_max_duration.is_zero() {
            return Err("--tail-max-duration must be greater than zero".to_owned());
        }
        if self.tail_refresh_interval < Duration::from_millis(100) {
            return Err("--tail-refresh-interval must be at least 100ms".to_owned());
        }
        Ok(TailSettings {
            max_duration: self.tail_max_duration,
            max_concurrent: self.tail_max_concurrent,
            allowed_origins: self
                .tail_allowed_origins
                .iter()
                .map(|o| o.trim().trim_end_matches('/').to_owned())
                .filter(|o| !o.is_empty())
                .collect(),
            refresh_interval: self.tail_refresh_interval,
        })
    }
}
