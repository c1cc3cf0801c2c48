//! `--shared-cache*`: the cache tier shared by lokivl replicas (memcached),
//! behind the in-process cache.

use std::time::Duration;

use cache::SharedConfig;
use cache::shared::{DEFAULT_POOL_SIZE, Servers};

/// The shared cache tier's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct SharedCacheFlags {
    /// Shared cache tier of lokivl replicas: `memcached://host:port[,host:port…]` (unset: off).
    #[arg(long, env = "LOKIVL_SHARED_CACHE")]
    pub shared_cache: Option<String>,
    /// Deadline of one shared-cache get or set; past it the answer comes from VictoriaLogs.
    #[arg(long, env = "LOKIVL_SHARED_CACHE_TIMEOUT", default_value = "100ms", value_parser = humantime::parse_duration)]
    pub shared_cache_timeout: Duration,
    /// How long a memcached server that failed 3 times in a row is skipped.
    #[arg(long, env = "LOKIVL_SHARED_CACHE_CIRCUIT_OPEN", default_value = "10s", value_parser = humantime::parse_duration)]
    pub shared_cache_circuit_open: Duration,
    /// Largest entry (header plus body) written to or read from the shared tier; larger ones stay local.
    #[arg(
        long,
        env = "LOKIVL_SHARED_CACHE_MAX_ITEM_BYTES",
        default_value_t = 1_047_552
    )]
    pub shared_cache_max_item_bytes: usize,
}

impl SharedCacheFlags {
    /// The tier's settings, or `None` when `--shared-cache` is unset.
    ///
    /// # Errors
    /// A message for a bad URL, a zero timeout or a zero item bound.
    pub fn validate(&self) -> Result<Option<SharedConfig>, String> {
        let Some(url) = self
            .shared_cache
            .as_deref()
            .filter(|u| !u.trim().is_empty())
        else {
            return Ok(None);
        };
        let servers = Servers::parse(url.trim()).map_err(|e| e.to_string())?;
        if self.shared_cache_timeout.is_zero() {
            return Err("--shared-cache-timeout must be greater than zero".into());
        }
        if self.shared_cache_max_item_bytes == 0 {
            return Err("--shared-cache-max-item-bytes must be greater than zero".into());
        }
        Ok(Some(SharedConfig {
            servers,
            timeout: self.shared_cache_timeout,
            circuit_open: self.shared_cache_circuit_open,
            max_item_bytes: self.shared_cache_max_item_bytes,
            pool_size: DEFAULT_POOL_SIZE,
        }))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        s: SharedCacheFlags,
    }

    fn parse(args: &[&str]) -> Result<Option<SharedConfig>, String> {
        let mut argv = vec!["x"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).unwrap().s.validate()
    }

    #[test]
    fn off_by_default_with_the_documented_bounds() {
        assert_eq!(parse(&[]), Ok(None));
        let c = parse(&["--shared-cache", "memcached://b:11211,a:11211"])
            .unwrap()
            .unwrap();
        assert_eq!(c.servers.addrs(), ["a:11211", "b:11211"]);
        assert_eq!(c.timeout, Duration::from_millis(100));
        assert_eq!(c.circuit_open, Duration::from_secs(10));
        assert_eq!(c.max_item_bytes, 1_047_552);
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(
            parse(&["--shared-cache", "redis://r:6379"])
                .unwrap_err()
                .contains("redis is not supported")
        );
        assert_eq!(
            parse(&[
                "--shared-cache",
                "memcached://a:1",
                "--shared-cache-timeout",
                "0s"
            ]),
            Err("--shared-cache-timeout must be greater than zero".into())
        );
        assert!(parse(&["--shared-cache", "memcached://a"]).is_err());
    }

    #[test]
    fn the_config_file_takes_the_same_keys() {
        let path =
            std::env::temp_dir().join(format!("lokivl-shared-cache-{}.yaml", std::process::id()));
        std::fs::write(
            &path,
            "shared_cache: memcached://127.0.0.1:11211\nshared-cache-timeout: 250ms\n",
        )
        .unwrap();
        let arg = path.to_string_lossy().into_owned();
        let s = crate::config::Config::load(["lokivl", "--config-file", arg.as_str()])
            .unwrap()
            .validate()
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        let c = s.shared_cache.unwrap();
        assert_eq!(c.servers.addrs(), ["127.0.0.1:11211"]);
        assert_eq!(c.timeout, Duration::from_millis(250));
    }
}
