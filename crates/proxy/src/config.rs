//! Command-line and environment configuration, validated once into [`Settings`].
//!
//! Every flag can also be set through a `LOKIVL_*` environment variable so the
//! proxy runs unchanged in containers, or in a YAML file ([`file`]) given
//! with `--config-file`. Precedence: flag > variable > file > default.

pub mod discovery;
pub mod file;
mod settings;
pub mod shared_cache;
pub mod tls;

pub use crate::backend::url::BackendUrl;
pub use settings::Settings;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use http::HeaderValue;

use crate::backend::BackendOptions;
use crate::limits::Limits;
use crate::response_cache::CacheSettings;

/// Raw flags as the operator wrote them; turn into [`Settings`] with [`Config::validate`].
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "lokivl",
    version,
    about = "Loki's HTTP API on top of VictoriaLogs"
)]
pub struct Config {
    /// YAML file with settings (keys are the flag names); flags and variables override it.
    #[arg(long, env = "LOKIVL_CONFIG_FILE")]
    pub config_file: Option<PathBuf>,
    /// Address the Loki API listens on.
    #[arg(long, env = "LOKIVL_LISTEN", default_value = "0.0.0.0:3100")]
    pub listen: SocketAddr,
    /// Base URL of VictoriaLogs, `http://` or `https://`, e.g. `http://127.0.0.1:9428`; `user:pass@` becomes basic auth and is never printed.
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
    /// Loki's `query_timeout`: deadline of a whole request, queueing included (504 past it).
    #[arg(long, env = "LOKIVL_QUERY_TIMEOUT", default_value = "1m", value_parser = humantime::parse_duration)]
    pub query_timeout: Duration,
    /// Requests served at once; more get 429 (0 = unlimited).
    #[arg(long, env = "LOKIVL_MAX_INFLIGHT", default_value_t = 1024)]
    pub max_inflight: usize,
    /// Log-query evaluations running at once, as Loki's `querier.max-concurrent`; more wait (0 = unlimited).
    #[arg(long, env = "LOKIVL_MAX_CONCURRENT_LOG_QUERIES", default_value_t = crate::limits::DEFAULT_MAX_CONCURRENT_LOG_QUERIES)]
    pub max_concurrent_log_queries: usize,
    /// Sustained requests per second per tenant (`X-Scope-OrgID`); past it 429 (0 = unlimited).
    #[arg(long, env = "LOKIVL_TENANT_RATE", default_value_t = 0.0)]
    pub tenant_rate: f64,
    /// Requests a tenant may burst above `--tenant-rate`.
    #[arg(long, env = "LOKIVL_TENANT_BURST", default_value_t = 100)]
    pub tenant_burst: u32,
    /// Longest request URL in bytes (414 past it); Drilldown's pipelines need 64 KiB.
    #[arg(long, env = "LOKIVL_MAX_URL_BYTES", default_value_t = 65536)]
    pub max_url_bytes: usize,
    /// Largest request header block in bytes (431 past it).
    #[arg(long, env = "LOKIVL_MAX_HEADER_BYTES", default_value_t = 65536)]
    pub max_header_bytes: usize,
    /// Largest request body in bytes (413 past it): forms and pushes.
    #[arg(long, env = "LOKIVL_MAX_BODY_BYTES", default_value_t = 16777216)]
    pub max_body_bytes: usize,
    /// Calls to VictoriaLogs running at once.
    #[arg(long, env = "LOKIVL_BACKEND_CONCURRENCY", default_value_t = 64)]
    pub backend_concurrency: usize,
    /// Calls waiting for a VictoriaLogs slot; more get 503 with Retry-After.
    #[arg(long, env = "LOKIVL_BACKEND_QUEUE", default_value_t = 256)]
    pub backend_queue: usize,
    /// Largest VictoriaLogs answer read, in bytes; larger ones give Loki's `max_query_bytes_read` 400.
    #[arg(
        long,
        env = "LOKIVL_BACKEND_MAX_RESPONSE_BYTES",
        default_value_t = 67108864
    )]
    pub backend_max_response_bytes: usize,
    /// Tenants of a multi-tenant request (`X-Scope-OrgID: a|b`) whose VictoriaLogs calls run at the same time.
    #[arg(long, env = "LOKIVL_TENANT_FANOUT_PARALLELISM", default_value_t = 4)]
    pub tenant_fanout_parallelism: usize,
    /// Consecutive VictoriaLogs failures that open the circuit breaker (0 disables it).
    #[arg(long, env = "LOKIVL_BREAKER_FAILURES", default_value_t = 5)]
    pub breaker_failures: u32,
    /// How long the open breaker answers 503 before probing VictoriaLogs again.
    #[arg(long, env = "LOKIVL_BREAKER_COOLDOWN", default_value = "2s", value_parser = humantime::parse_duration)]
    pub breaker_cooldown: Duration,
    /// Basic-auth user towards VictoriaLogs (with `--backend-password-file`).
    #[arg(long, env = "LOKIVL_BACKEND_USER")]
    pub backend_user: Option<String>,
    /// File holding the basic-auth password towards VictoriaLogs (kept out of `ps` and logs).
    #[arg(long, env = "LOKIVL_BACKEND_PASSWORD_FILE")]
    pub backend_password_file: Option<PathBuf>,
    /// File holding a bearer token sent to VictoriaLogs.
    #[arg(long, env = "LOKIVL_BACKEND_BEARER_TOKEN_FILE")]
    pub backend_bearer_token_file: Option<PathBuf>,
    /// Forward `/loki/api/v1/push` to VictoriaLogs' Loki ingestion (otherwise 405).
    #[arg(long, env = "LOKIVL_ENABLE_PUSH", default_value_t = false)]
    pub enable_push: bool,
    /// Serve `/metrics` on this separate address instead of the API listener.
    #[arg(long, env = "LOKIVL_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Multi-tenancy: `--tenant-map`, `--tenant-map-reload`, `--default-tenant`,
    /// `--tenant-numeric`, `--require-tenant-header`.
    #[command(flatten)]
    pub tenancy: crate::tenant::TenantFlags,
    /// Live tail: `--tail-*`.
    #[command(flatten)]
    pub tail: crate::tail::TailFlags,
    /// Connection bounds: `--http-*`.
    #[command(flatten)]
    pub server: crate::server::conn::ConnFlags,
    /// Log range windows: `--split-queries-*`.
    #[command(flatten)]
    pub windows: crate::window::WindowFlags,
    /// TLS: `--tls-*` (listener) and `--backend-tls-*`.
    #[command(flatten)]
    pub tls: tls::TlsFlags,
    /// Loki's per-query limits: `--max-query-length`, `--max-entries-limit-per-query`, `--max-query-series`.
    #[command(flatten)]
    pub query_limits: crate::params::limits::QueryLimitFlags,
    /// Loki's label discovery: `--discover-service-name`, `--discover-log-levels`.
    #[command(flatten)]
    pub discovery: crate::config::discovery::DiscoveryFlags,
    /// Run `json` parsers and the label filters and `unwrap` after them in
    /// VictoriaLogs when a guard proves the answer is Loki's (false: always in lokivl).
    #[arg(
        long,
        env = "LOKIVL_PARSER_PUSHDOWN",
        default_value_t = true,
        action = clap::ArgAction::Set
    )]
    pub parser_pushdown: bool,
    /// Bytes of cached answers and keys kept in memory (0 disables the response cache).
    #[arg(long, env = "LOKIVL_CACHE_MAX_BYTES", default_value_t = 268435456)]
    pub cache_max_bytes: u64,
    /// How long answers for ranges that ended before the freshness margin are kept.
    #[arg(long, env = "LOKIVL_CACHE_TTL", default_value = "1h", value_parser = humantime::parse_duration)]
    pub cache_ttl: Duration,
    /// How long answers touching the live edge are kept (0s: identical requests in flight share one evaluation, nothing is kept).
    #[arg(long, env = "LOKIVL_CACHE_LIVE_TTL", default_value = "0s", value_parser = humantime::parse_duration)]
    pub cache_live_ttl: Duration,
    /// A range that ends later than now minus this margin is the live edge.
    #[arg(long, env = "LOKIVL_CACHE_FRESHNESS", default_value = "10m", value_parser = humantime::parse_duration)]
    pub cache_freshness: Duration,
    /// The cache tier shared by replicas: `--shared-cache*`.
    #[command(flatten)]
    pub shared_cache: shared_cache::SharedCacheFlags,
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

