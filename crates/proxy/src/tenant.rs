//! The one place a request's tenant is read.
//!
//! Loki takes the tenant from `X-Scope-OrgID` and, with auth disabled (the
//! usual single-binary set-up), uses `fake`. Mapping tenants to VictoriaLogs
//! `AccountID`/`ProjectID` (issue 7) hooks in here: the server layer stores
//! a [`Tenant`] in the request extensions for handlers and logs.

use http::HeaderMap;

/// The header Grafana and logcli send the tenant in.
pub const ORG_ID_HEADER: &str = "x-scope-orgid";
/// Loki's tenant when none is sent and auth is disabled.
pub const DEFAULT_TENANT: &str = "fake";
/// Longest tenant id kept, in characters (Loki's limit is 150).
const MAX_TENANT_LEN: usize = 150;

/// A request's tenant id, as the client sent it (`a|b` for several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant(pub String);

impl Tenant {
    /// Reads the tenant from the request headers.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        let raw = headers
            .get(ORG_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty());
        match raw {
            Some(v) if v.len() <= MAX_TENANT_LEN => Self(v.to_owned()),
            Some(v) => Self(v.chars().take(MAX_TENANT_LEN).collect()),
            None => Self(DEFAULT_TENANT.to_owned()),
        }
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

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
}
