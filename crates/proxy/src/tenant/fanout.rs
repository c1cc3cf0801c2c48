//! Multi-tenant calls (`X-Scope-OrgID: a|b`): one VictoriaLogs call per
//! tenant, answers merged as typed rows and values, every result labelled
//! `__tenant_id__` as Loki's multi-tenant querier does.
//!
//! Supported: log entries (`/select/logsql/query`, so log queries and the
//! metric queries lokivl evaluates from raw entries: [`Backend::send_rows`]),
//! stream and field names, stream and field values, and streams (series:
//! [`Backend::send_values`]). Calls whose answers cannot be merged without
//! re-aggregating (VictoriaLogs stats and hits) are refused.
//! `__tenant_id__` matchers in a log query's stream filter pick the tenants
//! and are removed before the calls ([`narrow`]).
//!
//! Each member's answer is decoded once ([`merge`]); nothing merged is
//! printed as VictoriaLogs JSON to be parsed again.

pub mod merge;
pub mod narrow;

use engine::ndjson::Body;

use super::{Member, TENANT_LABEL, Tenant};
use crate::backend::{Backend, BackendError, Endpoint, Hit, Request, values};
use crate::context::RequestContext;

impl Backend {
    /// Sends a `/select/logsql/query` call for the request's tenant: one
    /// tenant's NDJSON as received, or several tenants' rows merged
    /// ([`merge::rows`]).
    ///
    /// It lives here, above [`Backend::send_one`], so that the client knows
    /// nothing of fan-out.
    ///
    /// # Errors
    /// [`BackendError`] on connection failure, deadline, non-2xx status or a
    /// broken body (a member's broken answer names the tenant);
    /// [`BackendError::Unsupported`] over several tenants for another endpoint.
    pub async fn send_rows(
        &self,
        ctx: &RequestContext,
        req: &Request,
    ) -> Result<Body, BackendError> {
        if let Some(one) = ctx.single_tenant() {
            return self.send_ndjson(one, req).await;
        }
        let tenant = multi(ctx)?;
        if req.endpoint != Endpoint::Query {
            return Err(refusal(tenant, req));
        }
        // `__tenant_id__` matchers pick the tenants, as in Loki's SelectLogs
        // and SelectSamples, and are removed before each tenant's call.
        let narrowed = narrow::narrow(&req.query, tenant.members())?;
        let rewritten = narrowed.query.map(|query| Request {
            query,
            ..req.clone()
        });
        let req = rewritten.as_ref().unwrap_or(req);
        let mut answers = call_members(self, req, narrowed.members, Backend::send_one).await?;
        Ok(Body::Rows(merge::rows(&mut answers, req.take)?))
    }

    /// Sends a names or values call (`field_names`, `field_values`,
    /// `stream_field_names`, `stream_field_values`, `streams`) for the
    /// request's tenant and returns the names or values with their hits:
    /// one tenant's answer read once, or several tenants' merged (names
    /// and values summed in value order, with `__tenant_id__` among the
    /// names; streams labelled with their tenant, in member order).
    ///
    /// # Errors
    /// As [`Backend::send_rows`]; [`BackendError::Body`] for an answer that
    /// is not a values answer.
    pub async fn send_values(
        &self,
        ctx: &RequestContext,
        req: &Request,
    ) -> Result<Vec<Hit>, BackendError> {
        if let Some(one) = ctx.single_tenant() {
            return values::parse(&self.send_one(one, req).await?);
        }
        let tenant = multi(ctx)?;
        let members = tenant.members();
        let is_values = matches!(
            req.endpoint,
            Endpoint::StreamFieldValues | Endpoint::FieldValues
        );
        if is_values && req.field.as_deref() == Some(TENANT_LABEL) {
            return Ok(members
                .iter()
                .map(|m| Hit {
                    value: m.name.clone(),
                    hits: 1,
                })
                .collect());
        }
        let members: Vec<&Member> = members.iter().collect();
        let answers = match req.endpoint {
            Endpoint::StreamFieldNames
            | Endpoint::FieldNames
            | Endpoint::Streams
            | Endpoint::StreamFieldValues
            | Endpoint::FieldValues => call_members(self, req, members, send_values_one).await?,
            _ => return Err(refusal(tenant, req)),
        };
        Ok(match req.endpoint {
            Endpoint::StreamFieldNames | Endpoint::FieldNames => merge::names(answers),
            Endpoint::Streams => merge::streams(answers),
            _ => merge::into_hits(merge::values(answers)),
        })
    }
}

/// One tenant's values answer, read once.
async fn send_values_one(
    backend: &Backend,
    tenant: super::VlTenant,
    req: &Request,
) -> Result<Vec<Hit>, BackendError> {
    values::parse(&backend.send_one(tenant, req).await?)
}

/// The request's tenants when there are several.
///
/// # Errors
/// An unresolved tenant (a defect) is refused rather than sent to
/// VictoriaLogs' default tenant.
fn multi(ctx: &RequestContext) -> Result<&Tenant, BackendError> {
    let tenant = ctx.tenant();
    if tenant.is_multi() {
        Ok(tenant)
    } else {
        Err(BackendError::Request(
            "internal error: a VictoriaLogs call was made without the request's tenant".into(),
        ))
    }
}

/// Why `req` cannot run over the several tenants of `tenant`.
fn refusal(tenant: &Tenant, req: &Request) -> BackendError {
    BackendError::Unsupported(format!(
        "queries over several tenants (X-Scope-OrgID {}) are supported for log queries, \
         labels, label values and series; this one needs VictoriaLogs `{}` per tenant",
        names(tenant.members()),
        req.endpoint.name()
    ))
}

/// One call per member, `backend.fanout_parallelism()` at a time, answers
/// in member order (so merging is the same as calling them one by one).
///
/// The calls run in this task, each for its member's VictoriaLogs tenant; the
/// backend gate still bounds all calls of all requests together.
///
/// # Errors
/// The error of the first member (in member order) whose call fails; the
/// calls still running are dropped, which cancels them.
async fn call_members<'m, 'b, T, F, Fut>(
    backend: &'b Backend,
    req: &'b Request,
    members: Vec<&'m Member>,
    call: F,
) -> Result<Vec<(&'m Member, T)>, BackendError>
where
    F: Fn(&'b Backend, super::VlTenant, &'b Request) -> Fut,
    Fut: Future<Output = Result<T, BackendError>>,
{
    use futures_util::{StreamExt as _, TryStreamExt as _};
    let calls: Vec<_> = members
        .into_iter()
        .map(|m| {
            let answer = call(backend, m.vl, req);
            async move { Ok::<_, BackendError>((m, answer.await?)) }
        })
        .collect();
    futures_util::stream::iter(calls)
        .buffered(backend.fanout_parallelism())
        .try_collect()
        .await
}

fn names(members: &[Member]) -> String {
    members
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join("|")
}