impl From<crate::backend::url::BackendUrlError> for ConfigError {
    fn from(e: crate::backend::url::BackendUrlError) -> Self {
        Self::Backend {
            url: e.url,
            reason: e.reason,
        }
    }
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
    /// `--query-timeout 0` would fail every request.
    #[error("query timeout must be greater than zero")]
    ZeroQueryTimeout,
    /// Both basic and bearer auth, or a user without a password.
    #[error("backend auth: {0}")]
    Auth(String),
    /// A credentials file could not be read.
    #[error("cannot read {path}: {reason}")]
    File {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        reason: String,
    },
    /// `--tenant-rate` is negative or not a number.
    #[error("tenant rate must be a finite number >= 0")]
    Rate,
    /// A tenancy, tail or connection flag is unusable (bad map file, unknown default tenant, zero duration).
    #[error("{0}")]
    Tenancy(String),
    /// A TLS flag is unusable (unreadable PEM file, key not matching, contradicting flags).
    #[error("{0}")]
    Tls(String),
    /// A `--shared-cache*` flag is unusable (bad URL, zero timeout).
    #[error("{0}")]
    SharedCache(String),
}

impl Config {
    /// Parses `args` (argv, program name first), the environment and `--config-file`.
    ///
    /// The file fills only the settings that neither `args` nor a `LOKIVL_*`
    /// variable set, by re-parsing with the file's values placed before `args`.
    ///
    /// # Errors
    /// A [`clap::Error`] (printed and exited on by `main`) for bad flags or a bad file.
    pub fn load<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::parser::ValueSource;
        use clap::{CommandFactory as _, FromArgMatches as _, Parser as _};
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        let mut cmd = Self::command();
        let matches = cmd.try_get_matches_from_mut(&args)?;
        let first = Self::from_arg_matches(&matches)?;
        let Some(path) = &first.config_file else {
            return Ok(first);
        };
        let known = |id: &str| cmd.get_arguments().any(|a| a.get_id() == id);
        let entries = file::read(path, known)
            .map_err(|e| cmd.error(clap::error::ErrorKind::InvalidValue, e.to_string()))?;
        let mut merged: Vec<std::ffi::OsString> = args.iter().take(1).cloned().collect();
        for (id, value) in entries {
            if matches!(
                matches.value_source(&id),
                Some(ValueSource::CommandLine | ValueSource::EnvVariable)
            ) {
                continue; // set on the command line or in the environment
            }
            let is_switch = cmd
                .get_arguments()
                .find(|a| a.get_id() == id.as_str())
                .is_some_and(|a| !a.get_action().takes_values());
            let long = id.replace('_', "-");
            if is_switch {
                match value.as_str() {
                    "true" => merged.push(format!("--{long}").into()),
                    "false" => {}
                    _ => {
                        return Err(cmd.error(
                            clap::error::ErrorKind::InvalidValue,
                            format!("config file {}: {id} must be true or false", path.display()),
                        ));
                    }
                }
            } else {
                merged.push(format!("--{long}={value}").into());
            }
        }
        merged.extend(args.iter().skip(1).cloned());
        Self::try_parse_from(merged)
    }

    /// Checks the flags once so the request path never sees invalid settings.
    ///
    /// # Errors
    /// [`ConfigError`] for a bad backend URL or a zero timeout.
    pub fn validate(self) -> Result<Settings, ConfigError> {
        if self.backend_timeout.is_zero() {
            return Err(ConfigError::ZeroTimeout);
        }
        if self.query_timeout.is_zero() {
            return Err(ConfigError::ZeroQueryTimeout);
        }
        if !self.tenant_rate.is_finite() || self.tenant_rate < 0.0 {
            return Err(ConfigError::Rate);
        }
        let authorization = self.authorization()?;
        let backend = BackendUrl::parse(&self.backend)?;
        let tls = self.tls.validate(backend.https).map_err(ConfigError::Tls)?;
        Ok(Settings {
            listen: self.listen,
            backend,
            backend_timeout: self.backend_timeout,
            log_level: self.log_level,
            log_format: self.log_format,
            limits: Limits {
                query_timeout: self.query_timeout,
                max_inflight: self.max_inflight,
                max_concurrent_log_queries: self.max_concurrent_log_queries,
                tenant_rate: self.tenant_rate,
                tenant_burst: self.tenant_burst,
                max_url_bytes: self.max_url_bytes,
                max_header_bytes: self.max_header_bytes,
                max_body_bytes: self.max_body_bytes,
            },
            backend_options: BackendOptions {
                timeout: self.backend_timeout,
                concurrency: self.backend_concurrency,
                queue: self.backend_queue,
                max_response_bytes: self.backend_max_response_bytes,
                breaker_failures: self.breaker_failures,
                breaker_cooldown: self.breaker_cooldown,
                authorization,
                tls: tls.backend,
                fanout_parallelism: self.tenant_fanout_parallelism.max(1),
            },
            enable_push: self.enable_push,
            metrics_listen: self.metrics_listen,
            tenant: self.tenancy.validate().map_err(ConfigError::Tenancy)?,
            tail: self.tail.validate().map_err(ConfigError::Tenancy)?,
            server: self.server.validate().map_err(ConfigError::Tenancy)?,
            cache: CacheSettings {
                max_bytes: self.cache_max_bytes,
                ttl: self.cache_ttl,
                live_ttl: self.cache_live_ttl,
                freshness: self.cache_freshness,
                windows: self.windows.settings(),
            },
            shared_cache: self
                .shared_cache
                .validate()
                .map_err(ConfigError::SharedCache)?,
            listener_tls: tls.listener,
            query_limits: self.query_limits.limits(),
            discovery: self.discovery.settings(),
            parser_pushdown: self.parser_pushdown,
            work: crate::work::WorkLimits::default(),
        })
    }

    /// Builds the `Authorization` header towards VictoriaLogs from the credential flags.
    fn authorization(&self) -> Result<Option<HeaderValue>, ConfigError> {
        let read = |path: &PathBuf| {
            std::fs::read_to_string(path)
                .map(|s| s.trim().to_owned())
                .map_err(|e| ConfigError::File {
                    path: path.clone(),
                    reason: e.to_string(),
                })
        };
        let in_url = url_basic_auth(&self.backend);
        let flags_set = self.backend_user.is_some()
            || self.backend_password_file.is_some()
            || self.backend_bearer_token_file.is_some();
        let value = match (
            &self.backend_user,
            &self.backend_password_file,
            &self.backend_bearer_token_file,
        ) {
            // `http://user:pass@vl:9428`: hyper never sends URL credentials, so
            // they become the basic-auth header (and are masked wherever the URL is shown).
            _ if in_url.is_some() && flags_set => {
                return Err(ConfigError::Auth(
                    "credentials in --backend and in --backend-user/--backend-password-file/--backend-bearer-token-file: use one"
                        .into(),
                ));
            }
            (None, None, None) => match in_url {
                Some(basic) => basic,
                None => return Ok(None),
            },
            (Some(_), _, Some(_)) | (None, Some(_), Some(_)) => {
                return Err(ConfigError::Auth(
                    "use either basic auth or a bearer token, not both".into(),
                ));
            }
            (None, None, Some(token)) => format!("Bearer {}", read(token)?),
            (Some(user), Some(pass), None) => {
                let raw = format!("{user}:{}", read(pass)?);
                format!("Basic {}", go::base64::encode(raw.as_bytes()))
            }
            (Some(_), None, None) | (None, Some(_), None) => {
                return Err(ConfigError::Auth(
                    "basic auth needs both --backend-user and --backend-password-file".into(),
                ));
            }
        };
        sensitive_header(&value).map(Some)
    }
}

/// `Basic …` for the `user:pass@` of a backend URL, if it has one.
///
/// hyper never sends URL credentials itself, so lokivl sends them as the
/// basic-auth header (and masks them wherever the URL is shown).
fn url_basic_auth(url: &str) -> Option<String> {
    let (user, pass) = crate::backend::url::userinfo(url)?;
    Some(format!(
        "Basic {}",
        go::base64::encode(format!("{user}:{pass}").as_bytes())
    ))
}

/// An `Authorization` value kept out of Debug output and HTTP/2 header tables.
fn sensitive_header(value: &str) -> Result<HeaderValue, ConfigError> {
    let mut v = HeaderValue::from_str(value)
        .map_err(|_| ConfigError::Auth("credentials contain invalid characters".into()))?;
    v.set_sensitive(true);
    Ok(v)
}

#[cfg(test)]
mod tests;
