//! The validated settings a lokivl process runs with, and their defaults for
//! tests and embedding.

use std::net::SocketAddr;
use std::time::Duration;

use super::{BackendUrl, ConfigError, LogFormat};
use crate::backend::BackendOptions;
use crate::limits::Limits;
use crate::response_cache::CacheSettings;

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
    /// Request-level limits.
    pub limits: Limits,
    /// Backend bounds, breaker and credentials (`timeout` is overridden by `backend_timeout`).
    pub backend_options: BackendOptions,
    /// Whether `/loki/api/v1/push` is forwarded.
    pub enable_push: bool,
    /// A separate listener for `/metrics`.
    pub metrics_listen: Option<SocketAddr>,
    /// Tenant mapping (`X-Scope-OrgID` to VictoriaLogs tenants).
    pub tenant: crate::tenant::TenantSettings,
    /// Live-tail limits.
    pub tail: crate::tail::TailSettings,
    /// Connection bounds of the listeners (`--http-*`).
    pub server: crate::server::conn::ConnLimits,
    /// The response cache.
    pub cache: CacheSettings,
    /// The cache tier shared by replicas (`--shared-cache`), if any.
    pub shared_cache: Option<cache::SharedConfig>,
    /// HTTPS on the listener (the backend's TLS config is in `backend_options.tls`).
    pub listener_tls: Option<std::sync::Arc<rustls::ServerConfig>>,
    /// Loki's per-query limits.
    pub query_limits: crate::params::QueryLimits,
    /// Labels synthesized as Loki's ingest adds them (`service_name`, `detected_level`).
    pub discovery: logsql_ast::Discovery,
    /// Whether parsers may run in VictoriaLogs behind an exactness guard
    /// (`--parser-pushdown`; answers are the same either way).
    pub parser_pushdown: bool,
    /// Per-request bounds on rows read in lokivl (the defaults; no flag sets them yet).
    pub work: crate::work::WorkLimits,
}

impl Settings {
    /// Settings with every default except the backend URL (tests and embedding);
    /// `user:pass@` in it becomes basic auth, as with `--backend`.
    ///
    /// An `https://` backend is verified against the system roots; set
    /// `backend_options.tls` ([`crate::backend::tls::client_config`]) for others.
    ///
    /// # Errors
    /// [`ConfigError::Backend`] when `backend_url` is not `http[s]://host[:port]`,
    /// [`ConfigError::Tls`] when an `https://` backend finds no system roots.
    pub fn new(backend_url: &str) -> Result<Self, ConfigError> {
        let backend = BackendUrl::parse(backend_url)?;
        let mut backend_options = BackendOptions::with_timeout(Duration::from_secs(60));
        backend_options.authorization = super::url_basic_auth(backend_url)
            .map(|basic| super::sensitive_header(&basic))
            .transpose()?;
        if backend.https {
            let files = crate::backend::tls::BackendTlsFiles::default();
            let config = crate::backend::tls::client_config(&files)
                .map_err(|e| ConfigError::Tls(format!("backend TLS: {e}")))?;
            backend_options.tls = Some(config);
        }
        Ok(Self {
            listen: SocketAddr::from(([0, 0, 0, 0], 3100)),
            backend,
            backend_timeout: Duration::from_secs(60),
            log_level: "info".to_owned(),
            log_format: LogFormat::Text,
            limits: Limits::default(),
            backend_options,
            enable_push: false,
            metrics_listen: None,
            tenant: crate::tenant::TenantSettings::default(),
            tail: crate::tail::TailSettings::default(),
            server: crate::server::conn::ConnLimits::default(),
            cache: CacheSettings::default(),
            shared_cache: None,
            listener_tls: None,
            query_limits: crate::params::QueryLimits::default(),
            // Off, unlike the binary's default: answers show the stored labels only
            // (as a Loki with `discover_service_name: []`, `discover_log_levels: false`).
            discovery: logsql_ast::Discovery::default(),
            parser_pushdown: true,
            work: crate::work::WorkLimits::default(),
        })
    }
}
