//! Command-line and environment configuration, validated once into [`Settings`].
//!
//! Every flag can also be set through a `LOKIVL_*` environment variable so the
//! proxy runs unchanged in containers.

use std::net::SocketAddr;
use std::time::Duration;

use http::Uri;

/// Raw flags as the operator wrote them; turn into [`Settings`] with [`Config::validate`].
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "lokivl",
    version,
    about = "Loki's HTTP API on top of VictoriaLogs"
)]
pub struct Config {
    /// Address the Loki API listens on.
    #[arg(long, env = "LOKIVL_LISTEN", default_value = "0.0.0.0:3100")]
    pub listen: SocketAddr,
    /// Base URL of VictoriaLogs (plain HTTP), e.g. `http://127.0.0.1:9428`.
    #[arg(long, env = "LOKIVL_BACKEND", default_value = "http://127.0.0.1:9428")]
    pub backend: String,
    /// Deadline for one whole call to VictoriaLogs (request plus body), e.g. `60s`.
    #[arg(long, env = "LOKIVL_BACKEND_TIMEOUT", default_value = "60s", value_parser = humantime::parse_duration)]
    pub backend_timeout: Duration,
    /// Log filter in `tracing` env-filter syntax (`info`, `proxy=debug`).
    #[arg(long, env = "LOKIVL_LOG_LEVEL", default_value = "info")]
    pub log_level: String,
    /// Log output format.
    #[arg(long, env = "LOKIVL_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// How the process writes its own logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

/// Why the configuration cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The backend URL does not parse or is not `http://host[:port][/prefix]`.
    #[error("invalid backend URL {url:?}: {reason}")]
    Backend {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A timeout of zero would fail every request.
    #[error("backend timeout must be greater than zero")]
    ZeroTimeout,
}

/// Validated settings the service runs with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// VictoriaLogs base: scheme and authority, plus an optional path prefix without trailing `/`.
    pub backend: BackendUrl,
    /// Deadline for each backend call.
    pub backend_timeout: Duration,
    /// Log filter directive.
    pub log_level: String,
    /// Log output format.
    pub log_format: LogFormat,
}

/// The parts of the VictoriaLogs URL the client needs to build request URIs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendUrl {
    /// `host:port`.
    pub authority: String,
    /// Path prefix such as `/vl` (empty when VictoriaLogs is served at the root).
    pub prefix: String,
}

impl BackendUrl {
    /// Parses `http://host[:port][/prefix]`.
    ///
    /// # Errors
    /// [`ConfigError::Backend`] for other schemes, a missing host, or a query string.
    pub fn parse(url: &str) -> Result<Self, ConfigError> {
        let bad = |reason: &str| ConfigError::Backend {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let uri: Uri = url
            .parse()
            .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(_) => return Err(bad("only http:// is supported")),
            None => return Err(bad("missing scheme, expected http://host:port")),
        }
        let authority = uri
            .authority()
            .ok_or_else(|| bad("missing host"))?
            .to_string();
        if uri.query().is_some() {
            return Err(bad("query strings are not allowed"));
        }
        let prefix = uri.path().trim_end_matches('/').to_owned();
        Ok(Self { authority, prefix })
    }
}

impl Config {
    /// Checks the flags once so the request path never sees invalid settings.
    ///
    /// # Errors
    /// [`ConfigError`] for a bad backend URL or a zero timeout.
    pub fn validate(self) -> Result<Settings, ConfigError> {
        if self.backend_timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout);
        }
        Ok(Settings {
            listen: self.listen,
            backend: BackendUrl::parse(&self.backend)?,
            backend_timeout: self.backend_timeout,
            log_level: self.log_level,
            log_format: self.log_format,
        })
    }
}

impl Settings {
    /// Settings with every default except the backend URL (tests and embedding).
    ///
    /// # Errors
    /// [`ConfigError::Backend`] when `backend_url` is not `http://host[:port]`.
    pub fn new(backend_url: &str) -> Result<Self, ConfigError> {
        Ok(Self {
            listen: SocketAddr::from(([0, 0, 0, 0], 3100)),
            backend: BackendUrl::parse(backend_url)?,
            backend_timeout: Duration::from_secs(60),
            log_level: "info".to_owned(),
            log_format: LogFormat::Text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn defaults() {
        let s = Config::try_parse_from(["lokivl"])
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(s.listen, "0.0.0.0:3100".parse().unwrap());
        assert_eq!(
            s.backend,
            BackendUrl {
                authority: "127.0.0.1:9428".into(),
                prefix: String::new()
            }
        );
        assert_eq!(s.backend_timeout, Duration::from_secs(60));
        assert_eq!(s.log_format, LogFormat::Text);
    }

    #[test]
    fn flags() {
        let s = Config::try_parse_from([
            "lokivl",
            "--listen",
            "127.0.0.1:8080",
            "--backend",
            "http://vl:9428/prefix/",
            "--backend-timeout",
            "1m 30s",
            "--log-format",
            "json",
        ])
        .unwrap()
        .validate()
        .unwrap();
        assert_eq!(s.listen.port(), 8080);
        assert_eq!(
            s.backend,
            BackendUrl {
                authority: "vl:9428".into(),
                prefix: "/prefix".into()
            }
        );
        assert_eq!(s.backend_timeout, Duration::from_secs(90));
        assert_eq!(s.log_format, LogFormat::Json);
    }

    #[test]
    fn rejects_bad_backend() {
        assert!(matches!(
            Settings::new("https://vl:9428"),
            Err(ConfigError::Backend { .. })
        ));
        assert!(matches!(
            Settings::new("vl:9428"),
            Err(ConfigError::Backend { .. })
        ));
        assert!(matches!(
            Settings::new("http://vl:9428/?a=b"),
            Err(ConfigError::Backend { .. })
        ));
        assert!(Settings::new("http://127.0.0.1:1").is_ok());
    }

    #[test]
    fn rejects_zero_timeout() {
        let c = Config::try_parse_from(["lokivl", "--backend-timeout", "0s"]).unwrap();
        assert_eq!(c.validate().unwrap_err(), ConfigError::ZeroTimeout);
    }

    #[test]
    fn rejects_bad_duration() {
        assert!(Config::try_parse_from(["lokivl", "--backend-timeout", "soon"]).is_err());
    }
}
