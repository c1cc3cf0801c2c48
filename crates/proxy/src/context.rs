//! The request context: everything that changes the answer to one request,
//! fixed once at the HTTP edge and handed explicitly to every stage.
//!
//! A value that changes answers must not be ambient. Before this type, the
//! tenant, the discovery settings and the query limits travelled in tokio
//! task-locals (and `max_query_series` in a process-wide atomic): a task
//! spawned for a window re-entered the tenant but silently fell back to the
//! defaults for the others. Now a plan, a window, a fan-out call and a
//! backend request all take a [`RequestContext`], and a spawned task gets it
//! by value, so there is nothing to forget.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use cache::CredentialFingerprint;
use http::{HeaderMap, HeaderValue, header};
use logsql_ast::Discovery;

use crate::params::QueryLimits;
use crate::tenant::{Member, Tenant, VlTenant};
use crate::work::Deadline;

/// The settings every request starts from (the flags), shared by the edge layer.
#[derive(Debug, Clone, Default)]
pub struct ContextSettings {
    /// `--discover-service-name`, `--discover-log-levels`.
    discovery: Arc<Discovery>,
    /// `discovery` as a short stable tag for cache keys.
    tag: Arc<str>,
    /// `--max-query-length` and the other query limits.
    limits: QueryLimits,
}

impl ContextSettings {
    /// Settings from the configured discovery and limits.
    pub fn new(discovery: Discovery, limits: QueryLimits) -> Self {
        Self {
            tag: Arc::from(discovery_tag(&discovery)),
            discovery: Arc::new(discovery),
            limits,
        }
    }

    /// The discovery settings requests start with.
    pub fn discovery(&self) -> &Discovery {
        &self.discovery
    }

    /// The query limits requests start with.
    pub fn limits(&self) -> QueryLimits {
        self.limits
    }

    /// The tenant part of a cache key for a request by `tenant_key`
    /// ([`Tenant::cache_key`]) under these settings, as
    /// [`RequestContext::cache_scope`] makes it: the response cache keys
    /// before the request context exists, and replicas sharing a cache tier
    /// with other discovery flags must not read each other's answers.
    pub fn cache_scope(&self, tenant_key: &str) -> String {
        scope(tenant_key, &self.tag)
    }
}

/// `tenant_key`, and `#tag` when discovery synthesizes labels.
fn scope(tenant_key: &str, tag: &str) -> String {
    if tag.is_empty() {
        tenant_key.to_owned()
    } else {
        format!("{tenant_key}#{tag}")
    }
}

