//! Admission: size limits, the global in-flight cap, per-tenant rate limits and `query_timeout`.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, header};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;
use crate::limits::Limits;
use crate::limits::rate::RateLimiter;
use crate::telemetry::{GaugeUnit, Metrics};
use crate::tenant::Tenant;

/// Shared state of the admission layer; cheap to clone.
#[derive(Debug, Clone)]
pub struct Guard {
    limits: Arc<Limits>,
    inflight: Option<Arc<Semaphore>>,
    rate: RateLimiter,
    metrics: Metrics,
}

impl Guard {
    /// Builds the guard for `limits`.
    pub fn new(limits: Limits, metrics: Metrics) -> Self {
        let inflight =
            (limits.max_inflight > 0).then(|| Arc::new(Semaphore::new(limits.max_inflight)));
        Self {
            rate: RateLimiter::new(limits.tenant_rate, limits.tenant_burst),
            limits: Arc::new(limits),
            inflight,
            metrics,
        }
    }

    fn refuse(&self, reason: &str, e: ApiError) -> Response {
        self.metrics.reject(reason);
        e.into_response()
    }
}

/// Size of the request head as sent: names, values and the `": \r\n"` around them.
fn header_bytes(headers: &HeaderMap) -> usize {
    headers
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum()
}

/// A request let in: it holds its in-flight slot until dropped.
pub(crate) struct Admitted {
    _slot: Option<OwnedSemaphorePermit>,
}

/// Checks the limits in cheap-first order (URL, head, declared body, the
/// in-flight cap, the tenant's rate) and answers the refusal, counted, or
/// lets the request in (the refusal is boxed: it is the rare path). Shared by [`protect`] and the cache-hit front
/// ([`super::hit`]), so hits are limited like every other request.
pub(crate) fn admit(
    g: &Guard,
    req: &http::request::Parts,
    tenant: &str,
) -> Result<Admitted, Box<Response>> {
    let l = &g.limits;
    let url_len = req.uri.path_and_query().map_or(0, |pq| pq.as_str().len());
    if url_len > l.max_url_bytes {
        return Err(Box::new(g.refuse(
            "url",
            ApiError::UriTooLong {
                len: url_len,
                limit: l.max_url_bytes,
            },
        )));
    }
    let head = header_bytes(&req.headers);
    if head > l.max_header_bytes {
        return Err(Box::new(g.refuse(
            "headers",
            ApiError::HeadersTooLarge {
                len: head,
                limit: l.max_header_bytes,
            },
        )));
    }
    let declared = req
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > l.max_body_bytes as u64) {
        return Err(Box::new(g.refuse(
            "body",
            ApiError::PayloadTooLarge {
                limit: l.max_body_bytes,
            },
        )));
    }
    let slot = match &g.inflight {
        Some(s) => match s.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) => {
                return Err(Box::new(g.refuse(
                    "inflight",
                    ApiError::TooManyRequests {
                        retry_after: Duration::from_secs(1),
                    },
                )));
            }
        },
        None => None,
    };
    if let Err(wait) = g.rate.check(tenant) {
        return Err(Box::new(
            g.refuse("rate", ApiError::TooManyRequests { retry_after: wait }),
        ));
    }
    Ok(Admitted { _slot: slot })
}

/// Admits the request ([`admit`]), then runs the handler under `query_timeout`.
pub async fn protect(State(g): State<Guard>, req: Request, next: Next) -> Response {
    let tenant = req
        .extensions()
        .get::<Tenant>()
        .cloned()
        .unwrap_or_else(|| Tenant::from_headers(req.headers()));
    let (parts, body) = req.into_parts();
    let _admitted = match admit(&g, &parts, tenant.as_str()) {
        Ok(a) => a,
        Err(refused) => return *refused,
    };
    let mut req = Request::from_parts(parts, body);
    let l = &g.limits;
    // Work the handler hands to other tasks (the blocking pool, cache fills)
    // stops at the same instant this timeout fires.
    req.extensions_mut()
        .insert(crate::work::Deadline::after(l.query_timeout));
    let _gauge = GaugeUnit::hold(g.metrics.inflight());
    // Bodies beyond the limit without a Content-Length (chunked) are cut by the extractors' own limit.
    match tokio::time::timeout(l.query_timeout, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => g.refuse("timeout", ApiError::QueryTimeout(l.query_timeout)),
    }
}
