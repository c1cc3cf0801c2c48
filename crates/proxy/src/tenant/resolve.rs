//! From `X-Scope-OrgID` to a resolved [`Tenant`], and the layer that does it per request.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::StatusCode;

use super::map::TenantMap;
use super::{MAX_TENANT_LEN, Member, ORG_ID_HEADER, Tenant, VlTenant};
use crate::error::text_response;

/// Why a request's tenant is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TenantError {
    /// An id Loki itself refuses (dskit's wording): 400.
    #[error("{0}")]
    Invalid(String),
    /// A name that is not in the tenant map and not numeric (or numeric with
    /// `--tenant-numeric=false`): 401 (fail closed).
    #[error("unknown tenant ID '{0}': not in the tenant map")]
    Unknown(String),
    /// No `X-Scope-OrgID` with `--require-tenant-header`: 401 with the text
    /// of Loki's auth middleware (`auth_enabled: true`).
    #[error("no org id")]
    NoOrgId,
    /// More tenants than `--max-tenants-per-query`: 400. Each one is a
    /// VictoriaLogs call per backend call of the request; Loki has no such
    /// limit (its header size bounds the list), the text follows its limit errors.
    #[error("max tenants per query exceeded, tenants > max_tenants_per_query ({count} > {max})")]
    TooMany {
        /// Distinct tenants named.
        count: usize,
        /// The configured maximum.
        max: usize,
    },
}

impl TenantError {
    /// The status answered: 400 for malformed ids, 401 for unknown names and a missing header.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Invalid(_) | Self::TooMany { .. } => StatusCode::BAD_REQUEST,
            Self::Unknown(_) | Self::NoOrgId => StatusCode::UNAUTHORIZED,
        }
    }
}

impl IntoResponse for TenantError {
    fn into_response(self) -> Response {
        tracing::debug!(error = %self, "tenant refused");
        let text = match self {
            // Loki's middleware answers with Go's `http.Error`: one newline after the text.
            Self::NoOrgId => format!("{self}\n"),
            _ => self.to_string(),
        };
        text_response(self.status(), text)
    }
}

/// Checks one id as Loki (dskit) does: characters `[a-zA-Z0-9!-_.*'()]`, at
/// most 150 of them, not `.` or `..`. `:` is also allowed for `12:34`.
///
/// # Errors
/// dskit's error text.
pub fn check_id(id: &str) -> Result<(), String> {
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "!-_.*'():".contains(*c)))
    {
        return Err(format!(
            "tenant ID '{id}' contains unsupported character '{c}'"
        ));
    }
    if id.len() > MAX_TENANT_LEN {
        return Err(format!(
            "tenant ID is too long: max {MAX_TENANT_LEN} characters"
        ));
    }
    if id == "." || id == ".." {
        return Err("tenant ID is '.' or '..'".to_owned());
    }
    if id.is_empty() {
        return Err("no org id".to_owned());
    }
    Ok(())
}

