//! The cache-hit front: a response-cache hit answered before routing and the layers.
//!
//! Every `axum::middleware::from_fn` layer clones the whole service stack
//! below it for each request (and boxes it), so with seven layers a hit
//! spent most of its time cloning and dropping services it never called.
//! This front wraps the routed stack and, for a `GET` to a cached route,
//! does what the layers in front of the cache would do — tenant resolution,
//! the cache lookup, admission ([`super::protect::admit`]: size limits, the
//! in-flight cap, the tenant's rate limit), security headers, the access log
//! and metrics ([`super::observe::Access`]) — and answers the stored bytes.
//! Everything else, a miss, and any request whose tenant is refused go
//! through the routed stack unchanged, which then answers as before.
//!
//! Admission is checked after the lookup, so a miss does not spend a rate
//! token twice; a refused hit gets the same answer the stack would give.

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;
use http::request::Parts;
use tower::{Service, ServiceExt};

use super::headers;
use super::observe::Access;
use super::protect::{self, Guard};
use crate::response_cache::ResponseCache;
use crate::route::Route;
use crate::telemetry::Metrics;
use crate::tenant::{ORG_ID_HEADER, Resolver, Tenant};

/// What a hit needs: the cache and the state of the layers it stands in for.
#[derive(Debug)]
pub struct HitPath {
    /// The response cache the routed stack fills.
    pub cache: Arc<ResponseCache>,
    /// The same resolver as the stack's tenant layer.
    pub tenants: Resolver,
    /// The same admission state as the stack's `protect` layer.
    pub guard: Guard,
    /// The process metrics (access counts).
    pub metrics: Metrics,
}

/// The service in front of the routed stack; cloning is two reference counts.
#[derive(Debug, Clone)]
pub struct Front {
    inner: Router,
    hit: Arc<HitPath>,
}

impl Front {
    /// Puts `hit` in front of `inner`, the fully layered router.
    pub fn new(inner: Router, hit: HitPath) -> Self {
        Self {
            inner,
            hit: Arc::new(hit),
        }
    }
}

type BoxedAnswer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl Service<Request> for Front {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxedAnswer;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // `Router` is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let inner = self.inner.clone();
        let Some(route) = self
            .hit
            .cache
            .plain_get_route(req.method(), req.uri().path())
        else {
            return Box::pin(inner.oneshot(req));
        };
        let hit = self.hit.clone();
        Box::pin(async move {
            let started = Instant::now();
            // The body is not `Sync`: the lookup borrows only the head.
            let (mut parts, body) = req.into_parts();
            match hit.answer(route, &parts, started).await {
                Ok(resp) => Ok(resp),
                Err(id) => {
                    // Keep the id already made, so the access log has one id per request.
                    parts.extensions.insert(id);
                    inner.oneshot(Request::from_parts(parts, body)).await
                }
            }
        })
    }
}

impl HitPath {
    /// Answers a hit, or gives the request id back for the routed stack.
    async fn answer(
        &self,
        route: &'static Route,
        req: &Parts,
        started: Instant,
    ) -> Result<Response, super::observe::RequestId> {
        let access = Access::start(&self.metrics, req, Cow::Borrowed(route.path), started);
        let Some(tenant) = self.tenant(req) else {
            return Err(access.hand_over());
        };
        let Some(body) = self
            .cache
            .stored_get(&tenant.cache_key(), &req.uri, &req.headers)
            .await
        else {
            return Err(access.hand_over());
        };
        let mut resp = match protect::admit(&self.guard, req, tenant.as_str()) {
            Ok(_admitted) => self.cache.hit_answer(route.name, body),
            Err(refused) => *refused,
        };
        headers::add_missing(resp.headers_mut());
        access.finish(&mut resp);
        Ok(resp)
    }

    /// The resolved tenant, as the tenant layer resolves it; `None` when the
    /// layer would refuse it (it then answers the error itself).
    fn tenant(&self, req: &Parts) -> Option<Tenant> {
        let raw = match req.headers.get(ORG_ID_HEADER) {
            Some(v) => Some(v.to_str().ok()?),
            None => None,
        };
        self.tenants.resolve_header(raw).ok()
    }
}

#[cfg(test)]
mod tests {
    /// The template of the route a hit is logged under, as `MatchedPath` names it.
    fn route(path: &str) -> &'static str {
        crate::route::cached(path).map_or("unmatched", |r| r.path)
    }

    #[test]
    fn hit_routes_are_logged_under_the_router_templates() {
        assert_eq!(
            route("/loki/api/v1/query_range"),
            "/loki/api/v1/query_range"
        );
        assert_eq!(
            route("/loki/api/v1/detected_field/level/values"),
            "/loki/api/v1/detected_field/{name}/values"
        );
        assert_eq!(
            route("/loki/api/v1/index/volume"),
            "/loki/api/v1/index/volume"
        );
        assert_eq!(route("/nope"), "unmatched");
    }
}
