//! Multi-tenancy: `X-Scope-OrgID` to VictoriaLogs `AccountID`/`ProjectID`.
//!
//! Loki takes the tenant from `X-Scope-OrgID` (`a|b` for several). lokivl
//! maps each id to a VictoriaLogs tenant: names through a map file
//! ([`map`], reloaded when it changes), numeric ids (`12`, `12:34`) as they
//! are, and refuses unknown names (fail closed). No header means
//! `--default-tenant`. The [`resolve`] layer does this once per request,
//! puts the resolved [`Tenant`] in the request extensions (for the rate
//! limiter, the response cache and the request context). The
//! [`crate::context::RequestContext`] carries it from there: every call to
//! VictoriaLogs takes the context and sets the tenant headers
//! ([`set_headers`]); several tenants fan out ([`fanout`]).

pub mod config;
pub mod fanout;
pub mod map;
pub mod resolve;

use std::sync::Arc;

use http::{HeaderMap, HeaderValue};

pub use self::config::{TenantFlags, TenantSettings};
pub use self::resolve::{Resolver, TenantError, resolve};

/// The header Grafana and logcli send the tenant in.
pub const ORG_ID_HEADER: &str = "x-scope-orgid";
/// Loki's tenant when none is sent and auth is disabled (shown in access logs).
pub const DEFAULT_TENANT: &str = "fake";
/// The label Loki adds to results of multi-tenant queries.
pub const TENANT_LABEL: &str = "__tenant_id__";
/// VictoriaLogs' tenant headers.
pub const ACCOUNT_ID_HEADER: &str = "accountid";
/// See [`ACCOUNT_ID_HEADER`].
pub const PROJECT_ID_HEADER: &str = "projectid";
/// Longest tenant id kept, in characters (Loki's limit is 150).
const MAX_TENANT_LEN: usize = 150;

/// A VictoriaLogs tenant: the `AccountID`/`ProjectID` pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct VlTenant {
    /// `AccountID`.
    pub account_id: u32,
    /// `ProjectID`.
    pub project_id: u32,
}

impl std::fmt::Display for VlTenant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.account_id, self.project_id)
    }
}

/// One tenant of a request: the id as the client named it and where its data lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The id as sent (`team-a`, `12`); the `__tenant_id__` value.
    pub name: String,
    /// The VictoriaLogs tenant it maps to.
    pub vl: VlTenant,
}

/// A request's tenant(s).
///
/// Before resolution ([`Tenant::from_headers`]) it only holds the raw id for
/// logs; after the [`resolve`] layer it holds the mapped members and its
/// [`Tenant::as_str`] is the canonical key (`1:0`, `1:0|2:0`) used by the
/// rate limiter; the response cache keys by [`Tenant::cache_key`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    key: String,
    members: Arc<[Member]>,
}

impl Tenant {
    /// Reads the raw tenant id from the request headers (unresolved; for access logs).
    pub fn from_headers(headers: &HeaderMap) -> Self {
        let raw = headers
            .get(ORG_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty());
        let key = match raw {
            Some(v) if v.len() <= MAX_TENANT_LEN => v.to_owned(),
            Some(v) => v.chars().take(MAX_TENANT_LEN).collect(),
            None => DEFAULT_TENANT.to_owned(),
        };
        Self {
            key,
            members: Arc::from(Vec::new()),
        }
    }

    /// A resolved tenant from `members` sorted by name (as Loki sorts
    /// `a|b`). A member naming a VictoriaLogs tenant already listed is
    /// dropped, the first name kept: `1|1:0`, or two map names for one
    /// tenant, are one tenant, queried once and answered without
    /// `__tenant_id__`, like Loki's `a|a`.
    pub fn resolved(mut members: Vec<Member>) -> Self {
        let mut seen: Vec<VlTenant> = Vec::with_capacity(members.len());
        members.retain(|m| {
            let new = !seen.contains(&m.vl);
            if new {
                seen.push(m.vl);
            }
            new
        });
        seen.sort_unstable();
        let mut key = String::with_capacity(seen.len() * 8);
        for (i, vl) in seen.iter().enumerate() {
            if i > 0 {
                key.push('|');
            }
            key.push_str(&vl.to_string());
        }
        Self {
            key,
            members: Arc::from(members),
        }
    }