/// `12` → `12:0`, `12:34` → `12:34`; anything else is not numeric.
fn numeric(id: &str) -> Option<VlTenant> {
    let (a, p) = id.split_once(':').unwrap_or((id, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(a) || !digits(p) {
        return None;
    }
    Some(VlTenant {
        account_id: a.parse().ok()?,
        project_id: p.parse().ok()?,
    })
}

/// Resolves tenant ids; cheap to clone.
#[derive(Debug, Clone)]
pub struct Resolver {
    map: Option<TenantMap>,
    default: String,
    numeric: bool,
    require_header: bool,
    /// Most tenants one request may name (0: no limit).
    max_members: usize,
}

impl Resolver {
    /// A resolver over an optional map; `default` is used when no header is
    /// sent. Numeric ids pass through and the header is optional (see
    /// [`Self::numeric`] and [`Self::require_header`]).
    pub fn new(map: Option<TenantMap>, default: String) -> Self {
        Self {
            map,
            default,
            numeric: true,
            require_header: false,
            max_members: 0,
        }
    }

    /// Refuses requests naming more than `max` distinct tenants (0: no limit).
    #[must_use]
    pub fn with_max_members(mut self, max: usize) -> Self {
        self.max_members = max;
        self
    }

    /// [`TenantError::TooMany`] past `--max-tenants-per-query`.
    fn capped(&self, t: Tenant) -> Result<Tenant, TenantError> {
        let count = t.members().len();
        if self.max_members > 0 && count > self.max_members {
            return Err(TenantError::TooMany {
                count,
                max: self.max_members,
            });
        }
        Ok(t)
    }

    /// Whether numeric ids not in the map (`12`, `12:34`) pass through
    /// (`--tenant-numeric`). Off, only map names reach VictoriaLogs, so a
    /// deployment that hands out names cannot be bypassed with a number.
    #[must_use]
    pub fn numeric(mut self, on: bool) -> Self {
        self.numeric = on;
        self
    }

    /// Whether a request without `X-Scope-OrgID` is refused with Loki's
    /// 401 `no org id` (`--require-tenant-header`) instead of using the
    /// default tenant. Routes that hold no tenant data are exempt ([`tenant_scoped`]).
    #[must_use]
    pub fn require_header(mut self, on: bool) -> Self {
        self.require_header = on;
        self
    }

    /// Maps one id: the map first (names may alias numbers), then numeric pass-through.
    fn one(&self, id: &str, numeric_ok: bool) -> Result<VlTenant, TenantError> {
        check_id(id).map_err(TenantError::Invalid)?;
        if let Some(vl) = self.map.as_ref().and_then(|m| m.get(id)) {
            return Ok(vl);
        }
        numeric(id)
            .filter(|_| numeric_ok)
            .ok_or_else(|| TenantError::Unknown(id.to_owned()))
    }

    /// The `--default-tenant`, set by the operator: numeric always allowed.
    fn default_tenant(&self) -> Result<Tenant, TenantError> {
        let vl = self.one(&self.default, true)?;
        Ok(Tenant::resolved(vec![Member {
            name: self.default.clone(),
            vl,
        }]))
    }

    /// Resolves the raw header value (`None` when absent or blank).
    ///
    /// Several ids (`a|b`) are sorted and de-duplicated as Loki does, then
    /// de-duplicated by VictoriaLogs tenant ([`Tenant::resolved`]).
    ///
    /// # Errors
    /// [`TenantError`] for malformed ids, unknown names and, with
    /// [`Self::require_header`], a missing header.
    pub fn resolve_header(&self, raw: Option<&str>) -> Result<Tenant, TenantError> {
        let raw = raw.map(str::trim).filter(|v| !v.is_empty());
        let Some(raw) = raw else {
            if self.require_header {
                return Err(TenantError::NoOrgId);
            }
            return self.default_tenant();
        };
        let mut ids: Vec<&str> = raw.split('|').collect();
        ids.sort_unstable();
        ids.dedup();
        let members = ids
            .into_iter()
            .map(|id| {
                Ok(Member {
                    name: id.to_owned(),
                    vl: self.one(id, self.numeric)?,
                })
            })
            .collect::<Result<Vec<_>, TenantError>>()?;
        self.capped(Tenant::resolved(members))
    }

    /// Checks the default tenant once at startup.
    ///
    /// # Errors
    /// [`TenantError`] when `--default-tenant` is malformed or unknown.
    pub fn check_default(&self) -> Result<(), TenantError> {
        self.default_tenant().map(|_| ())
    }
}

/// Whether `path` serves tenant data. Loki's auth middleware wraps the API
/// routes, not `/ready`, `/metrics`, build info or `format_query`; those
/// are never refused for their `X-Scope-OrgID` (a missing or unusable one
/// means the default tenant), so probes and scrapers need none.
pub fn tenant_scoped(path: &str) -> bool {
    path.strip_prefix("/loki/api/v1/")
        .is_some_and(|rest| !matches!(rest, "status/buildinfo" | "format_query"))
}

/// The tenant layer: resolves `X-Scope-OrgID`, stores the [`Tenant`] in the
/// request extensions (the edge builds the request context from it).
pub async fn resolve(State(r): State<Resolver>, mut req: Request, next: Next) -> Response {
    let raw = req
        .headers()
        .get(ORG_ID_HEADER)
        .map(|v| v.to_str().map_err(|_| ()));
    let tenant = match raw {
        _ if !tenant_scoped(req.uri().path()) => match raw {
            Some(Ok(v)) => r.resolve_header(Some(v)),
            _ => r.default_tenant(),
        }
        .or_else(|_| r.default_tenant()),
        Some(Err(())) => {
            return TenantError::Invalid("tenant ID contains unsupported characters".to_owned())
                .into_response();
        }
        Some(Ok(v)) => r.resolve_header(Some(v)),
        None => r.resolve_header(None),
    };
    let tenant = match tenant {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    req.extensions_mut().insert(tenant.clone());
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolver() -> Resolver {
        // One directory per call: tests run in parallel and each removes its own.
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("lokivl-resolve-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.yaml");
        std::fs::write(
            &path,
            "team-a: {account_id: 5, project_id: 6}\n\"7\": {account_id: 70}\n",
        )
        .unwrap();
        let map = TenantMap::load(&path, std::time::Duration::from_secs(60)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        Resolver::new(Some(map), "0:0".to_owned())
    }

    fn vls(t: &Tenant) -> Vec<(String, String)> {
        t.members()
            .iter()
            .map(|m| (m.name.clone(), m.vl.to_string()))
            .collect()
    }

    #[test]
    fn names_numbers_default() {
        let r = resolver();
        assert_eq!(
            vls(&r.resolve_header(Some("team-a")).unwrap()),
            [("team-a".into(), "5:6".into())]
        );
        assert_eq!(
            vls(&r.resolve_header(Some("12")).unwrap()),
            [("12".into(), "12:0".into())]
        );
        assert_eq!(
            vls(&r.resolve_header(Some("12:34")).unwrap()),
            [("12:34".into(), "12:34".into())]
        );
        // The map wins over the numeric reading.
        assert_eq!(vls(&r.resolve_header(Some("7")).unwrap())[0].1, "70:0");
        assert_eq!(r.resolve_header(None).unwrap().as_str(), "0:0");
        assert_eq!(r.resolve_header(Some("  ")).unwrap().as_str(), "0:0");
    }

    #[test]
    fn several_are_sorted_and_deduplicated() {
        let r = resolver();
        let t = r.resolve_header(Some("team-a|3|team-a")).unwrap();
        assert_eq!(
            vls(&t),
            [("3".into(), "3:0".into()), ("team-a".into(), "5:6".into())]
        );
        assert_eq!(t.as_str(), "3:0|5:6");
        assert!(t.is_multi());
    }

    #[test]
    fn several_names_of_one_tenant_are_one_member() {
        let r = resolver();
        let t = r.resolve_header(Some("1:0|1")).unwrap();
        assert_eq!(vls(&t), [("1".into(), "1:0".into())]);
        assert!(!t.is_multi());
        // `5:6` and `team-a` are the same VictoriaLogs tenant: `5:6` sorts first.
        let t = r.resolve_header(Some("team-a|3|5:6")).unwrap();
        assert_eq!(
            vls(&t),
            [("3".into(), "3:0".into()), ("5:6".into(), "5:6".into())]
        );
    }

    #[test]
    fn numeric_ids_can_be_refused() {
        let r = resolver().numeric(false);
        let e = r.resolve_header(Some("12")).unwrap_err();
        assert_eq!(e.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            e.to_string(),
            "unknown tenant ID '12': not in the tenant map"
        );
        assert!(r.resolve_header(Some("team-a|12:34")).is_err());
        // Map names still resolve, numeric-looking ones too ("7" is in the map).
        assert_eq!(vls(&r.resolve_header(Some("7")).unwrap())[0].1, "70:0");
        assert_eq!(vls(&r.resolve_header(Some("team-a")).unwrap())[0].1, "5:6");
        // The operator's default tenant is not a client's claim: it stays usable.
        assert_eq!(r.resolve_header(None).unwrap().as_str(), "0:0");
        assert!(r.check_default().is_ok());
    }

    #[test]
    fn a_missing_header_can_be_refused() {
        let r = resolver().require_header(true);
        for raw in [None, Some(""), Some("  ")] {
            let e = r.resolve_header(raw).unwrap_err();
            assert_eq!(e, TenantError::NoOrgId);
            assert_eq!(e.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(e.to_string(), "no org id");
        }
        assert_eq!(r.resolve_header(Some("12")).unwrap().as_str(), "12:0");
        assert!(r.check_default().is_ok());
    }

    #[test]
    fn only_api_routes_are_tenant_scoped() {
        for p in [
            "/loki/api/v1/query_range",
            "/loki/api/v1/push",
            "/loki/api/v1/tail",
            "/loki/api/v1/label/app/values",
            "/loki/api/v1/drilldown-limits",
        ] {
            assert!(tenant_scoped(p), "{p}");
        }
        for p in [
            "/ready",
            "/metrics",
            "/health",
            "/loki/api/v1/status/buildinfo",
            "/loki/api/v1/format_query",
            "/nope",
        ] {
            assert!(!tenant_scoped(p), "{p}");
        }
    }

    #[test]
    fn unknown_and_malformed_are_refused() {
        let r = resolver();
        let e = r.resolve_header(Some("team-z")).unwrap_err();
        assert_eq!(e.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            e.to_string(),
            "unknown tenant ID 'team-z': not in the tenant map"
        );
        // One unknown member refuses the whole request.
        assert!(r.resolve_header(Some("team-a|team-z")).is_err());
        let e = r.resolve_header(Some("a b")).unwrap_err();
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            e.to_string(),
            "tenant ID 'a b' contains unsupported character ' '"
        );
        assert!(r.resolve_header(Some("a||b")).is_err());
        assert!(r.resolve_header(Some("..")).is_err());
        assert!(r.resolve_header(Some("1:2:3")).is_err());
        assert!(r.resolve_header(Some("99999999999")).is_err());
        let r = Resolver::new(None, "nobody".to_owned());
        assert!(r.check_default().is_err());
    }

    #[test]
    fn too_many_tenants_are_refused() {
        let r = resolver().with_max_members(3);
        assert_eq!(
            r.resolve_header(Some("1|2|3|3")).unwrap().members().len(),
            3
        );
        let e = r.resolve_header(Some("1|2|3|4")).unwrap_err();
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            e.to_string(),
            "max tenants per query exceeded, tenants > max_tenants_per_query (4 > 3)"
        );
        let ids: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
        assert!(resolver().resolve_header(Some(&ids.join("|"))).is_ok());
    }
}
