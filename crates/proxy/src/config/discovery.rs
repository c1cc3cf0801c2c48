//! `--discover-service-name` and `--discover-log-levels`; the settings reach
//! requests in their [`crate::context::RequestContext`].

use logsql_ast::Discovery;

/// Loki's `discover_service_name` and `discover_log_levels` limits, applied
/// at query time to logs VictoriaLogs ingested.
#[derive(Debug, Clone, clap::Args)]
pub struct DiscoveryFlags {
    /// Labels `service_name` is derived from when a stream lacks it, in priority order
    /// (comma-separated, Loki's default list); empty disables it.
    #[arg(
        long,
        env = "LOKIVL_DISCOVER_SERVICE_NAME",
        value_delimiter = ',',
        default_value = "service,app,application,app_name,name,app_kubernetes_io_name,container,container_name,k8s_container_name,component,workload,job,k8s_job_name"
    )]
    pub discover_service_name: Vec<String>,
    /// Add Loki's `detected_level` structured metadata to every log entry.
    #[arg(
        long,
        env = "LOKIVL_DISCOVER_LOG_LEVELS",
        default_value_t = true,
        action = clap::ArgAction::Set
    )]
    pub discover_log_levels: bool,
}

impl DiscoveryFlags {
    /// The settings the lowering and the encoders use.
    pub fn settings(&self) -> Discovery {
        Discovery {
            service_name_labels: self
                .discover_service_name
                .iter()
                .map(|s| s.trim())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            log_levels: self.discover_log_levels,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use engine::discovery::loki_defaults;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        d: DiscoveryFlags,
    }

    #[test]
    fn defaults_are_lokis() {
        let c = Cli::try_parse_from(["x"]).unwrap();
        assert_eq!(c.d.settings(), loki_defaults());
        assert_eq!(c.d.settings().service_name_labels.len(), 13);
    }

    #[test]
    fn empty_list_and_false_disable() {
        let c = Cli::try_parse_from([
            "x",
            "--discover-service-name=",
            "--discover-log-levels=false",
        ])
        .unwrap();
        assert_eq!(c.d.settings(), Discovery::default());
        let c = Cli::try_parse_from(["x", "--discover-service-name", "app,job"]).unwrap();
        assert_eq!(c.d.settings().service_name_labels, ["app", "job"]);
        assert!(c.d.settings().log_levels);
    }
}