    /// The id: raw before resolution, the canonical VictoriaLogs key after.
    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// The tenant part of a response-cache key. One tenant: its VictoriaLogs
    /// key (names of the same tenant share answers). Several: each member's
    /// name and tenant in Loki's order, since answers carry the names as
    /// `__tenant_id__` and `__tenant_id__` matchers select by name.
    pub fn cache_key(&self) -> std::borrow::Cow<'_, str> {
        use std::fmt::Write as _;
        if self.members.len() <= 1 {
            return std::borrow::Cow::Borrowed(&self.key);
        }
        let mut out = String::with_capacity(self.members.len() * 24);
        for (i, m) in self.members.iter().enumerate() {
            if i > 0 {
                out.push('|');
            }
            let _ = write!(out, "{}={}", m.name, m.vl);
        }
        std::borrow::Cow::Owned(out)
    }

    /// The mapped tenants (empty before resolution).
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Whether the request names several tenants (`a|b`): results get `__tenant_id__`.
    pub fn is_multi(&self) -> bool {
        self.members.len() > 1
    }
}

/// Writes the two VictoriaLogs tenant headers.
pub fn set_headers(headers: &mut HeaderMap, vl: VlTenant) {
    let mut buf = itoa::Buffer::new();
    headers.insert(
        ACCOUNT_ID_HEADER,
        HeaderValue::from_str(buf.format(vl.account_id)).unwrap_or(HeaderValue::from_static("0")),
    );
    headers.insert(
        PROJECT_ID_HEADER,
        HeaderValue::from_str(buf.format(vl.project_id)).unwrap_or(HeaderValue::from_static("0")),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_or_fake() {
        let mut h = HeaderMap::new();
        assert_eq!(Tenant::from_headers(&h).as_str(), "fake");
        h.insert(ORG_ID_HEADER, HeaderValue::from_static(" team-a "));
        assert_eq!(Tenant::from_headers(&h).as_str(), "team-a");
        h.insert(
            ORG_ID_HEADER,
            HeaderValue::from_str(&"x".repeat(500)).unwrap(),
        );
        assert_eq!(Tenant::from_headers(&h).as_str().len(), 150);
    }

    #[test]
    fn resolved_key_is_canonical() {
        let m = |n: &str, a, p| Member {
            name: n.into(),
            vl: VlTenant {
                account_id: a,
                project_id: p,
            },
        };
        let t = Tenant::resolved(vec![m("b", 2, 0), m("a", 1, 5), m("c", 2, 0)]);
        assert_eq!(t.as_str(), "1:5|2:0");
        assert!(t.is_multi());
        assert!(!Tenant::resolved(vec![m("a", 1, 5)]).is_multi());
    }

    #[test]
    fn one_victorialogs_tenant_is_one_member() {
        let m = |n: &str, a, p| Member {
            name: n.into(),
            vl: VlTenant {
                account_id: a,
                project_id: p,
            },
        };
        // `1|1:0`: the same tenant twice is one tenant, named by the first name.
        let t = Tenant::resolved(vec![m("1", 1, 0), m("1:0", 1, 0)]);
        assert!(!t.is_multi());
        assert_eq!(t.members()[0].name, "1");
        assert_eq!(t.cache_key(), "1:0");
        let plain = Tenant::resolved(vec![m("1", 1, 0)]);
        assert_eq!(t.cache_key(), plain.cache_key());
        // Several tenants are keyed by name and tenant: the names are the
        // `__tenant_id__` values of the answer.
        let a = Tenant::resolved(vec![m("3", 3, 0), m("team-a", 5, 6), m("team-b", 5, 6)]);
        assert_eq!(a.as_str(), "3:0|5:6");
        assert_eq!(a.cache_key(), "3=3:0|team-a=5:6");
        let b = Tenant::resolved(vec![m("3", 3, 0), m("5:6", 5, 6)]);
        assert_eq!(b.as_str(), a.as_str());
        assert_ne!(b.cache_key(), a.cache_key());
    }
}