/// A stable tag of `d` (the same in every process with the same flags, so a
/// cache shared by replicas stays right): empty when nothing is synthesized,
/// else `d:` and a 64-bit FNV-1a hash of the settings.
fn discovery_tag(d: &Discovery) -> String {
    if *d == Discovery::default() {
        return String::new();
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for l in &d.service_name_labels {
        eat(l.as_bytes());
        eat(b",");
    }
    eat(if d.log_levels { b"L1" } else { b"L0" });
    format!("d:{h:016x}")
}

/// One request's context; cheap to clone (one reference count).
#[derive(Debug, Clone)]
pub struct RequestContext(Arc<Inner>);

#[derive(Debug, Clone)]
struct Inner {
    tenant: Tenant,
    discovery: Arc<Discovery>,
    tag: Arc<str>,
    limits: QueryLimits,
    credentials: CredentialFingerprint,
    categorize: bool,
    deadline: Deadline,
}

impl RequestContext {
    /// The context of a request by `tenant` (resolved) with forwarded
    /// `credentials`, under `settings`.
    pub fn new(
        tenant: Tenant,
        credentials: CredentialFingerprint,
        settings: &ContextSettings,
    ) -> Self {
        Self(Arc::new(Inner {
            tenant,
            discovery: Arc::clone(&settings.discovery),
            tag: Arc::clone(&settings.tag),
            limits: settings.limits,
            credentials,
            categorize: false,
            deadline: Deadline::NONE,
        }))
    }

    /// The same context with the response encoding flags and the deadline
    /// of the request (set once, by the edge layer).
    pub fn with_request(self, categorize: bool, deadline: Deadline) -> Self {
        let inner = Arc::unwrap_or_clone(self.0);
        Self(Arc::new(Inner {
            categorize,
            deadline,
            ..inner
        }))
    }

    /// Whether the client asked for `categorize-labels` (Loki's
    /// `X-Loki-Response-Encoding-Flags`): 3-tuples in log answers.
    pub fn categorize_labels(&self) -> bool {
        self.0.categorize
    }

    /// When the request's work must stop (`--query-timeout`).
    pub fn deadline(&self) -> Deadline {
        self.0.deadline
    }

    /// The request's tenant(s), resolved.
    pub fn tenant(&self) -> &Tenant {
        &self.0.tenant
    }

    /// The labels lokivl synthesizes as Loki's ingest would have.
    pub fn discovery(&self) -> &Discovery {
        &self.0.discovery
    }

    /// Loki's query limits for this request.
    pub fn limits(&self) -> QueryLimits {
        self.0.limits
    }

    /// The fingerprint of the forwarded credentials (part of every cache key).
    pub fn credentials(&self) -> CredentialFingerprint {
        self.0.credentials
    }

    /// The tenant part of a cache key: the tenant's key
    /// ([`Tenant::cache_key`]) and, when discovery is on, its settings, which
    /// change answers.
    pub fn cache_scope(&self) -> String {
        scope(&self.0.tenant.cache_key(), &self.0.tag)
    }

    /// The single VictoriaLogs tenant of the request, if it names exactly one.
    pub fn single_tenant(&self) -> Option<VlTenant> {
        match self.0.tenant.members() {
            [one] => Some(one.vl),
            _ => None,
        }
    }

    /// The same request, narrowed to one `member` of a multi-tenant fan-out:
    /// same discovery, limits and credentials.
    pub fn for_member(&self, member: &Member) -> Self {
        Self(Arc::new(Inner {
            tenant: Tenant::resolved(vec![member.clone()]),
            ..(*self.0).clone()
        }))
    }

    /// A context with `discovery` instead of the request's (Drilldown
    /// helpers that must read stored labels only).
    pub fn with_discovery(&self, discovery: Discovery) -> Self {
        Self(Arc::new(Inner {
            tenant: self.0.tenant.clone(),
            tag: Arc::from(discovery_tag(&discovery)),
            discovery: Arc::new(discovery),
            ..(*self.0).clone()
        }))
    }

    /// A context for tests and tools: one VictoriaLogs tenant, Loki's default limits.
    pub fn for_tenant(vl: VlTenant, discovery: Discovery) -> Self {
        let tenant = Tenant::resolved(vec![Member {
            name: vl.to_string(),
            vl,
        }]);
        Self::new(
            tenant,
            CredentialFingerprint::none(),
            &ContextSettings::new(discovery, QueryLimits::default()),
        )
    }
}

/// Middleware: builds the request's [`RequestContext`] from the tenant the
/// `tenant::resolve` layer put in the extensions and puts it there too.
///
/// It runs inside the response cache, so a cache fill (which may run in
/// another task) carries it in the request it runs.
pub async fn layer(
    State(settings): State<ContextSettings>,
    mut req: Request,
    next: Next,
) -> Response {
    let tenant = req
        .extensions()
        .get::<Tenant>()
        .cloned()
        .unwrap_or_else(|| Tenant::from_headers(req.headers()));
    let credentials = credentials(req.headers());
    let categorize = wants_categorized(req.headers());
    let deadline = req
        .extensions()
        .get::<Deadline>()
        .copied()
        .unwrap_or(Deadline::NONE);
    let ctx =
        RequestContext::new(tenant, credentials, &settings).with_request(categorize, deadline);
    req.extensions_mut().insert(ctx);
    next.run(req).await
}

/// A keyed hash of the credentials a request forwards upstream.
pub fn credentials(headers: &HeaderMap) -> CredentialFingerprint {
    let parts = [header::AUTHORIZATION, header::COOKIE]
        .into_iter()
        .flat_map(|name| headers.get_all(name).iter().map(HeaderValue::as_bytes));
    CredentialFingerprint::of(parts)
}

/// Loki's response-encoding flags header.
pub(crate) const ENCODING_FLAGS: &str = "x-loki-response-encoding-flags";

/// `X-Loki-Response-Encoding-Flags`: the first header value (Go's
/// `Header.Get`), split at `,`, one flag exactly `categorize-labels`. The
/// response cache keys by that same first value.
pub(crate) fn wants_categorized(headers: &HeaderMap) -> bool {
    headers
        .get(ENCODING_FLAGS)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().split(',').any(|flag| flag == "categorize-labels"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_keeps_the_request_settings() {
        let d = Discovery {
            service_name_labels: vec!["app".into()],
            log_levels: true,
        };
        let limits = QueryLimits {
            max_query_series: 7,
            ..QueryLimits::default()
        };
        let members = vec![
            Member {
                name: "a".into(),
                vl: VlTenant {
                    account_id: 1,
                    project_id: 0,
                },
            },
            Member {
                name: "b".into(),
                vl: VlTenant {
                    account_id: 2,
                    project_id: 0,
                },
            },
        ];
        let ctx = RequestContext::new(
            Tenant::resolved(members.clone()),
            CredentialFingerprint::none(),
            &ContextSettings::new(d.clone(), limits),
        );
        assert_eq!(ctx.single_tenant(), None);
        let one = ctx.for_member(&members[1]);
        assert_eq!(one.single_tenant(), Some(members[1].vl));
        assert_eq!(one.discovery(), &d);
        assert_eq!(one.limits(), limits);
        assert_eq!(one.cache_scope(), format!("2:0#{}", discovery_tag(&d)));
        let settings = ContextSettings::new(d.clone(), limits);
        assert_eq!(settings.cache_scope("2:0"), one.cache_scope());
        assert_eq!(ContextSettings::default().cache_scope("2:0"), "2:0");
    }

    #[test]
    fn the_tag_is_stable_and_tells_settings_apart() {
        assert_eq!(discovery_tag(&Discovery::default()), "");
        let on = engine::discovery::loki_defaults();
        assert_eq!(discovery_tag(&on), discovery_tag(&on.clone()));
        let mut off_levels = on.clone();
        off_levels.log_levels = false;
        assert_ne!(discovery_tag(&on), discovery_tag(&off_levels));
        assert!(discovery_tag(&on).starts_with("d:"));
    }
}
