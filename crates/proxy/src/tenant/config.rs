//! The tenancy flags (flattened into [`crate::config::Config`]).

use std::path::PathBuf;
use std::time::Duration;

use super::map::{MapError, TenantMap};
use super::resolve::Resolver;

/// `--tenant-map`, `--tenant-map-reload`, `--default-tenant`, `--tenant-numeric`,
/// `--require-tenant-header` and `--max-tenants-per-query`.
#[derive(Debug, Clone, clap::Args)]
pub struct TenantFlags {
    /// YAML/JSON file mapping `X-Scope-OrgID` names to `{account_id, project_id}`; reloaded when it changes.
    #[arg(long, env = "LOKIVL_TENANT_MAP")]
    pub tenant_map: Option<PathBuf>,
    /// How often the tenant map file is checked for changes.
    #[arg(long, env = "LOKIVL_TENANT_MAP_RELOAD", default_value = "5s", value_parser = humantime::parse_duration)]
    pub tenant_map_reload: Duration,
    /// Tenant used when no `X-Scope-OrgID` is sent: `account:project`, an account number, or a map name.
    #[arg(long, env = "LOKIVL_DEFAULT_TENANT", default_value = "0:0")]
    pub default_tenant: String,
    /// Let numeric `X-Scope-OrgID` values (`12`, `12:34`) not in the map through as VictoriaLogs tenants.
    #[arg(
        long,
        env = "LOKIVL_TENANT_NUMERIC",
        default_value_t = true,
        action = clap::ArgAction::Set
    )]
    pub tenant_numeric: bool,
    /// Refuse requests without `X-Scope-OrgID` with 401 `no org id` instead of using `--default-tenant`.
    #[arg(long, env = "LOKIVL_REQUIRE_TENANT_HEADER", default_value_t = false)]
    pub require_tenant_header: bool,
    /// Most tenants one `X-Scope-OrgID` may name (`a|b|…`); more get 400 (0 = unlimited).
    #[arg(long, env = "LOKIVL_MAX_TENANTS_PER_QUERY", default_value_t = 32)]
    pub max_tenants_per_query: usize,
}

/// Validated tenancy settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantSettings {
    /// The map file, if any.
    pub map: Option<PathBuf>,
    /// How often the map file is checked.
    pub reload: Duration,
    /// The tenant of requests without `X-Scope-OrgID`.
    pub default: String,
    /// Whether numeric ids not in the map pass through (`--tenant-numeric`).
    pub numeric: bool,
    /// Whether a missing `X-Scope-OrgID` is refused (`--require-tenant-header`).
    pub require_header: bool,
    /// Most tenants one request may name (0: no limit).
    pub max_members: usize,
}

impl Default for TenantSettings {
    fn default() -> Self {
        Self {
            map: None,
            reload: Duration::from_secs(5),
            default: "0:0".to_owned(),
            numeric: true,
            require_header: false,
            max_members: 32,
        }
    }
}

impl TenantFlags {
    /// Loads the map and checks the default tenant once.
    ///
    /// # Errors
    /// The reason, as text, when the map cannot be loaded or the default is unknown.
    pub fn validate(&self) -> Result<TenantSettings, String> {
        let s = TenantSettings {
            map: self.tenant_map.clone(),
            reload: self.tenant_map_reload,
            default: self.default_tenant.trim().to_owned(),
            numeric: self.tenant_numeric,
            require_header: self.require_tenant_header,
            max_members: self.max_tenants_per_query,
        };
        s.resolver().map_err(|e| e.to_string())?;
        Ok(s)
    }
}

/// Why the tenancy settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TenantConfigError {
    /// The map file is unreadable or malformed.
    #[error(transparent)]
    Map(#[from] MapError),
    /// `--default-tenant` is malformed or not in the map.
    #[error("--default-tenant: {0}")]
    Default(String),
}

impl TenantSettings {
    /// Builds the request-path resolver (loads the map file).
    ///
    /// # Errors
    /// [`TenantConfigError`] for a bad map file or default tenant.
    pub fn resolver(&self) -> Result<Resolver, TenantConfigError> {
        let map = self
            .map
            .as_deref()
            .map(|p| TenantMap::load(p, self.reload))
            .transpose()?;
        let r = Resolver::new(map, self.default.clone())
            .numeric(self.numeric)
            .require_header(self.require_header)
            .with_max_members(self.max_members);
        r.check_default()
            .map_err(|e| TenantConfigError::Default(e.to_string()))?;
        Ok(r)
    }
}
